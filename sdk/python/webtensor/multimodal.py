"""Multimodal models from Hugging Face folders: the library's tokenizers,
sentence encoders, CLIP, Whisper (with streaming), TimeSformer, the
Conformer speech encoder and SpeechT5 text-to-speech with its HiFi-GAN
vocoder (the Go package multimodal), the video front end and audio
resampling, all through the C ABI's wt_call (the targets tokenizer.*,
image_processor.*, video.*, audio.resample, sentence_encoder.*, clip.*,
whisper.*, whisper_stream.*, timesformer.*, conformer.* and speecht5.*
that docs/calls.md lists).

    import webtensor as wt
    enc = wt.multimodal.SentenceEncoder("all-MiniLM-L6-v2")
    emb = enc.encode(["A man is eating food.", "Someone eats."])   # (2, 384) Tensor

    enc = wt.multimodal.SentenceEncoder.from_zip(open("minilm.zip", "rb").read())  # a zip of the folder

    clip = wt.multimodal.CLIP("clip-folder")
    probs = clip.zero_shot(pixels, ["a photo of a cat", "a photo of a dog"])

    whisper = wt.multimodal.Whisper("whisper-folder")
    text = whisper.transcribe(waveform_16khz)
    stream = wt.multimodal.WhisperStream(whisper)          # 1 s chunks, LocalAgreement-2
    for u in stream.push(samples): print(u.committed_text, "|", u.tentative_text, u.elapsed_ms)
    final = stream.flush()

    tts = wt.multimodal.SpeechT5("speecht5_tts", vocoder="speecht5_hifigan")
    speech = tts.generate("Hello, my dog is cute.", speaker_embedding)   # speech.waveform

    idx = wt.multimodal.sample_frame_indices(8, 4, len(clip), seed=0)     # the docs' sampler
    proc = wt.multimodal.ImageProcessor("timesformer-folder")             # VideoMAEImageProcessor
    model = wt.multimodal.Timesformer("timesformer-folder")
    logits = model.logits(proc.preprocess_video(clip[idx]))              # clip: (frames, H, W, 3) uint8
    wave = wt.multimodal.resample(waveform_44khz, 44100, 16000)
    out = wt.multimodal.Conformer("conformer-folder").encode(wave)   # out.last_hidden_state

Every check, every number and every error is the library's; this module
only turns Python strings and arrays into a call's arguments and wraps what
comes back.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ._objects import Handle, Inputs, call, text_list
from ._tensor import Tensor


def _load_file(kind: str, source: Any, cls: str, file: str) -> int:
    """The handle kind.load gives for a file (or its folder) or the file's bytes."""
    if isinstance(source, (str, os.PathLike)):
        return call(f"{kind}.load", path=os.fsdecode(source))
    if isinstance(source, (bytes, bytearray, memoryview)):
        return call(f"{kind}.load", data=bytes(source))
    raise TypeError(f"{cls} takes a path or a {file}'s bytes, got {type(source).__name__}")


def _load_model(kind: str, path: str | os.PathLike, device: str | None) -> int:
    return call(f"{kind}.load", path=os.fsdecode(path), device=device)


def _from_zip(cls: type, data: bytes | bytearray | memoryview, device: str | None) -> Any:
    """A cls whose model is in a zip archive's bytes (its kind's load with data)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{cls.__name__}.from_zip takes the archive's bytes, got {type(data).__name__}")
    obj = cls.__new__(cls)
    Handle.__init__(obj, call(f"{cls._kind}.load", data=bytes(data), device=device))
    return obj


def _optional(h: int | None) -> Tensor | None:
    """A result's optional tensor: JSON null for none."""
    return Tensor._wrap(h) if h is not None else None


class Encoding(NamedTuple):
    """A batch's (texts, length) i64 tensors."""

    input_ids: Tensor
    token_type_ids: Tensor
    attention_mask: Tensor


