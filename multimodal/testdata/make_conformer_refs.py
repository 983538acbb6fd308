"""Reference vectors for multimodal's Conformer speech encoder, its
Wav2Vec2FeatureExtractor and audio resampling.

Test-only: the Go tests read what this writes and never run it. It needs
transformers 5.25.0, torch and torchaudio 2.11.1 (installed with --no-deps
beside the venv's torch: only torchaudio.functional.resample is used, which
is plain torch code). Run from this folder:

    python make_conformer_refs.py

It writes
  conformer_tiny_rel/       a tiny seeded Wav2Vec2ConformerModel with relative (Transformer-XL)
                            positions, layer-norm feature encoder, conv bias, SpecAugment's
                            masked_spec_embed (save_pretrained), and its feature extractor
  conformer_tiny_rotary/    the variant: rotary positions, group-norm feature encoder, no conv
                            bias, swish, three feature-encoder layers
  conformer_refs.json       the cases' settings
  conformer_refs.safetensors waveforms, extracted input values and masks, each model's
                            last_hidden_state, resampling inputs and torchaudio's outputs
"""

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchaudio  # noqa: E402
import torchaudio.functional as AF  # noqa: E402
import transformers  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

assert transformers.__version__ == "5.25.0", transformers.__version__
assert torchaudio.__version__.startswith("2.11.1"), torchaudio.__version__

HERE = os.path.dirname(os.path.abspath(__file__))

# Both models share the feature extractor's settings (mask and normalise)
# and the encoder's sizes; the variant changes everything else a config can.
COMMON = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
              conv_depthwise_kernel_size=7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
MODELS = {
    "conformer_tiny_rel": dict(COMMON, position_embeddings_type="relative", feat_extract_norm="layer",
                               conv_dim=(16, 16), conv_kernel=(10, 3), conv_stride=(5, 2), conv_bias=True,
                               hidden_act="gelu", layer_norm_eps=1e-5),
    "conformer_tiny_rotary": dict(COMMON, position_embeddings_type="rotary", feat_extract_norm="group",
                                  conv_dim=(16, 16, 24), conv_kernel=(10, 3, 2), conv_stride=(5, 2, 2),
                                  conv_bias=False, hidden_act="swish", feat_extract_activation="gelu_new",
                                  layer_norm_eps=1e-6, rotary_embedding_base=500, mask_time_prob=0.0),
}


def signal(n, rate, seed):
    """n samples at rate of a chirp, a tone, noise and a silent gap: content at
    every frequency, so a wrong filter tap or frame shows."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    x = 0.3 * np.sin(2 * np.pi * (100 + 0.2 * rate * t) * t) + 0.2 * np.sin(2 * np.pi * 0.31 * rate * t)
    x += 0.05 * rng.standard_normal(n) + 0.01
    x[n // 4:n // 4 + n // 20] = 0
    return x.astype(np.float32)


def spread(model):
    """Spreads the weights and the batch norms' running statistics:
    transformers' init (std 0.02, norms 1 and 0, statistics 0 and 1) makes
    nearly constant activations that would hide a wrong layer."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g) * 0.1
            p.copy_(1 + noise if "norm" in name and name.endswith("weight") else noise * 2)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=g) * 0.3)
            elif name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=g) + 0.5)
            elif name.endswith("num_batches_tracked"):
                b.fill_(7)


# Extractor-only cases: settings, then the waveforms' lengths.
EXTRACTOR_CASES = [
    ("mask_normalize", {"return_attention_mask": True, "do_normalize": True}, [517, 300]),
    # Without a mask transformers normalises over the padded vector.
    ("nomask_normalize", {"return_attention_mask": False, "do_normalize": True}, [300, 517]),
    ("raw_padding_value", {"return_attention_mask": True, "do_normalize": False, "padding_value": 0.25}, [211, 300]),
]

# Resampling cases: (name, from Hz, to Hz, waveform shape).
RESAMPLE_CASES = [
    ("44k1_to_16k", 44100, 16000, (4411,)),
    ("48k_to_16k", 48000, 16000, (2, 4801)),
    ("8k_to_16k", 8000, 16000, (803,)),
    ("16k_to_44k1", 16000, 44100, (1001,)),
    ("22k05_to_16k_short", 22050, 16000, (37,)),
]


