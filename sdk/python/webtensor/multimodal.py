"""Multimodal models from Hugging Face folders: the library's tokenizers,
sentence encoders, CLIP, Whisper (with streaming), TimeSformer, the
Conformer speech encoder and SpeechT5 text-to-speech with its HiFi-GAN
vocoder (the Go package multimodal, through the C ABI's wt_tokenizer_*,
wt_sentence_encoder_*, wt_clip_*, wt_whisper_*, wt_whisper_stream_*,
wt_timesformer_*, wt_conformer_*, wt_speecht5_*), the video front end and
audio resampling.

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
only turns Python strings and arrays into the C arguments and wraps what
comes back.
"""

from __future__ import annotations

import ctypes as C
import json
import os
from typing import Any, NamedTuple

from . import _lib
from ._objects import Handle, Inputs, device_arg, load, new_tensor, texts_arg
from ._tensor import Tensor


def _load_zip(fn: str, cls: str, data: bytes | bytearray | memoryview, device: str | None) -> int:
    """The handle fn (a wt_*_load_zip) loads from a zip archive's bytes."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{cls}.from_zip takes the archive's bytes, got {type(data).__name__}")
    raw = bytes(data)
    h = C.c_int64()
    _lib.call(fn, raw, len(raw), device_arg(device), C.byref(h))
    return h.value


class Encoding(NamedTuple):
    """A batch's (texts, length) i64 tensors."""

    input_ids: Tensor
    token_type_ids: Tensor
    attention_mask: Tensor


class Tokenizer(Handle):
    """A tokenizer.json (WordPiece or byte-level BPE) as the tokenizers
    library reads it: Tokenizer(path) takes the file or its folder,
    Tokenizer(bytes) its contents."""

    _free, _what = "wt_tokenizer_free", "tokenizer"

    def __init__(self, source: str | os.PathLike | bytes | bytearray | memoryview | int):
        if isinstance(source, int):  # a handle the library made (Whisper.tokenizer)
            super().__init__(source)
        elif isinstance(source, (str, os.PathLike)):
            super().__init__(load("wt_tokenizer_load", source))
        elif isinstance(source, (bytes, bytearray, memoryview)):
            raw = bytes(source)
            h = C.c_int64()
            _lib.call("wt_tokenizer_load_bytes", raw, len(raw), C.byref(h))
            super().__init__(h.value)
        else:
            raise TypeError(f"Tokenizer takes a path or a tokenizer.json's bytes, got {type(source).__name__}")

    @property
    def vocab_size(self) -> int:
        n = C.c_int32()
        _lib.call("wt_tokenizer_vocab_size", self._live(), C.byref(n))
        return n.value

    def encode(self, texts: str | list[str], add_special_tokens: bool = True, pad_id: int | None = None,
               device: str | None = None) -> Encoding:
        """Tokenizes texts with the file's truncation and padding; pad_id pads
        the batch to its longest with that id instead (texts of different
        lengths need one or the other)."""
        arr, n = texts_arg(texts)
        ids, types, mask = C.c_int64(), C.c_int64(), C.c_int64()
        _lib.call("wt_tokenizer_encode", self._live(), arr, n, int(add_special_tokens),
                  -1 if pad_id is None else pad_id, device_arg(device), C.byref(ids), C.byref(types), C.byref(mask))
        return Encoding(Tensor._wrap(ids.value), Tensor._wrap(types.value), Tensor._wrap(mask.value))

    def decode(self, ids: Any, skip_special_tokens: bool = False) -> str:
        """The text of a sequence of ids (a list, a NumPy array or a 1-D Tensor)."""
        if isinstance(ids, Tensor):
            ids = ids.numpy()
        vals = [int(i) for i in ids]
        arr, h = _lib.i64_array(vals), self._live()
        needed = C.c_size_t(0)
        _lib.lib.wt_tokenizer_decode(h, arr, len(vals), int(skip_special_tokens), None, 0, C.byref(needed))
        buf = C.create_string_buffer(needed.value)
        _lib.call("wt_tokenizer_decode", h, arr, len(vals), int(skip_special_tokens), buf, needed.value,
                  C.byref(needed))
        # The text may hold NUL (a token can decode to one): its length is needed - 1, not strlen.
        return buf.raw[:needed.value - 1].decode()

    def batch_decode(self, ids: Any, skip_special_tokens: bool = False) -> list[str]:
        """decode for each row of a 2-D array or Tensor of ids."""
        if isinstance(ids, Tensor):
            ids = ids.numpy()
        return [self.decode(row, skip_special_tokens) for row in ids]