class Tokenizer(Handle):
    """A tokenizer.json (WordPiece or byte-level BPE) as the tokenizers
    library reads it: Tokenizer(path) takes the file or its folder,
    Tokenizer(bytes) its contents."""

    _kind, _what = "tokenizer", "tokenizer"

    def __init__(self, source: str | os.PathLike | bytes | bytearray | memoryview | int):
        if isinstance(source, int):  # a handle the library made (Whisper.tokenizer)
            super().__init__(source)
        else:
            super().__init__(_load_file("tokenizer", source, "Tokenizer", "tokenizer.json"))

    @property
    def vocab_size(self) -> int:
        return call("tokenizer.vocab_size", self._live())

    def encode(self, texts: str | list[str], add_special_tokens: bool = True, pad_id: int | None = None,
               device: str | None = None) -> Encoding:
        """Tokenizes texts with the file's truncation and padding; pad_id pads
        the batch to its longest with that id instead (texts of different
        lengths need one or the other)."""
        out = call("tokenizer.encode", self._live(), texts=text_list(texts), add_special_tokens=add_special_tokens,
                   pad_id=pad_id, device=device)
        return Encoding(*(Tensor._wrap(out[k]) for k in Encoding._fields))

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        """The text of a sequence of ids (a list, a NumPy array or a 1-D Tensor)."""
        if isinstance(ids, Tensor):
            ids = ids.numpy()
        return call("tokenizer.decode", self._live(), ids=[int(i) for i in ids],
                    skip_special_tokens=skip_special_tokens)

    def batch_decode(self, ids: Any, skip_special_tokens: bool = False) -> list[str]:
        """decode for each row of a 2-D array or Tensor of ids."""
        with Inputs() as ins:
            return call("tokenizer.batch_decode", self._live(), ids=ins.handle(ids, "i64"),
                        skip_special_tokens=skip_special_tokens)


class ImageProcessor(Handle):
    """transformers' ViT, CLIP or VideoMAE image processor from a preprocessor_config.json
    (ImageProcessor(path) takes the file or its folder, ImageProcessor(bytes)
    its contents): Pillow's resampling, crop, rescale and normalise, bit for bit."""

    _kind, _what = "image_processor", "image processor"

    def __init__(self, source: str | os.PathLike | bytes | bytearray | memoryview):
        super().__init__(_load_file("image_processor", source, "ImageProcessor", "preprocessor_config.json"))

    def preprocess(self, images: Any, device: str | None = None) -> Tensor:
        """Pixel values (images, 3, H, W) f32 of one (height, width, 3) uint8 RGB
        image or a list of them (NumPy arrays, as PIL's np.asarray gives, or u8 Tensors)."""
        if isinstance(images, Tensor) or getattr(images, "ndim", None) == 3:
            images = [images]
        with Inputs() as ins:
            return Tensor._wrap(call("image_processor.preprocess", self._live(),
                                     images=[ins.handle(im, "u8") for im in images], device=device))

    def preprocess_video(self, videos: Any, device: str | None = None) -> Tensor:
        """Pixel values (videos, frames, 3, H, W) f32 of one video, a (frames, height,
        width, 3) uint8 RGB array or u8 Tensor (a decoded clip's layout), or a list
        of them, every frame processed on its own as VideoMAEImageProcessor does."""
        if isinstance(videos, Tensor) or getattr(videos, "ndim", None) == 4:
            videos = [videos]
        with Inputs() as ins:
            return Tensor._wrap(call("image_processor.preprocess_video", self._live(),
                                     videos=[ins.handle(v, "u8") for v in videos], device=device))


def sample_frame_indices(clip_len: int, frame_sample_rate: int, seg_len: int, seed: int = 0) -> list[int]:
    """The frame indices transformers' TimeSformer and VideoMAE docs sample from a
    clip of seg_len frames after np.random.seed(seed): clip_len indices over a
    window of clip_len * frame_sample_rate frames ending at numpy's randint."""
    return call("video.sample_frame_indices", clip_len=clip_len, frame_sample_rate=frame_sample_rate,
                seg_len=seg_len, seed=seed)


def uniform_frame_indices(total: int, num_frames: int) -> list[int]:
    """num_frames indices spread evenly over total frames, as transformers' video
    processors sample them."""
    return call("video.uniform_frame_indices", total=total, num_frames=num_frames)


class SentenceEncoder(Handle):
    """A sentence-transformers folder (modules.json: a BERT Transformer,
    Pooling and optionally Normalize), as all-MiniLM-L6-v2 ships."""

    _kind, _what = "sentence_encoder", "sentence encoder"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(_load_model("sentence_encoder", path, device))

    @classmethod
    def from_zip(cls, data: bytes | bytearray | memoryview, device: str | None = None) -> SentenceEncoder:
        """The model in a zip archive of such a folder (its files at the root,
        or in one top-level folder as `zip -r model.zip model` nests them),
        from the archive's bytes (sentence_encoder.load). A hostile or
        broken archive (paths leaving it, a zip bomb, truncation, a missing
        file) raises ValueError naming the entry."""
        return _from_zip(cls, data, device)

    @property
    def dim(self) -> int:
        """The length of one embedding."""
        return call("sentence_encoder.dim", self._live())

    def encode(self, sentences: str | list[str], batch_size: int = 32) -> Tensor:
        """The embeddings (len(sentences), dim), as sentence-transformers'
        encode gives them (unit-norm when the model normalises)."""
        return Tensor._wrap(call("sentence_encoder.encode", self._live(), texts=text_list(sentences),
                                 batch_size=batch_size))


