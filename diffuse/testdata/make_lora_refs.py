"""Reference vectors for diffuse's LoRA and LoCon adapters, made by diffusers and PEFT (test-only).

CI never runs this. Run from the repository root with the project's Python (PyTorch, diffusers 0.42)
and transformers, peft and accelerate importable, after make_cond_refs.py (it loads its tiny UNet):

    PYTHONPATH=/path/to/libs python diffuse/testdata/make_lora_refs.py

On unet2dcond_tiny it puts a seeded random PEFT LoRA (init_lora_weights=False, so it is not a
no-op) on the attention projections, the transformers' proj_in/proj_out, the feed-forwards, the
ResNets' time projections and their 3×3 convolutions (LoCon: a 3×3 down conv and a 1×1 up conv),
with rank 4, alpha 8 and rank 2 on every conv1, and writes:

- lora/peft.safetensors: StableDiffusionPipeline.save_lora_weights' file (keys unet.<module>.lora_A
  / lora_B.weight, the LoRA config in the lora_adapter_metadata header entry);
- lora/kohya.safetensors: the same tensors in kohya's naming (lora_unet_<module with dots as
  underscores>.lora_down / lora_up.weight and .alpha, here 3 for every module);
- lora_refs.safetensors: a seeded batch, encoder states, and the UNet's output without adapters,
  with the PEFT LoRA at scale 1 and 0.5, and with the kohya LoRA as diffusers' load_lora_weights
  converts and applies it (checked here against merging the weights by hand).
"""

import os

import torch
from diffusers import StableDiffusionPipeline, UNet2DConditionModel
from peft import LoraConfig
from peft.utils import get_peft_model_state_dict
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
T = 500
KOHYA_ALPHA = 3.0
TARGETS = ["to_q", "to_k", "to_v", "to_out.0", "proj_in", "proj_out", "ff.net.0.proj", "ff.net.2",
           "time_emb_proj", "conv1", "conv2"]


def unet():
    return UNet2DConditionModel.from_pretrained(os.path.join(HERE, "unet2dcond_tiny")).eval()


def pipe_of(model):
    return StableDiffusionPipeline(vae=None, text_encoder=None, tokenizer=None, unet=model, scheduler=None,
                                   safety_checker=None, feature_extractor=None, requires_safety_checker=False)


def main():
    out_dir = os.path.join(HERE, "lora")
    os.makedirs(out_dir, exist_ok=True)
    base = unet()
    gen = torch.Generator().manual_seed(21)
    x = torch.randn((2, 4, 16, 16), generator=gen)
    enc = torch.randn((2, 7, base.config.cross_attention_dim), generator=gen)
    tensors = {"sample": x, "encoder_hidden_states": enc}
    with torch.no_grad():
        tensors["out_base"] = base(x, T, enc).sample

    torch.manual_seed(22)
    cfg = LoraConfig(r=4, lora_alpha=8, target_modules=TARGETS, rank_pattern={"conv1": 2}, init_lora_weights=False)
    base.add_adapter(cfg)
    with torch.no_grad():
        tensors["out_peft"] = base(x, T, enc).sample
        tensors["out_peft_half"] = base(x, T, enc, cross_attention_kwargs={"scale": 0.5}).sample
    layers = get_peft_model_state_dict(base)
    StableDiffusionPipeline.save_lora_weights(out_dir, unet_lora_layers=layers, weight_name="peft.safetensors",
                                              unet_lora_adapter_metadata=cfg.to_dict())

    # diffusers' own loader on a fresh UNet agrees with the adapter it saved.
    fresh = pipe_of(unet())
    fresh.load_lora_weights(out_dir, weight_name="peft.safetensors")
    with torch.no_grad():
        torch.testing.assert_close(fresh.unet(x, T, enc).sample, tensors["out_peft"])

    kohya = {}
    for key, v in layers.items():
        module, kind = key.rsplit(".lora_", 1)
        name = "lora_unet_" + module.replace(".", "_")
        kohya[f"{name}.lora_{'down' if kind.startswith('A') else 'up'}.weight"] = v.contiguous()
        kohya[f"{name}.alpha"] = torch.tensor(KOHYA_ALPHA)
    save_file(kohya, os.path.join(out_dir, "kohya.safetensors"))
    fresh = pipe_of(unet())
    fresh.load_lora_weights(out_dir, weight_name="kohya.safetensors")
    with torch.no_grad():
        tensors["out_kohya"] = fresh.unet(x, T, enc).sample

    # The same by hand: W + alpha/rank · up·down, so a layer diffusers skipped would show.
    manual = unet()
    params = dict(manual.named_parameters())
    with torch.no_grad():
        for key, down in layers.items():
            if ".lora_A." not in key:
                continue
            module = key.split(".lora_A.")[0]
            up = layers[f"{module}.lora_B.weight"]
            w = params[module + ".weight"]
            r = down.shape[0]
            delta = up.reshape(up.shape[0], r) @ down.reshape(r, -1)
            w += KOHYA_ALPHA / r * delta.reshape(w.shape)
        torch.testing.assert_close(manual(x, T, enc).sample, tensors["out_kohya"], rtol=1e-4, atol=1e-5)
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(HERE, "lora_refs.safetensors"))


if __name__ == "__main__":
    main()