class ImageProcessor(Handle):
    """transformers' ViT, CLIP or VideoMAE image processor from a preprocessor_config.json
    (ImageProcessor(path) takes the file or its folder, ImageProcessor(bytes)
    its contents): Pillow's resampling, crop, rescale and normalise, bit for bit."""

    _free, _what = "wt_image_processor_free", "image processor"

    def __init__(self, source: str | os.PathLike | bytes | bytearray | memoryview):
        if isinstance(source, (str, os.PathLike)):
            super().__init__(load("wt_image_processor_load", source))
        elif isinstance(source, (bytes, bytearray, memoryview)):
            raw = bytes(source)
            h = C.c_int64()
            _lib.call("wt_image_processor_load_bytes", raw, len(raw), C.byref(h))
            super().__init__(h.value)
        else:
            raise TypeError("ImageProcessor takes a path or a preprocessor_config.json's bytes, "
                            f"got {type(source).__name__}")

    def preprocess(self, images: Any, device: str | None = None) -> Tensor:
        """Pixel values (images, 3, H, W) f32 of one (height, width, 3) uint8 RGB
        image or a list of them (NumPy arrays, as PIL's np.asarray gives, or u8 Tensors)."""
        if isinstance(images, Tensor) or getattr(images, "ndim", None) == 3:
            images = [images]
        with Inputs() as ins:
            hs = [ins.handle(im, "u8") for im in images]
            return new_tensor("wt_image_processor_preprocess", self._live(), _lib.i64_array(hs), len(hs),
                              device_arg(device))

    def preprocess_video(self, videos: Any, device: str | None = None) -> Tensor:
        """Pixel values (videos, frames, 3, H, W) f32 of one video, a (frames, height,
        width, 3) uint8 RGB array or u8 Tensor (a decoded clip's layout), or a list
        of them, every frame processed on its own as VideoMAEImageProcessor does."""
        if isinstance(videos, Tensor) or getattr(videos, "ndim", None) == 4:
            videos = [videos]
        with Inputs() as ins:
            hs = [ins.handle(v, "u8") for v in videos]
            return new_tensor("wt_image_processor_preprocess_video", self._live(), _lib.i64_array(hs), len(hs),
                              device_arg(device))


def _indices(t: Tensor) -> list[int]:
    try:
        return [int(i) for i in t.numpy()]
    finally:
        t.close()


def sample_frame_indices(clip_len: int, frame_sample_rate: int, seg_len: int, seed: int = 0) -> list[int]:
    """The frame indices transformers' TimeSformer and VideoMAE docs sample from a
    clip of seg_len frames after np.random.seed(seed): clip_len indices over a
    window of clip_len * frame_sample_rate frames ending at numpy's randint."""
    return _indices(new_tensor("wt_video_sample_frame_indices", clip_len, frame_sample_rate, seg_len, seed))


def uniform_frame_indices(total: int, num_frames: int) -> list[int]:
    """num_frames indices spread evenly over total frames, as transformers' video
    processors sample them."""
    return _indices(new_tensor("wt_video_uniform_frame_indices", total, num_frames))