class CLIP(Handle):
    """A CLIPModel folder (config.json, model.safetensors, tokenizer.json)."""

    _kind, _what = "clip", "clip model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(_load_model("clip", path, device))

    @classmethod
    def from_zip(cls, data: bytes | bytearray | memoryview, device: str | None = None) -> CLIP:
        """The model in a zip archive of such a folder, from its bytes
        (clip.load), as SentenceEncoder.from_zip reads one."""
        return _from_zip(cls, data, device)

    def zero_shot(self, pixels: Any, texts: list[str]) -> Tensor:
        """Each image's probabilities over texts, (images, len(texts)), from
        pixel values (images, 3, H, W) as CLIP's image processor makes them."""
        with Inputs() as ins:
            return Tensor._wrap(call("clip.zero_shot", self._live(), pixels=ins.handle(pixels, "f32"),
                                     texts=text_list(texts)))

    def text_features(self, texts: list[str]) -> Tensor:
        """The projected text embeddings (not normalised), as get_text_features."""
        return Tensor._wrap(call("clip.text_features", self._live(), texts=text_list(texts)))

    def image_features(self, pixels: Any) -> Tensor:
        """The projected image embeddings (not normalised), as get_image_features."""
        with Inputs() as ins:
            return Tensor._wrap(call("clip.image_features", self._live(), pixels=ins.handle(pixels, "f32")))


class VideoOutput(NamedTuple):
    """A TimeSformer forward: the logits (None without a classifier) and the
    last hidden state."""

    logits: Tensor | None
    last_hidden_state: Tensor


class Timesformer(Handle):
    """A TimesformerForVideoClassification or TimesformerModel folder
    (config.json, model.safetensors) that save_pretrained wrote."""

    _kind, _what = "timesformer", "timesformer model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(_load_model("timesformer", path, device))
        info: dict[str, Any] = call("timesformer.info", self._h)
        self.model: str = info["model"]
        self.attention_type: str = info["attention_type"]
        self.num_frames: int = info["num_frames"]
        self.image_size: int = info["image_size"]
        self.device: str = info["device"]
        self.labels: list[str] | None = info.get("labels")

    def _forward(self, pixels: Any, logits: bool, hidden: bool) -> dict[str, Any]:
        with Inputs() as ins:
            return call("timesformer.forward", self._live(), pixels=ins.handle(pixels, "f32"), logits=logits,
                        last_hidden_state=hidden)

    def forward(self, pixels: Any) -> VideoOutput:
        """Logits (B, labels) and last hidden state (B, 1 + patches * frames, hidden) of
        pixel values (B, frames, 3, H, W) as preprocess_video makes them (space_only:
        B * frames rows of both, as transformers gives them)."""
        # A model without a classifier has no logits to ask for: asking is an error.
        out = self._forward(pixels, self.labels is not None, True)
        return VideoOutput(_optional(out["logits"]), Tensor._wrap(out["last_hidden_state"]))

    def logits(self, pixels: Any) -> Tensor:
        """The classifier's logits (B, labels) of pixel values (B, frames, 3, H, W)."""
        return Tensor._wrap(self._forward(pixels, True, False)["logits"])

    def classify(self, pixels: Any) -> list[str]:
        """Each video's most likely label."""
        logits = self.logits(pixels)
        try:
            return [self.labels[int(i)] for i in logits.numpy().argmax(-1)]
        finally:
            logits.close()

    def __repr__(self) -> str:
        return f"multimodal.Timesformer({self.model}, {self.attention_type}, num_frames={self.num_frames}, " \
               f"image_size={self.image_size}, device={self.device!r})"


def _wave_list(waves: Any) -> tuple[list[Any], bool]:
    """waves as a list of waveforms, and whether one waveform was given (a
    Tensor, a 1-D array or a list of numbers) rather than a list of them."""
    if isinstance(waves, Tensor) or getattr(waves, "ndim", None) == 1 or \
            (isinstance(waves, (list, tuple)) and waves and isinstance(waves[0], (int, float))):
        return [waves], True
    return list(waves), False


