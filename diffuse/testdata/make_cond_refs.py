"""Reference vectors for diffuse's UNet2DConditionModel and CondPipeline, made by diffusers (test-only).

CI never runs this. Run from the repository root with the project's Python (PyTorch, diffusers 0.42)
and transformers importable (StableDiffusionPipeline's module imports it; no text model is built):

    PYTHONPATH=/path/to/transformers python diffuse/testdata/make_cond_refs.py

It builds tiny UNet2DConditionModels with seeded random weights (diffusers' own initialisation),
writes each with save_pretrained into testdata/<name>/, and records, in float32 on the CPU:

- cond_refs.safetensors: for every model, a seeded input batch, seeded random encoder hidden states
  (standing in for a text encoder's output) and the model's output at a few timesteps (a scalar one
  for the whole batch, and one per batch element);
- StableDiffusionPipeline's denoising loop (classifier-free guidance: the batch doubled as
  [negative, positive], noise_pred = uncond + s * (cond - uncond), scheduler.step) on the first
  model with fixed random prompt embeddings and output_type="latent", so no VAE or text encoder is
  involved, for DDIM, Euler and Euler ancestral; with every noise tensor the pipeline and the
  schedulers drew (randn_tensor is patched in their modules, so the Go test feeds the same noise);
- cond_refs.json: the timesteps, and each pipeline run's scheduler config, steps and guidance.
"""

import json
import os

import torch
from diffusers import (
    DDIMScheduler,
    EulerAncestralDiscreteScheduler,
    EulerDiscreteScheduler,
    StableDiffusionPipeline,
    UNet2DConditionModel,
)
from diffusers.pipelines.stable_diffusion import pipeline_stable_diffusion
from diffusers.schedulers import scheduling_ddim, scheduling_euler_ancestral_discrete
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    # Stable Diffusion's layout in miniature: cross-attention at every level, conv projections,
    # attention_head_dim meaning two heads per block.
    "unet2dcond_tiny": dict(
        sample_size=16, in_channels=4, out_channels=4, block_out_channels=(16, 32),
        down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
        layers_per_block=1, norm_num_groups=8, cross_attention_dim=24, attention_head_dim=2,
    ),
    # The other options: linear projections (SD 2's), a head count per block (the up path takes them
    # reversed, the mid block the last), a DownBlock2D/UpBlock2D level between cross-attention ones,
    # two transformer layers per block, upcast_attention, no flip, a frequency shift, a centred
    # input, padding-0 downsampling, scale-shift time conditioning, a mid-block scale factor and a
    # separate time embedding width.
    "unet2dcond_variant": dict(
        sample_size=8, in_channels=4, out_channels=3, block_out_channels=(16, 16, 24),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D", "CrossAttnUpBlock2D"),
        layers_per_block=1, transformer_layers_per_block=2, norm_num_groups=8, norm_eps=1e-6,
        cross_attention_dim=12, attention_head_dim=(2, 4, 3), use_linear_projection=True,
        upcast_attention=True, flip_sin_to_cos=False, freq_shift=1, center_input_sample=True,
        downsample_padding=0, mid_block_scale_factor=1.4142, time_embedding_dim=40,
        resnet_time_scale_shift="scale_shift",
    ),
}
TIMESTEPS = [999, 500, 37, 0]
PER_BATCH = [742, 3]
SEQ = 7  # the encoder states' sequence length (77 for CLIP; any length works)

# The CFG runs: scheduler, steps, guidance scale, images per prompt, extra call arguments.
PIPELINES = {
    "ddim": (DDIMScheduler, 6, 7.5, 1, {"eta": 0.0}),
    "euler": (EulerDiscreteScheduler, 8, 5.0, 1, {}),
    "euler_a": (EulerAncestralDiscreteScheduler, 5, 3.0, 2, {}),
}


def record_noise(drawn):
    """Make the pipeline's and schedulers' randn_tensor record what it returns, in call order.

    EulerDiscreteScheduler also draws a tensor every step, but only uses it with s_churn > 0 (not
    here), and webtensor draws it only when used, so its module is left unpatched.
    """
    for m in (pipeline_stable_diffusion, scheduling_ddim, scheduling_euler_ancestral_discrete):
        orig = m.randn_tensor

        def rec(*args, _orig=orig, **kwargs):
            x = _orig(*args, **kwargs)
            drawn.append(x.clone())
            return x

        m.randn_tensor = rec


def main():
    tensors, meta = {}, {"timesteps": TIMESTEPS, "per_batch": PER_BATCH, "models": list(MODELS)}
    models = {}
    for name, cfg in MODELS.items():
        torch.manual_seed(len(name))
        model = UNet2DConditionModel(**cfg).eval()
        model.save_pretrained(os.path.join(HERE, name), safe_serialization=True)
        models[name] = model
        c, s = cfg["in_channels"], cfg["sample_size"]
        gen = torch.Generator().manual_seed(1)
        x = torch.randn((2, c, s, s), generator=gen)
        enc = torch.randn((2, SEQ, cfg["cross_attention_dim"]), generator=gen)
        tensors[f"{name}/sample"] = x
        tensors[f"{name}/encoder_hidden_states"] = enc
        with torch.no_grad():
            for t in TIMESTEPS:
                tensors[f"{name}/out_{t}"] = model(x, torch.tensor(t), enc).sample.contiguous()
            tensors[f"{name}/out_per_batch"] = model(x, torch.tensor(PER_BATCH), enc).sample.contiguous()

    drawn = []
    record_noise(drawn)
    unet = models["unet2dcond_tiny"]
    gen = torch.Generator().manual_seed(5)
    prompt = torch.randn((2, SEQ, 24), generator=gen)
    negative = torch.randn((2, SEQ, 24), generator=gen)
    tensors["pipe/prompt_embeds"] = prompt
    tensors["pipe/negative_prompt_embeds"] = negative
    meta["pipelines"] = {}
    for pname, (cls, steps, scale, per_prompt, kwargs) in PIPELINES.items():
        drawn.clear()
        # No VAE: the pipeline then takes a latent scale factor of 8, so height and width are the
        # latents' times 8; output_type="latent" returns the latents before decoding.
        pipe = StableDiffusionPipeline(vae=None, text_encoder=None, tokenizer=None, unet=unet,
                                       scheduler=cls(), safety_checker=None, feature_extractor=None,
                                       requires_safety_checker=False)
        pipe.set_progress_bar_config(disable=True)
        side = unet.config.sample_size * 8
        with torch.no_grad():
            latents = pipe(prompt_embeds=prompt, negative_prompt_embeds=negative, height=side, width=side,
                           num_inference_steps=steps, guidance_scale=scale, num_images_per_prompt=per_prompt,
                           generator=torch.Generator().manual_seed(3), output_type="latent", **kwargs).images
        tensors[f"pipe_{pname}/latents"] = latents.contiguous()
        tensors[f"pipe_{pname}/noise"] = torch.stack(drawn).contiguous()
        cfg = {k: v for k, v in pipe.scheduler.config.items() if not k.startswith("_")}
        cfg["_class_name"] = cls.__name__
        meta["pipelines"][pname] = {"steps": steps, "guidance_scale": scale, "images_per_prompt": per_prompt,
                                    "noise_draws": len(drawn), "scheduler": json.dumps(cfg), **kwargs}
    save_file(tensors, os.path.join(HERE, "cond_refs.safetensors"))
    with open(os.path.join(HERE, "cond_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