class SentenceEncoder(Handle):
    """A sentence-transformers folder (modules.json: a BERT Transformer,
    Pooling and optionally Normalize), as all-MiniLM-L6-v2 ships."""

    _free, _what = "wt_sentence_encoder_free", "sentence encoder"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(load("wt_sentence_encoder_load", path, device_arg(device)))

    @classmethod
    def from_zip(cls, data: bytes | bytearray | memoryview, device: str | None = None) -> SentenceEncoder:
        """The model in a zip archive of such a folder (its files at the root,
        or in one top-level folder as `zip -r model.zip model` nests them),
        from the archive's bytes (wt_sentence_encoder_load_zip). A hostile or
        broken archive (paths leaving it, a zip bomb, truncation, a missing
        file) raises ValueError naming the entry."""
        enc = cls.__new__(cls)
        Handle.__init__(enc, _load_zip("wt_sentence_encoder_load_zip", "SentenceEncoder", data, device))
        return enc

    @property
    def dim(self) -> int:
        """The length of one embedding."""
        n = C.c_int32()
        _lib.call("wt_sentence_encoder_dim", self._live(), C.byref(n))
        return n.value

    def encode(self, sentences: str | list[str], batch_size: int = 32) -> Tensor:
        """The embeddings (len(sentences), dim), as sentence-transformers'
        encode gives them (unit-norm when the model normalises)."""
        arr, n = texts_arg(sentences)
        return new_tensor("wt_sentence_encoder_encode", self._live(), arr, n, batch_size)


class CLIP(Handle):
    """A CLIPModel folder (config.json, model.safetensors, tokenizer.json)."""

    _free, _what = "wt_clip_free", "clip model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(load("wt_clip_load", path, device_arg(device)))

    @classmethod
    def from_zip(cls, data: bytes | bytearray | memoryview, device: str | None = None) -> CLIP:
        """The model in a zip archive of such a folder, from its bytes
        (wt_clip_load_zip), as SentenceEncoder.from_zip reads one."""
        clip = cls.__new__(cls)
        Handle.__init__(clip, _load_zip("wt_clip_load_zip", "CLIP", data, device))
        return clip

    def zero_shot(self, pixels: Any, texts: list[str]) -> Tensor:
        """Each image's probabilities over texts, (images, len(texts)), from
        pixel values (images, 3, H, W) as CLIP's image processor makes them."""
        arr, n = texts_arg(texts)
        with Inputs() as ins:
            return new_tensor("wt_clip_zero_shot", self._live(), ins.handle(pixels, "f32"), arr, n)

    def text_features(self, texts: list[str]) -> Tensor:
        """The projected text embeddings (not normalised), as get_text_features."""
        arr, n = texts_arg(texts)
        return new_tensor("wt_clip_text_features", self._live(), arr, n)

    def image_features(self, pixels: Any) -> Tensor:
        """The projected image embeddings (not normalised), as get_image_features."""
        with Inputs() as ins:
            return new_tensor("wt_clip_image_features", self._live(), ins.handle(pixels, "f32"))


class VideoOutput(NamedTuple):
    """A TimeSformer forward: the logits (None without a classifier) and the
    last hidden state."""

    logits: Tensor | None
    last_hidden_state: Tensor


