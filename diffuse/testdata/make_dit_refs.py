"""Reference vectors for diffuse's DiTTransformer2DModel, made by diffusers (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42), after make_vae_refs.py
(the pipeline decodes with its tiny VAE):

    python diffuse/testdata/make_dit_refs.py

It builds tiny DiTTransformer2DModels with seeded random weights (diffusers' own initialisation),
writes each with save_pretrained into testdata/<name>/ (config.json and
diffusion_pytorch_model.safetensors), and records in dit_refs.safetensors, in float32 on the CPU,
a seeded batch and the model's output (noise and learned sigma channels) for per-element timesteps
and class labels (one of them the null class classifier-free guidance uses), a timestep shared by
the batch, and an input larger than sample_size (the patch embedding then recomputes its
positional table). dit_refs.json names the models and the inputs.

It also runs DiTPipeline (classifier-free guidance on class labels, the null class 1000, the learned
sigma split off) on dit_pipe, a tiny model with DiT's 1000 classes, and the tiny VAE of
make_vae_refs.py, for a deterministic and a stochastic scheduler, recording the images and every
noise tensor drawn (randn_tensor is patched in the pipeline's and DDPM's modules).
"""

import json
import os

import torch
from diffusers import AutoencoderKL, DDPMScheduler, DiTPipeline, DiTTransformer2DModel, DPMSolverMultistepScheduler
from diffusers.pipelines.dit import pipeline_dit
from diffusers.schedulers import scheduling_ddpm
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    # DiT's own layout (adaLN-Zero, tanh GELU, learned sigma: twice the input channels out), tiny.
    "dit_tiny": dict(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=2,
        sample_size=8, patch_size=2, num_embeds_ada_norm=10,
    ),
    # The other options: affine norms, no q/k/v bias, exact GELU, patch 1, out_channels defaulted.
    "dit_variant": dict(
        num_attention_heads=3, attention_head_dim=4, in_channels=3, out_channels=None, num_layers=1,
        sample_size=4, patch_size=1, num_embeds_ada_norm=7, norm_elementwise_affine=True,
        attention_bias=False, activation_fn="gelu", norm_eps=1e-6,
    ),
}
TIMESTEPS = [999, 37]
SHARED_T = 500
# DiTPipeline hard-codes the null class 1000, so its model has DiT's 1000 classes.
PIPE_MODEL = dict(num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=8, num_layers=1,
                  sample_size=8, patch_size=2, num_embeds_ada_norm=1000)
# scheduler, steps, guidance scale
PIPELINES = {"dpm": (DPMSolverMultistepScheduler, 6, 4.0), "ddpm": (DDPMScheduler, 4, 1.5),
             "unguided": (DPMSolverMultistepScheduler, 3, 1.0)}
PIPE_LABELS = [3, 917]


def record_noise(drawn):
    """Make the pipeline's and DDPM's randn_tensor record what it returns, in call order."""
    for m in (pipeline_dit, scheduling_ddpm):
        orig = m.randn_tensor

        def rec(*args, _orig=orig, **kwargs):
            x = _orig(*args, **kwargs)
            drawn.append(x.clone())
            return x

        m.randn_tensor = rec


def pipelines(tensors, meta):
    torch.manual_seed(7)
    model = DiTTransformer2DModel(**PIPE_MODEL).eval()
    model.save_pretrained(os.path.join(HERE, "dit_pipe"), safe_serialization=True)
    vae = AutoencoderKL.from_pretrained(os.path.join(HERE, "vae_tiny")).eval()
    drawn = []
    record_noise(drawn)
    meta["pipe_labels"], meta["pipelines"] = PIPE_LABELS, {}
    for name, (cls, steps, scale) in PIPELINES.items():
        drawn.clear()
        sched = cls()
        pipe = DiTPipeline(transformer=model, vae=vae, scheduler=sched)
        pipe.set_progress_bar_config(disable=True)
        with torch.no_grad():
            images = pipe(class_labels=PIPE_LABELS, guidance_scale=scale, num_inference_steps=steps,
                          generator=torch.Generator().manual_seed(9), output_type="pt").images
        tensors[f"pipe_{name}/images"] = images.contiguous()
        for i, z in enumerate(drawn):
            tensors[f"pipe_{name}/noise_{i}"] = z.contiguous()
        cfg = {k: v for k, v in sched.config.items() if not k.startswith("_")}
        cfg["_class_name"] = cls.__name__
        meta["pipelines"][name] = {"steps": steps, "guidance_scale": scale, "noise_draws": len(drawn),
                                   "scheduler": json.dumps(cfg)}


def main():
    tensors, meta = {}, {"models": list(MODELS), "timesteps": TIMESTEPS, "shared_timestep": SHARED_T, "labels": {}}
    for name, cfg in MODELS.items():
        torch.manual_seed(len(name))
        model = DiTTransformer2DModel(**cfg).eval()
        model.save_pretrained(os.path.join(HERE, name), safe_serialization=True)
        c, s = cfg["in_channels"], cfg["sample_size"]
        n = cfg["num_embeds_ada_norm"]
        labels = [3 % n, n]  # n is the null class (the table has n + 1 rows)
        meta["labels"][name] = labels
        gen = torch.Generator().manual_seed(1)
        x = torch.randn((2, c, s, s), generator=gen)
        big = torch.randn((1, c, s + 2 * cfg["patch_size"], s + 2 * cfg["patch_size"]), generator=gen)
        lab = torch.tensor(labels)
        with torch.no_grad():
            out = model(x, timestep=torch.tensor(TIMESTEPS), class_labels=lab).sample
            shared = model(x, timestep=torch.tensor([SHARED_T] * 2), class_labels=lab).sample
            out_big = model(big, timestep=torch.tensor([TIMESTEPS[1]]), class_labels=lab[:1]).sample
        tensors[f"{name}/sample"] = x
        tensors[f"{name}/out"] = out
        tensors[f"{name}/out_shared"] = shared
        tensors[f"{name}/sample_big"] = big
        tensors[f"{name}/out_big"] = out_big
    pipelines(tensors, meta)
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(HERE, "dit_refs.safetensors"))
    with open(os.path.join(HERE, "dit_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