class Whisper(Handle):
    """A WhisperForConditionalGeneration folder with its tokenizer.json (and
    preprocessor_config.json)."""

    _kind, _what = "whisper", "whisper model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(_load_model("whisper", path, device))
        self.tokenizer = Tokenizer(call("whisper.tokenizer", self._h))

    @property
    def sampling_rate(self) -> int:
        return call("whisper.sampling_rate", self._live())

    def _run(self, method: str, waves: list[Any], max_new_tokens: int, num_beams: int) -> Any:
        with Inputs() as ins:
            return call(f"whisper.{method}", self._live(), waves=[ins.handle(w, "f32") for w in waves],
                        max_new_tokens=max_new_tokens, num_beams=num_beams)

    def generate(self, waves: Any, max_new_tokens: int = 0, num_beams: int = 0) -> Tensor:
        """Token ids (len(waves), length) for one waveform or a list of them
        (1-D float arrays or Tensors at sampling_rate), padded with the pad
        token as transformers' generate pads them; 0 takes the generation
        config's value."""
        return Tensor._wrap(self._run("generate", _wave_list(waves)[0], max_new_tokens, num_beams))

    def transcribe(self, waves: Any, max_new_tokens: int = 0, num_beams: int = 0) -> str | list[str]:
        """The text of one waveform, or a list of texts for a list of them."""
        waves, one = _wave_list(waves)
        texts = self._run("transcribe", waves, max_new_tokens, num_beams)
        return texts[0] if one else texts

    def close(self) -> None:
        self.tokenizer.close()
        super().close()


class StreamUpdate(NamedTuple):
    """What one chunk of a WhisperStream (or its flush) gave."""

    chunk: int  # updates so far, this one included
    samples: int  # samples processed so far
    committed: list[int]  # every committed token
    tentative: list[int]  # the latest hypothesis after the committed tokens
    committed_text: str
    tentative_text: str
    elapsed_ms: float  # what the chunk took: features, encoder and decoder
    final: bool  # flush's update: everything is committed
    drafted: int = 0  # the previous hypothesis' tokens confirmed in one decoder call


class WhisperStream(Handle):
    """Streaming transcription on a Whisper model: audio pushed in any
    pieces is processed in chunks of chunk_samples (0: one second); after
    each, the tokens two consecutive hypotheses agree on are committed
    (LocalAgreement-2), the committed ones forced at the start of the next
    hypothesis. flush ends the stream and commits the rest. A window of
    window_samples (0: the model's, 30 s) that fills up is committed whole;
    trim_encoder encodes only the buffered audio (faster, not transformers'
    output); tokens_per_second, when positive, bounds each hypothesis at
    that many tokens per second of buffered audio (speech is about 3: a
    bound of 5 cuts only a hallucination loop). Each update's `drafted`
    counts the previous hypothesis' tokens the decoder confirmed in one
    call."""

    _kind, _what = "whisper_stream", "whisper stream"

    def __init__(self, whisper: Whisper, chunk_samples: int = 0, max_new_tokens: int = 0, window_samples: int = 0,
                 trim_encoder: bool = False, tokens_per_second: float = 0.0):
        super().__init__(call("whisper_stream.new", model=whisper._live(), chunk_samples=chunk_samples,
                              max_new_tokens=max_new_tokens, window_samples=window_samples,
                              trim_encoder=trim_encoder, tokens_per_second=float(tokens_per_second)))

    def _push(self, samples: Any, final: bool) -> list[StreamUpdate]:
        with Inputs() as ins:
            updates = call("whisper_stream.push", self._live(), samples=ins.optional(samples, "f32"), final=final)
        return [StreamUpdate(**u) for u in updates]

    def push(self, samples: Any) -> list[StreamUpdate]:
        """Adds samples (a 1-D float array or Tensor at the model's
        sampling rate): one update per chunk they complete."""
        return self._push(samples, False)

    def flush(self) -> StreamUpdate:
        """Processes what is left and ends the stream: the final update."""
        return self._push(None, True)[-1]


class SpeechOutput(NamedTuple):
    """SpeechT5.generate's result."""

    spectrogram: Tensor  # (texts, frames, mels) after the postnet, zero-padded to the longest
    lengths: list[int]  # each text's frames
    waveform: Tensor | None  # (texts, samples) from the vocoder; row i's own are lengths[i] * hop