class Timesformer(Handle):
    """A TimesformerForVideoClassification or TimesformerModel folder
    (config.json, model.safetensors) that save_pretrained wrote."""

    _free, _what = "wt_timesformer_free", "timesformer model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(load("wt_timesformer_load", path, device_arg(device)))
        info: dict[str, Any] = json.loads(_lib.read_string("wt_timesformer_info_json", self._h))
        self.model: str = info["model"]
        self.attention_type: str = info["attention_type"]
        self.num_frames: int = info["num_frames"]
        self.image_size: int = info["image_size"]
        self.device: str = info["device"]
        self.labels: list[str] | None = info.get("labels")

    def forward(self, pixels: Any) -> VideoOutput:
        """Logits (B, labels) and last hidden state (B, 1 + patches * frames, hidden) of
        pixel values (B, frames, 3, H, W) as preprocess_video makes them (space_only:
        B * frames rows of both, as transformers gives them)."""
        logits, hidden = C.c_int64(), C.c_int64()
        with Inputs() as ins:
            _lib.call("wt_timesformer_forward", self._live(), ins.handle(pixels, "f32"),
                      C.byref(logits) if self.labels is not None else None, C.byref(hidden))
        return VideoOutput(Tensor._wrap(logits.value) if self.labels is not None else None,
                           Tensor._wrap(hidden.value))

    def logits(self, pixels: Any) -> Tensor:
        """The classifier's logits (B, labels) of pixel values (B, frames, 3, H, W)."""
        out = C.c_int64()
        with Inputs() as ins:
            _lib.call("wt_timesformer_forward", self._live(), ins.handle(pixels, "f32"), C.byref(out), None)
        return Tensor._wrap(out.value)

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

    _free, _what = "wt_whisper_free", "whisper model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(load("wt_whisper_load", path, device_arg(device)))
        h = C.c_int64()
        _lib.call("wt_whisper_tokenizer", self._h, C.byref(h))
        self.tokenizer = Tokenizer(h.value)

    @property
    def sampling_rate(self) -> int:
        n = C.c_int32()
        _lib.call("wt_whisper_sampling_rate", self._live(), C.byref(n))
        return n.value

    def generate(self, waves: Any, max_new_tokens: int = 0, num_beams: int = 0) -> Tensor:
        """Token ids (len(waves), length) for one waveform or a list of them
        (1-D float arrays or Tensors at sampling_rate), padded with the pad
        token as transformers' generate pads them; 0 takes the generation
        config's value."""
        waves, _ = _wave_list(waves)
        with Inputs() as ins:
            hs = [ins.handle(w, "f32") for w in waves]
            return new_tensor("wt_whisper_generate", self._live(), _lib.i64_array(hs), len(hs), max_new_tokens,
                              num_beams)

    def transcribe(self, waves: Any, max_new_tokens: int = 0, num_beams: int = 0) -> str | list[str]:
        """The text of one waveform, or a list of texts for a list of them."""
        waves, one = _wave_list(waves)
        ids = self.generate(waves, max_new_tokens, num_beams)
        try:
            texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        finally:
            ids.close()
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

    _free, _what = "wt_whisper_stream_free", "whisper stream"

    def __init__(self, whisper: Whisper, chunk_samples: int = 0, max_new_tokens: int = 0, window_samples: int = 0,
                 trim_encoder: bool = False, tokens_per_second: float = 0.0):
        h = C.c_int64()
        _lib.call("wt_whisper_stream_new", whisper._live(), chunk_samples, max_new_tokens, window_samples,
                  int(trim_encoder), float(tokens_per_second), C.byref(h))
        super().__init__(h.value)

    def _push(self, samples: Any, final: bool) -> list[StreamUpdate]:
        n = C.c_int32()
        with Inputs() as ins:
            h = ins.handle(samples, "f32") if samples is not None else 0
            _lib.call("wt_whisper_stream_push", self._live(), h, int(final), C.byref(n))
        return [StreamUpdate(**u) for u in json.loads(_lib.read_string("wt_whisper_stream_read", self._live()))]

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

    _free, _what = "wt_speecht5_free", "speecht5 model"

    def __init__(self, path: str | os.PathLike, vocoder: str | os.PathLike | None = None, device: str | None = None):
        super().__init__(load("wt_speecht5_load", path, os.fsencode(vocoder) if vocoder else None,
                              device_arg(device)))

    @property
    def sampling_rate(self) -> int:
        """The vocoder's sampling rate."""
        n = C.c_int32()
        _lib.call("wt_speecht5_sampling_rate", self._live(), C.byref(n))
        return n.value

    def tokenize(self, texts: str | list[str]) -> tuple[Tensor, Tensor]:
        """Token ids and attention mask (texts, length), as SpeechT5Tokenizer
        gives them with padding=True."""
        arr, n = texts_arg(texts)
        ids, mask = C.c_int64(), C.c_int64()
        _lib.call("wt_speecht5_tokenize", self._live(), arr, n, C.byref(ids), C.byref(mask))
        return Tensor._wrap(ids.value), Tensor._wrap(mask.value)

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
                ids, mask = self.tokenize(text)
                ins._made += [ids, mask]
                ids_h, mask_h = ids._live(), mask._live()
            else:
                ids_h = ins.handle(text, "i64")
                mask_h = ins.handle(attention_mask, "i64") if attention_mask is not None else 0
            spk = ins.handle(speaker_embeddings, "f32")
            pre = ins.handle(prefix, "f32") if prefix is not None else 0
            spec, lengths, wave = C.c_int64(), C.c_int64(), C.c_int64()
            _lib.call("wt_speecht5_generate", self._live(), ids_h, mask_h, spk, threshold, minlenratio, maxlenratio,
                      int(prenet_dropout), seed, pre, prefill_chunk, C.byref(spec), C.byref(lengths),
                      C.byref(wave) if vocode and self._has_vocoder() else None)
        lt = Tensor._wrap(lengths.value)
        try:
            n = [int(x) for x in lt.numpy().tolist()]
        finally:
            lt.close()
        return SpeechOutput(Tensor._wrap(spec.value), n, Tensor._wrap(wave.value) if wave.value else None)

    def _has_vocoder(self) -> bool:
        n = C.c_int32()
        return _lib.lib.wt_speecht5_sampling_rate(self._live(), C.byref(n)) == 0

    def vocode(self, spectrogram: Any) -> Tensor:
        """The vocoder's waveform of a spectrogram (B, frames, mels) or (frames, mels)."""
        with Inputs() as ins:
            return new_tensor("wt_speecht5_vocode", self._live(), ins.handle(spectrogram, "f32"))


