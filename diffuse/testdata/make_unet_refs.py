"""Reference vectors for diffuse's UNets and pipelines, made by diffusers (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42):

    python diffuse/testdata/make_unet_refs.py

It builds tiny UNet2DModels with seeded random weights (diffusers' own initialisation), writes each
with save_pretrained into testdata/<name>/ (config.json and diffusion_pytorch_model.safetensors,
as a hub checkpoint is laid out), and records, in float32 on the CPU:

- unet_refs.safetensors: for every model, a seeded input batch and the model's output at a few
  timesteps (a scalar one for the whole batch, and one per batch element);
- the DDPMPipeline and DDIMPipeline loops on the first model, with every noise tensor the pipeline
  and the scheduler drew (randn_tensor is patched in their modules, so the Go test feeds the same
  noise) and the images before diffusers turns them into NumPy (NCHW, in [0, 1]);
- unet_refs.json: the timesteps, and the scheduler configs of the pipelines.
"""

import json
import os

import torch
from diffusers import DDIMPipeline, DDIMScheduler, DDPMPipeline, DDPMScheduler, UNet2DModel
from diffusers.pipelines.ddim import pipeline_ddim
from diffusers.pipelines.ddpm import pipeline_ddpm
from diffusers.schedulers import scheduling_ddim, scheduling_ddpm
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    # A tiny model with diffusers' defaults, one attention level.
    "unet2d_tiny": dict(
        sample_size=16, in_channels=3, out_channels=3, block_out_channels=(16, 32),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        layers_per_block=1, norm_num_groups=4, attention_head_dim=8,
    ),
    # The other options: three levels, two layers, no flip, a frequency shift, a centred input,
    # padding-0 downsampling (explicit pad), scale-shift time conditioning (the mid block's attention
    # then has no group norm), a mid-block scale factor, a separate time embedding width, heads of
    # the whole width (attention_head_dim None), attention at the first level.
    "unet2d_variant": dict(
        sample_size=8, in_channels=4, out_channels=2, block_out_channels=(16, 24, 32),
        down_block_types=("AttnDownBlock2D", "DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D", "AttnUpBlock2D"),
        layers_per_block=2, norm_num_groups=4, norm_eps=1e-6, attention_head_dim=None,
        flip_sin_to_cos=False, freq_shift=1, center_input_sample=True, downsample_padding=0,
        resnet_time_scale_shift="scale_shift", mid_block_scale_factor=1.4142, time_embedding_dim=40,
    ),
}
TIMESTEPS = [999, 500, 37, 0]
PER_BATCH = [742, 3]


def record_noise(drawn):
    """Make the pipelines' and schedulers' randn_tensor record what it returns, in call order."""
    for m in (pipeline_ddpm, pipeline_ddim, scheduling_ddpm, scheduling_ddim):
        orig = m.randn_tensor

        def rec(*args, _orig=orig, **kwargs):
            x = _orig(*args, **kwargs)
            drawn.append(x.clone())
            return x

        m.randn_tensor = rec


def main():
    torch.manual_seed(0)
    tensors, meta = {}, {"timesteps": TIMESTEPS, "per_batch": PER_BATCH, "models": list(MODELS)}
    models = {}
    for name, cfg in MODELS.items():
        torch.manual_seed(len(name))
        model = UNet2DModel(**cfg).eval()
        model.save_pretrained(os.path.join(HERE, name), safe_serialization=True)
        models[name] = model
        c, s = cfg["in_channels"], cfg["sample_size"]
        gen = torch.Generator().manual_seed(1)
        x = torch.randn((2, c, s, s), generator=gen)
        tensors[f"{name}/sample"] = x
        with torch.no_grad():
            for t in TIMESTEPS:
                tensors[f"{name}/out_{t}"] = model(x, torch.tensor(t)).sample.contiguous()
            tensors[f"{name}/out_per_batch"] = model(x, torch.tensor(PER_BATCH)).sample.contiguous()

    drawn = []
    record_noise(drawn)
    unet = models["unet2d_tiny"]
    pipes = {
        "ddpm": (DDPMPipeline(unet=unet, scheduler=DDPMScheduler()), 8, {}),
        "ddim": (DDIMPipeline(unet=unet, scheduler=DDIMScheduler()), 6, {"eta": 0.0}),
    }
    meta["pipelines"] = {}
    for pname, (pipe, steps, kwargs) in pipes.items():
        drawn.clear()
        pipe.set_progress_bar_config(disable=True)
        gen = torch.Generator().manual_seed(3)
        with torch.no_grad():
            img = pipe(batch_size=2, generator=gen, num_inference_steps=steps, output_type="pt", **kwargs).images
        tensors[f"pipe_{pname}/images"] = img.contiguous()
        tensors[f"pipe_{pname}/noise"] = torch.stack(drawn).contiguous()
        cfg = {k: v for k, v in pipe.scheduler.config.items() if not k.startswith("_")}
        cfg["_class_name"] = type(pipe.scheduler).__name__
        meta["pipelines"][pname] = {"steps": steps, "noise_draws": len(drawn), "scheduler": json.dumps(cfg),
                                    **kwargs}
    save_file(tensors, os.path.join(HERE, "unet_refs.safetensors"))
    with open(os.path.join(HERE, "unet_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
