"""Reference vectors for multimodal's SpeechT5 text-to-speech, its
HiFi-GAN vocoder and its sentencepiece tokenizer.

Test-only: the Go tests read what this writes and never run it. It needs
transformers 5.25.0, torch and sentencepiece 0.2.3 (for the tokenizer's
training and transformers' SpeechT5Tokenizer; installed beside the venv
with pip install --target, then on PYTHONPATH). Run from this folder:

    PYTHONPATH=/path/to/sentencepiece python make_speecht5_refs.py

It writes
  speecht5_tiny/          a tiny seeded SpeechT5ForTextToSpeech (save_pretrained) with a
                          character sentencepiece model trained here (nmt_nfkc rules, so the
                          precompiled charsmap is exercised) and transformers' tokenizer files
  speecht5_hifigan_tiny/  a tiny seeded SpeechT5HifiGan with non-trivial mean and scale
  speecht5_refs.json      the tokenizer corpus with transformers' ids, the generation settings,
                          each case's stop step and spectrogram lengths
  speecht5_refs.safetensors  inputs, encoder states, decoder states on a mel prefix, the
                          spectrograms and waveforms generate_speech gives

The speech decoder prenet of transformers applies dropout (p=0.5) even in
evaluation, with a fresh torch.bernoulli mask every step, so two
transformers runs never agree; the references are made with that dropout
switched off (the prenet's _consistent_dropout replaced by the identity),
which webtensor's GenerateSpeech does with PrenetDropout off. The masks of
one run with dropout on are recorded too, and the Go test replays them to
check the dropout arithmetic itself.
"""

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import sentencepiece as spm  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from safetensors.torch import save_file  # noqa: E402
from transformers import (  # noqa: E402
    SpeechT5Config,
    SpeechT5ForTextToSpeech,
    SpeechT5HifiGan,
    SpeechT5HifiGanConfig,
    SpeechT5Tokenizer,
)
from transformers.models.speecht5 import modeling_speecht5 as ms  # noqa: E402

assert transformers.__version__ == "5.25.0", transformers.__version__
assert spm.__version__ == "0.2.3", spm.__version__

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_DIR = os.path.join(HERE, "speecht5_tiny")
VOCODER_DIR = os.path.join(HERE, "speecht5_hifigan_tiny")

TRAIN = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! How are you today?",
    "Speech synthesis turns text into sound; numbers like 42 stay digits.",
    "A tiny model, seeded and random, says nothing useful.",
    "Caf\u00e9 na\u00efve fa\u00e7ade, \u00c5ngstr\u00f6m.",
]
CORPUS = [
    "Hello, my dog is cute.",
    "  Leading and trailing   spaces   collapse.  ",
    "Full-width \uff21\uff22\uff23\uff11\uff12 and the ligature \ufb01 normalise (NFKC).",
    "Unknown letters: \u0416\u0416 and emoji \U0001f600\U0001f600 become <unk>.",
    "A <mask> token and </s> inside text.",
    "caf\u00e9 vs cafe\u0301",
    "",
]


def train_tokenizer():
    """A character sentencepiece model as SpeechT5's spm_char.model is."""
    prefix = os.path.join(MODEL_DIR, "spm_char")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAIN), model_prefix=prefix, model_type="char", vocab_size=80,
        hard_vocab_limit=False, character_coverage=1.0, bos_id=0, pad_id=1, eos_id=2, unk_id=3,
        normalization_rule_name="nmt_nfkc", num_threads=1, minloglevel=2)
    os.remove(prefix + ".vocab")
    tok = SpeechT5Tokenizer(prefix + ".model")
    # SpeechT5's own tokenizer adds these two after the sentencepiece pieces.
    tok.add_tokens([transformers.AddedToken("<mask>", lstrip=True, rstrip=False)], special_tokens=True)
    tok.add_tokens(["<ctc_blank>"], special_tokens=True)
    tok.save_pretrained(MODEL_DIR)
    return tok


