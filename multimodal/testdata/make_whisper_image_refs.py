"""Reference vectors for multimodal's audio front end, Whisper and image
preprocessing.

Test-only, like make_refs.py (whose corpus, training text and weight
spreading it reuses, and whose package versions it needs; Pillow 13.0.0
too). Run from this folder:

    python make_whisper_image_refs.py

It writes
  whisper_bpe/tokenizer.json      a small Whisper-layout byte-level BPE trained here (the
                                  special tokens after the merged vocabulary, as Whisper's)
  whisper_tiny/                   a tiny seeded WhisperForConditionalGeneration (save_pretrained:
                                  config.json, generation_config.json, model.safetensors), its
                                  feature extractor (1 s windows) and the tokenizer above
  whisper_refs.json               decoded texts, generated ids and the settings of each case
  whisper_refs.safetensors        waveforms, log-mel features, encoder and decoder outputs
  image_refs.json, .safetensors   uint8 images and what the PIL image processors make of them

The Whisper tokenizer's merges depend on the BPE trainer's tie order, as
make_refs.py says; everything that depends on them is written here too.
"""

import copy
import json
import os
import shutil

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import PIL  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from make_refs import CORPUS, TRAIN, randomize  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

assert PIL.__version__ == "13.0.0", PIL.__version__

HERE = os.path.dirname(os.path.abspath(__file__))
SPECIALS = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|de|>", "<|translate|>", "<|transcribe|>",
            "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"]


def whisper_tokenizer():
    """GPT-2's byte-level BPE with Whisper's special tokens appended after the
    merged vocabulary, and two plain added tokens whose decoding differs
    (one made of byte-map characters, one not)."""
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    t.train_from_iterator(TRAIN, trainer)
    t.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    t.add_tokens([AddedToken("naïve", normalized=False), AddedToken("日本", normalized=False)])
    ids = {s: t.token_to_id(s) for s in SPECIALS}
    t.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|startoftranscript|> <|notimestamps|> $A <|endoftext|>",
            pair="<|startoftranscript|> <|notimestamps|> $A $B:1 <|endoftext|>:1",
            special_tokens=[(s, ids[s]) for s in ["<|startoftranscript|>", "<|notimestamps|>", "<|endoftext|>"]]),
    ])
    return t