class SpeechT5(Handle):
    """A SpeechT5ForTextToSpeech folder (config.json, model.safetensors and
    spm_char.model for text input) with, optionally, a SpeechT5HifiGan
    folder as its vocoder."""

    _kind, _what = "speecht5", "speecht5 model"

    def __init__(self, path: str | os.PathLike, vocoder: str | os.PathLike | None = None, device: str | None = None):
        super().__init__(call("speecht5.load", path=os.fsdecode(path),
                              vocoder=os.fsdecode(vocoder) if vocoder else None, device=device))

    @property
    def sampling_rate(self) -> int:
        """The vocoder's sampling rate."""
        return call("speecht5.sampling_rate", self._live())

    def tokenize(self, texts: str | list[str]) -> tuple[Tensor, Tensor]:
        """Token ids and attention mask (texts, length), as SpeechT5Tokenizer
        gives them with padding=True."""
        out = call("speecht5.tokenize", self._live(), texts=text_list(texts))
        return Tensor._wrap(out["input_ids"]), Tensor._wrap(out["attention_mask"])

    def generate(self, text: Any, speaker_embeddings: Any, *, attention_mask: Any = None, threshold: float = 0.5,
                 minlenratio: float = 0.0, maxlenratio: float = 20.0, prenet_dropout: bool = False, seed: int = 0,
                 prefix: Any = None, prefill_chunk: int = 0, vocode: bool = True) -> SpeechOutput:
        """transformers' generate_speech for a text, a list of texts or token
        ids (texts, length) with speaker embeddings (1 or texts,
        speaker_embedding_dim). prenet_dropout applies the prenet dropout
        transformers always applies (masks drawn from seed); off, the
        output is deterministic. prefix is mel frames (1 or texts, L, mels)
        the speech starts with, prefilled prefill_chunk steps at a time.
        vocode runs the vocoder when the model has one."""
        with Inputs() as ins:
            if isinstance(text, str) or (isinstance(text, (list, tuple)) and text and isinstance(text[0], str)):
                given = {"texts": text_list(text)}  # the library tokenizes them
            else:
                given = {"input_ids": ins.handle(text, "i64"), "attention_mask": ins.optional(attention_mask, "i64")}
            out = call("speecht5.generate", self._live(), **given,
                       speaker_embeddings=ins.handle(speaker_embeddings, "f32"), threshold=threshold,
                       minlenratio=minlenratio, maxlenratio=maxlenratio, prenet_dropout=prenet_dropout, seed=seed,
                       prefix=ins.optional(prefix, "f32"), prefill_chunk=prefill_chunk, vocode=vocode)
        return SpeechOutput(Tensor._wrap(out["spectrogram"]), out["lengths"], _optional(out["waveform"]))

    def vocode(self, spectrogram: Any) -> Tensor:
        """The vocoder's waveform of a spectrogram (B, frames, mels) or (frames, mels)."""
        with Inputs() as ins:
            return Tensor._wrap(call("speecht5.vocode", self._live(), spectrogram=ins.handle(spectrogram, "f32")))


class ConformerOutput(NamedTuple):
    """A Conformer encoding."""

    last_hidden_state: Tensor  # (waves, frames, hidden)
    frame_mask: Tensor | None  # (waves, frames) bool, each waveform's own frames; None unless asked for


class Conformer(Handle):
    """A Wav2Vec2ConformerModel folder (config.json, model.safetensors) with
    its preprocessor_config.json."""

    _kind, _what = "conformer", "conformer model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(_load_model("conformer", path, device))

    @property
    def sampling_rate(self) -> int:
        return call("conformer.sampling_rate", self._live())

    def encode(self, waves: Any, frame_mask: bool = False) -> ConformerOutput:
        """The last hidden state of one waveform or a list of them (1-D float
        arrays or Tensors at sampling_rate), padded to the longest, as
        transformers' model(**extractor(waves, padding=True)) gives it."""
        with Inputs() as ins:
            out = call("conformer.encode", self._live(), waves=[ins.handle(w, "f32") for w in _wave_list(waves)[0]],
                       frame_mask=frame_mask)
        return ConformerOutput(Tensor._wrap(out["last_hidden_state"]), _optional(out["frame_mask"]))


def resample(x: Any, from_hz: int, to_hz: int) -> Tensor:
    """x (..., time), a float array or Tensor, resampled from from_hz to to_hz
    on its device, as torchaudio.functional.resample does by default
    (Hann-windowed sinc, lowpass_filter_width 6, rolloff 0.99)."""
    with Inputs() as ins:
        return Tensor._wrap(call("audio.resample", x=ins.handle(x), from_hz=from_hz, to_hz=to_hz))