def seeded_init(model, seed):
    """Weights larger than transformers' init, so every path changes the output."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("alpha"):
                p.copy_(0.5 + torch.rand((), generator=g))
            elif "norm" in name and name.endswith("weight") and p.dim() == 1:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=g) / fan_in ** 0.5)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.1 * torch.randn(b.shape, generator=g))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand(b.shape, generator=g))


def main():
    os.makedirs(MODEL_DIR, exist_ok=True)
    os.makedirs(VOCODER_DIR, exist_ok=True)
    tok = train_tokenizer()
    corpus = [{"text": t, "ids": tok(t)["input_ids"]} for t in CORPUS]

    cfg = SpeechT5Config(
        vocab_size=len(tok), hidden_size=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=48,
        decoder_layers=2, decoder_attention_heads=4, decoder_ffn_dim=40, num_mel_bins=16,
        speech_decoder_prenet_layers=2, speech_decoder_prenet_units=24, speaker_embedding_dim=12,
        speech_decoder_postnet_layers=3, speech_decoder_postnet_units=20, speech_decoder_postnet_kernel=5,
        reduction_factor=2, max_speech_positions=300, max_text_positions=120, encoder_max_relative_position=8,
        layer_norm_eps=1e-5, hidden_act="gelu")
    torch.manual_seed(0)
    model = SpeechT5ForTextToSpeech(cfg).eval()
    seeded_init(model, 1)
    model.save_pretrained(MODEL_DIR)

    vcfg = SpeechT5HifiGanConfig(model_in_dim=16, upsample_initial_channel=16, upsample_rates=[4, 2],
                                 upsample_kernel_sizes=[8, 4], resblock_kernel_sizes=[3, 5],
                                 resblock_dilation_sizes=[[1, 3], [1, 2]], sampling_rate=16000)
    vocoder = SpeechT5HifiGan(vcfg).eval()
    seeded_init(vocoder, 2)
    with torch.no_grad():
        g = torch.Generator().manual_seed(3)
        vocoder.mean.copy_(0.3 * torch.randn(16, generator=g))
        vocoder.scale.copy_(0.5 + torch.rand(16, generator=g))
    vocoder.save_pretrained(VOCODER_DIR)

    t = {}
    texts = ["Hello, my dog is cute.", "A tiny random voice."]
    enc = tok(texts, padding=True, return_tensors="pt")
    ids, mask = enc["input_ids"], enc["attention_mask"]
    g = torch.Generator().manual_seed(4)
    speakers = torch.randn(2, 12, generator=g)
    t["input_ids"], t["attention_mask"], t["speaker_embeddings"] = ids, mask, speakers

    # Dropout off for every deterministic reference (see the docstring).
    real_dropout = ms.SpeechT5SpeechDecoderPrenet._consistent_dropout
    ms.SpeechT5SpeechDecoderPrenet._consistent_dropout = lambda self, x, p: x

    with torch.no_grad():
        t["encoder_last_hidden_state"] = model.speecht5.encoder(input_values=ids, attention_mask=mask).last_hidden_state
        # Teacher forcing on a mel prefix: the decoder's states and the
        # postnet's outputs, to check the decoder's (chunked) prefill.
        prefix = 0.5 * torch.randn(2, 7, 16, generator=g)
        t["decoder_input_values"] = prefix
        out = model.speecht5(input_values=ids, attention_mask=mask, decoder_input_values=prefix,
                             speaker_embeddings=speakers, return_dict=True)
        t["decoder_last_hidden_state"] = out.last_hidden_state
        before, after, logits = model.speech_decoder_postnet(out.last_hidden_state)
        t["teacher_before_postnet"], t["teacher_after_postnet"], t["teacher_stop_logits"] = before, after, logits

    cases = []

    def generate(name, rows, threshold, minlenratio, maxlenratio):
        """generate_speech on rows of the batch, recording every step's
        feat_out (the frames before the postnet) and stop probabilities."""
        steps, probs = [], []
        h1 = model.speech_decoder_postnet.feat_out.register_forward_hook(lambda m, i, o: steps.append(o))
        h2 = model.speech_decoder_postnet.prob_out.register_forward_hook(
            lambda m, i, o: probs.append(torch.sigmoid(o).sum(-1)))
        n = len(rows)
        width = int(mask[rows].sum(-1).max())
        row_ids, row_mask, row_spk = ids[rows, :width], mask[rows, :width], speakers[rows]
        with torch.no_grad():
            if n == 1:
                mel = model.generate_speech(row_ids, row_spk, threshold=threshold, minlenratio=minlenratio,
                                            maxlenratio=maxlenratio)
                wave = model.generate_speech(row_ids, row_spk, threshold=threshold, minlenratio=minlenratio,
                                             maxlenratio=maxlenratio, vocoder=vocoder)
                lengths = [mel.shape[0]]
                mel, wave = mel[None], wave[None]
                wave_lengths = [wave.shape[1]]
            else:
                mel, lengths = model.generate_speech(row_ids, row_spk, attention_mask=row_mask,
                                                     threshold=threshold, minlenratio=minlenratio,
                                                     maxlenratio=maxlenratio, return_output_lengths=True)
                wave, wave_lengths = model.generate_speech(row_ids, row_spk, attention_mask=row_mask,
                                                           threshold=threshold, minlenratio=minlenratio,
                                                           maxlenratio=maxlenratio, vocoder=vocoder,
                                                           return_output_lengths=True)
        h1.remove()
        h2.remove()
        k = len(steps) // 2  # the hooks ran for both calls
        frames = torch.stack(steps[:k], 1).view(n, -1, 16)
        p = torch.stack(probs[:k], 1)
        t[f"{name}/spectrogram"], t[f"{name}/waveform"] = mel, wave
        t[f"{name}/before_postnet"], t[f"{name}/stop_probs"] = frames, p
        cases.append({"name": name, "rows": rows, "threshold": threshold, "minlenratio": minlenratio,
                      "maxlenratio": maxlenratio, "steps": k, "lengths": [int(x) for x in lengths],
                      "waveform_lengths": [int(x) for x in wave_lengths]})
        return p

    # A threshold no step reaches first, to see each step's stop
    # probability, then the threshold that stops both rows by the threshold
    # (not maxlenratio) after a few steps with the widest margin from every
    # step's probability, so float rounding cannot move a stop.
    minlenratio = 0.3
    probe = generate("probe", [0, 1], 3.0, minlenratio, 3.0)
    cases.pop()
    minlen = int(ids.shape[1] * minlenratio / cfg.reduction_factor)
    sums = probe.flatten().sort().values
    best, threshold = -1.0, None
    for cand in ((sums[1:] + sums[:-1]) / 2).tolist():
        stops, margin = [], 1.0
        for row in probe.tolist():
            stop = next((i + 1 for i, v in enumerate(row) if i + 1 >= minlen and v >= cand), None)
            stops.append(stop)
            if stop is not None:
                margin = min(margin, min(abs(v - cand) for v in row[minlen - 1:stop]))
        if None not in stops and stops[0] >= 6 and margin > best:
            best, threshold = margin, cand
    print("threshold margin", best)
    generate("single", [0], threshold, minlenratio, 3.0)
    generate("batch", [0, 1], threshold, minlenratio, 3.0)
    generate("maxlen", [1], 3.0, 0.0, 1.0)

    # One step of the prenet with transformers' dropout on: the masks it
    # drew, replayed by the Go test.
    ms.SpeechT5SpeechDecoderPrenet._consistent_dropout = real_dropout
    masks = []
    orig_bernoulli = torch.bernoulli

    def recording_bernoulli(x, p=0.5):
        m = orig_bernoulli(x, p=p)
        masks.append(m.clone())
        return m

    torch.manual_seed(5)
    torch.bernoulli = recording_bernoulli
    with torch.no_grad():
        t["dropout/prenet"] = model.speecht5.decoder.prenet(prefix, speakers)
    torch.bernoulli = orig_bernoulli
    for i, m in enumerate(masks):
        t[f"dropout/mask_{i}"] = m

    t["vocoder/spectrogram"] = t["single/spectrogram"][0].clone()
    with torch.no_grad():
        t["vocoder/waveform"] = vocoder(t["vocoder/spectrogram"])
        t["vocoder/batch_waveform"] = vocoder(t["batch/spectrogram"])

    tensors = {k: v.detach().clone().contiguous() for k, v in t.items()}
    for k, v in tensors.items():
        if v.dtype == torch.float64:
            tensors[k] = v.float()
    save_file(tensors, os.path.join(HERE, "speecht5_refs.safetensors"))
    with open(os.path.join(HERE, "speecht5_refs.json"), "w") as f:
        json.dump({"corpus": corpus, "texts": texts, "generate": cases, "threshold": threshold,
                   "dropout_masks": len(masks), "prefix_frames": 7}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("threshold", threshold, [(c["name"], c["steps"], c["lengths"]) for c in cases])
    print("stop sums", np.round(probe.numpy(), 3))


if __name__ == "__main__":
    main()