def signal(seconds, seed):
    """A few seconds of a chirp, two tones, noise and a silent gap: a spectrum
    with structure everywhere, so a wrong bin or filter shows."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * 16000)) / 16000
    x = 0.3 * np.sin(2 * np.pi * (200 + 900 * t) * t) + 0.2 * np.sin(2 * np.pi * 3150 * t)
    x += 0.1 * np.sin(2 * np.pi * 440 * t) * (t > 0.4) + 0.05 * rng.standard_normal(t.shape)
    x[int(0.25 * len(x)):int(0.3 * len(x))] = 0
    return x.astype(np.float32)


# Extractor cases: settings, then the signals (seconds, seed) of one batch;
# "frames" keeps only the first frames of a long output (the rest is silence
# at the floor value, which the test checks against "tail").
AUDIO_CASES = [
    ("default_30s", {}, [(2.0, 1)], 240),
    ("mel128_2s_batch", {"feature_size": 128, "chunk_length": 2}, [(0.7, 2), (2.3, 3)], None),
    ("normalize_1s", {"chunk_length": 1, "do_normalize": True}, [(0.6, 4)], None),
]


def audio_refs(tensors, meta):
    meta["audio"] = []
    for name, settings, signals, frames in AUDIO_CASES:
        settings = dict(settings)
        call = {"do_normalize": settings.pop("do_normalize")} if "do_normalize" in settings else {}
        fe = transformers.WhisperFeatureExtractor(**settings)
        waves = [signal(s, seed) for s, seed in signals]
        feats = fe(waves, sampling_rate=16000, return_tensors="np", **call)["input_features"]
        for i, w in enumerate(waves):
            tensors[f"audio/{name}/wave_{i}"] = w
        case = {"name": name, "settings": settings | call, "batch": len(waves), "frames": feats.shape[-1]}
        if frames:
            assert np.all(feats[:, :, frames:] == feats[0, 0, -1]), "the tail is not constant"
            case["tail"] = float(feats[0, 0, -1])
            feats = feats[:, :, :frames]
        tensors[f"audio/{name}/features"] = feats
        meta["audio"].append(case)
    # The Slaney mel filterbank itself (HF's mel_filter_bank), for a
    # failure to point at the filters rather than the STFT.
    tensors["audio/mel_filters_80"] = transformers.WhisperFeatureExtractor().mel_filters.astype(np.float32)


# The seed of the decoder's positions: one picked so that one sequence ends
# after a few ids and the other after more, both before MAX_NEW_TOKENS.
DECODER_SEED = 5
MAX_NEW_TOKENS = 30


def whisper_refs(tensors, meta):
    tok = whisper_tokenizer()
    os.makedirs(os.path.join(HERE, "whisper_bpe"), exist_ok=True)
    tok.save(os.path.join(HERE, "whisper_bpe", "tokenizer.json"))
    ids = {s: tok.token_to_id(s) for s in SPECIALS}

    # Decoding: every corpus text's ids with and without the specials, and
    # id runs that cut multi-byte characters (replacement characters).
    decode = []
    for text in CORPUS:
        enc = tok.encode(text).ids
        decode.append({"ids": enc, "text": tok.decode(enc, skip_special_tokens=False),
                       "skip_special": tok.decode(enc, skip_special_tokens=True)})
    rng = np.random.default_rng(5)
    for n in [3, 7, 20]:
        run = rng.integers(0, tok.get_vocab_size(), n).tolist()
        decode.append({"ids": run, "text": tok.decode(run, skip_special_tokens=False),
                       "skip_special": tok.decode(run, skip_special_tokens=True)})
    meta["decode"] = decode

    torch.manual_seed(0)
    cfg = transformers.WhisperConfig(
        vocab_size=tok.get_vocab_size(), num_mel_bins=80, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=40,
        max_source_positions=50, max_target_positions=40, pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"],
        suppress_tokens=[ids["<|startoflm|>"], ids["<|startofprev|>"], 5, 17, 33],
        begin_suppress_tokens=[tok.token_to_id("Ġ"), ids["<|endoftext|>"]])
    model = transformers.WhisperForConditionalGeneration(cfg)
    # Keep the encoder's sinusoidal positions as transformers made them.
    pos = model.model.encoder.embed_positions.weight.detach().clone()
    randomize(model)
    g = torch.Generator().manual_seed(DECODER_SEED)
    with torch.no_grad():
        model.model.encoder.embed_positions.weight.copy_(pos)
        # Strong decoder positions and a larger end-of-text embedding: with
        # transformers' scale the random decoder repeats one token and never
        # ends; this way the ids vary and one sequence ends early.
        p = model.model.decoder.embed_positions.weight
        p.copy_(torch.randn(p.shape, generator=g) * 5)
        model.model.decoder.embed_tokens.weight[ids["<|endoftext|>"]] *= 3
    model.eval()
    gc = model.generation_config
    # Otherwise from_pretrained rebuilds the generation config from
    # config.json and drops forced_decoder_ids and no_timestamps_token_id.
    gc._from_model_config = False
    gc.forced_decoder_ids = [[1, ids["<|en|>"]], [2, ids["<|transcribe|>"]]]
    gc.no_timestamps_token_id = ids["<|notimestamps|>"]
    gc.suppress_tokens = cfg.suppress_tokens
    gc.begin_suppress_tokens = cfg.begin_suppress_tokens
    out_dir = os.path.join(HERE, "whisper_tiny")
    model.save_pretrained(out_dir)
    shutil.copy(os.path.join(HERE, "whisper_bpe", "tokenizer.json"), os.path.join(out_dir, "tokenizer.json"))
    fe = transformers.WhisperFeatureExtractor(chunk_length=1)
    fe.save_pretrained(out_dir)
    # The references come from the files, as a user would load them.
    model = transformers.WhisperForConditionalGeneration.from_pretrained(out_dir).eval()
    assert model.generation_config.forced_decoder_ids, "generation_config.json lost forced_decoder_ids"

    waves = [signal(0.8, 6), signal(1.0, 7)]
    feats = torch.from_numpy(fe(waves, sampling_rate=16000, return_tensors="np")["input_features"])
    dec_ids = torch.tensor([[ids["<|startoftranscript|>"], ids["<|en|>"], ids["<|transcribe|>"], 40, 77, 301],
                            [ids["<|startoftranscript|>"], ids["<|de|>"], 12, 13, 599, 2]])
    with torch.no_grad():
        out = model(input_features=feats, decoder_input_ids=dec_ids, output_hidden_states=True)
        gen = model.generate(feats, do_sample=False, max_new_tokens=MAX_NEW_TOKENS)
    for i, w in enumerate(waves):
        tensors[f"whisper/wave_{i}"] = w
    tensors["whisper/input_features"] = feats.numpy()
    tensors["whisper/decoder_input_ids"] = dec_ids.numpy()
    tensors["whisper/encoder_last_hidden_state"] = out.encoder_last_hidden_state.numpy()
    tensors["whisper/encoder_hidden_states_1"] = out.encoder_hidden_states[1].numpy()
    tensors["whisper/decoder_hidden_states_1"] = out.decoder_hidden_states[1].numpy()
    tensors["whisper/logits"] = out.logits.numpy()
    # Language detection: forced_decoder_ids leave the language null and
    # lang_to_id names the candidates. Two ordinary ids stand in for
    # languages too: the random decoder prefers one for each input (by
    # 1e-3, far above float32 error), so the rows' prompts differ.
    gc = copy.deepcopy(model.generation_config)
    gc.forced_decoder_ids = [[1, None], [2, ids["<|transcribe|>"]]]
    gc.lang_to_id = {"<|en|>": ids["<|en|>"], "<|de|>": ids["<|de|>"], "<|xa|>": 164, "<|xb|>": 501}
    with torch.no_grad():
        detected = model.detect_language(feats, generation_config=gc)
        gen_detect = model.generate(feats, generation_config=gc, do_sample=False, max_new_tokens=8)
    meta["generate_detect"] = {"max_new_tokens": 8, "forced_decoder_ids": gc.forced_decoder_ids,
                               "lang_to_id": gc.lang_to_id, "detected": detected.tolist(),
                               "sequences": gen_detect.tolist()}
    # Beam search, with the prompt and suppression of the greedy case:
    # transformers' defaults (length_penalty 1, early_stopping false), then
    # the other early-stopping rules and length penalties.
    beams = []
    cases = [(3, 10, {}), (4, 30, {}), (3, 12, {"length_penalty": 0.0, "early_stopping": "never"}),
             (2, 16, {"length_penalty": 2.0, "early_stopping": True})]
    for n_beams, n_new, settings in cases:
        with torch.no_grad():
            out_beam = model.generate(feats, do_sample=False, num_beams=n_beams, max_new_tokens=n_new, **settings)
        beams.append({"num_beams": n_beams, "max_new_tokens": n_new, "settings": settings,
                      "sequences": out_beam.tolist()})
    meta["generate_beam"] = beams
    gen = gen.numpy()
    meta["generate"] = {"max_new_tokens": MAX_NEW_TOKENS, "sequences": gen.tolist(),
                        "texts": [tok.decode(g.tolist(), skip_special_tokens=True) for g in gen],
                        "min_top2_gap": top2_gap(model, feats, gen)}


def top2_gap(model, feats, seqs):
    """The smallest gap between the two best logits over the generated
    steps: the margin f32 arithmetic has before greedy picks another id."""
    gaps = []
    with torch.no_grad():
        for b in range(len(seqs)):
            s = torch.tensor(seqs[b:b + 1])
            logits = model(input_features=feats[b:b + 1], decoder_input_ids=s).logits[0]
            top = torch.topk(logits, 2, dim=-1).values
            gaps.append(float((top[:, 0] - top[:, 1]).min()))
    return min(gaps)


# Image cases: (name, processor class, settings, image shapes (H, W)).
IMAGE_CASES = [
    ("vit_bilinear", "ViTImageProcessorPil", {"size": {"height": 24, "width": 24}}, [(37, 53), (16, 16), (24, 24)]),
    ("clip_bicubic", "CLIPImageProcessorPil", {"size": {"shortest_edge": 20}, "crop_size": {"height": 18, "width": 18}},
     [(45, 31), (12, 40), (20, 20)]),
    # Lanczos, and a crop taller than the resized image (zero padded).
    ("clip_lanczos_pad", "CLIPImageProcessorPil",
     {"size": {"shortest_edge": 14}, "crop_size": {"height": 20, "width": 12}, "resample": 1}, [(9, 7)]),
    ("vit_hamming", "ViTImageProcessorPil", {"size": {"height": 10, "width": 13}, "resample": 5,
                                             "image_mean": [0.1, 0.2, 0.3], "image_std": [0.9, 0.8, 0.7]},
     [(33, 29)]),
    ("vit_box", "ViTImageProcessorPil", {"size": {"height": 7, "width": 9}, "resample": 4}, [(33, 29)]),
    ("vit_bicubic_up", "ViTImageProcessorPil", {"size": {"height": 29, "width": 17}, "resample": 3}, [(11, 8)]),
]


def image_refs():
    tensors, meta = {}, []
    rng = np.random.default_rng(9)
    for name, cls, settings, shapes in IMAGE_CASES:
        proc = getattr(transformers, cls)(**settings)
        imgs = []
        for h, w in shapes:
            # Smooth gradients plus noise and a hard edge: both the
            # interpolation and the clipping of overshoots matter.
            yy, xx = np.mgrid[0:h, 0:w]
            base = np.stack([255 * xx / max(w - 1, 1), 255 * yy / max(h - 1, 1), 128 + 0 * xx], -1)
            base[:, : w // 3] = 255 - base[:, : w // 3]
            img = np.clip(base + rng.normal(0, 40, base.shape), 0, 255).astype(np.uint8)
            imgs.append(img)
        for i, img in enumerate(imgs):
            tensors[f"{name}/image_{i}"] = img
            out = proc(img, return_tensors="np")["pixel_values"][0]
            tensors[f"{name}/pixels_{i}"] = out.astype(np.float32)
        d = proc.to_dict()
        d["resample"] = int(d["resample"])
        meta.append({"name": name, "config": d, "images": len(imgs)})
    save_file(tensors, os.path.join(HERE, "image_refs.safetensors"))
    with open(os.path.join(HERE, "image_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    image_refs()
    tensors, meta = {}, {}
    audio_refs(tensors, meta)
    whisper_refs(tensors, meta)
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, os.path.join(HERE, "whisper_refs.safetensors"))
    with open(os.path.join(HERE, "whisper_refs.json"), "w") as f:
        json.dump(meta, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