class ConformerOutput(NamedTuple):
    """A Conformer encoding."""

    last_hidden_state: Tensor  # (waves, frames, hidden)
    frame_mask: Tensor | None  # (waves, frames) bool, each waveform's own frames; None unless asked for


class Conformer(Handle):
    """A Wav2Vec2ConformerModel folder (config.json, model.safetensors) with
    its preprocessor_config.json."""

    _free, _what = "wt_conformer_free", "conformer model"

    def __init__(self, path: str | os.PathLike, device: str | None = None):
        super().__init__(load("wt_conformer_load", path, device_arg(device)))

    @property
    def sampling_rate(self) -> int:
        n = C.c_int32()
        _lib.call("wt_conformer_sampling_rate", self._live(), C.byref(n))
        return n.value

    def encode(self, waves: Any, frame_mask: bool = False) -> ConformerOutput:
        """The last hidden state of one waveform or a list of them (1-D float
        arrays or Tensors at sampling_rate), padded to the longest, as
        transformers' model(**extractor(waves, padding=True)) gives it."""
        waves, _ = _wave_list(waves)
        hidden, mask = C.c_int64(), C.c_int64()
        with Inputs() as ins:
            hs = [ins.handle(w, "f32") for w in waves]
            _lib.call("wt_conformer_encode", self._live(), _lib.i64_array(hs), len(hs), C.byref(hidden),
                      C.byref(mask) if frame_mask else None)
        return ConformerOutput(Tensor._wrap(hidden.value), Tensor._wrap(mask.value) if frame_mask else None)


def resample(x: Any, from_hz: int, to_hz: int) -> Tensor:
    """x (..., time), a float array or Tensor, resampled from from_hz to to_hz
    on its device, as torchaudio.functional.resample does by default
    (Hann-windowed sinc, lowpass_filter_width 6, rolloff 0.99)."""
    with Inputs() as ins:
        return new_tensor("wt_audio_resample", ins.handle(x), from_hz, to_hz)