def extractor_refs(tensors, meta):
    meta["extractor"] = []
    for i, (name, settings, lengths) in enumerate(EXTRACTOR_CASES):
        fe = transformers.Wav2Vec2FeatureExtractor(**settings)
        waves = [signal(n, 16000, 20 + i * 3 + j) for j, n in enumerate(lengths)]
        out = fe(waves, padding=True, sampling_rate=16000, return_tensors="np")
        for j, w in enumerate(waves):
            tensors[f"extractor/{name}/wave_{j}"] = w
        tensors[f"extractor/{name}/input_values"] = out["input_values"]
        if "attention_mask" in out:
            tensors[f"extractor/{name}/attention_mask"] = out["attention_mask"].astype(np.int64)
        meta["extractor"].append({"name": name, "config": fe.to_dict(), "batch": len(waves)})


def model_refs(tensors, meta):
    fe = transformers.Wav2Vec2FeatureExtractor(return_attention_mask=True, do_normalize=True)
    # 1 s and a shorter second item, padded to it.
    waves = [signal(16000, 16000, 1), signal(11003, 16000, 2)]
    inputs = fe(waves, padding=True, sampling_rate=16000, return_tensors="pt")
    for j, w in enumerate(waves):
        tensors[f"model/wave_{j}"] = w
    tensors["model/input_values"] = inputs["input_values"].numpy()
    # The mask is each row's real samples first: the lengths say it.
    assert (inputs["attention_mask"].sum(-1) == torch.tensor([len(w) for w in waves])).all()
    meta["model_lengths"] = [len(w) for w in waves]
    meta["models"] = []
    for name, settings in MODELS.items():
        torch.manual_seed(0)
        model = transformers.Wav2Vec2ConformerModel(transformers.Wav2Vec2ConformerConfig(**settings))
        spread(model)
        out_dir = os.path.join(HERE, name)
        model.eval().save_pretrained(out_dir)
        fe.save_pretrained(out_dir)
        # The references come from the files, as a user would load them.
        model = transformers.Wav2Vec2ConformerModel.from_pretrained(out_dir).eval()
        with torch.no_grad():
            out = model(inputs["input_values"], attention_mask=inputs["attention_mask"])
            eager = transformers.Wav2Vec2ConformerModel.from_pretrained(out_dir, attn_implementation="eager").eval()
            check = eager(inputs["input_values"], attention_mask=inputs["attention_mask"])
        gap = float((out.last_hidden_state - check.last_hidden_state).abs().max())
        tensors[f"{name}/last_hidden_state"] = out.last_hidden_state.numpy()
        meta["models"].append({"name": name, "frames": out.last_hidden_state.shape[1], "sdpa_vs_eager": gap,
                               "attn_implementation": model.config._attn_implementation})


def resample_refs(tensors, meta):
    meta["resample"] = []
    for i, (name, src, dst, shape) in enumerate(RESAMPLE_CASES):
        x = np.stack([signal(shape[-1], src, 40 + i * 5 + j) for j in range(int(np.prod(shape[:-1])))])
        x = x.reshape(shape)
        y = AF.resample(torch.from_numpy(x), src, dst)
        tensors[f"resample/{name}/input"] = x
        tensors[f"resample/{name}/output"] = y.numpy()
        # float64 waveforms get float64 taps.
        tensors[f"resample/{name}/output_f64"] = AF.resample(torch.from_numpy(x).double(), src, dst).numpy()
        meta["resample"].append({"name": name, "from": src, "to": dst})


def main():
    tensors, meta = {}, {"transformers": transformers.__version__, "torchaudio": torchaudio.__version__}
    extractor_refs(tensors, meta)
    model_refs(tensors, meta)
    resample_refs(tensors, meta)
    tensors = {k: np.ascontiguousarray(v) for k, v in tensors.items()}
    save_file(tensors, os.path.join(HERE, "conformer_refs.safetensors"))
    with open(os.path.join(HERE, "conformer_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
