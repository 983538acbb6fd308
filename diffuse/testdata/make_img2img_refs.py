"""Reference vectors for diffuse's img2img, made by diffusers (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42) and transformers
importable (the Stable Diffusion pipelines' modules import it; no text model is built), after
make_cond_refs.py and make_vae_refs.py (it loads their tiny models):

    PYTHONPATH=/path/to/transformers python diffuse/testdata/make_img2img_refs.py

It records in img2img_refs.safetensors, in float32 on the CPU:

- StableDiffusionImg2ImgPipeline on unet2dcond_tiny and vae_tiny with fixed random prompt
  embeddings (no text encoder) for one seeded image in [0, 1], over several schedulers, strengths
  and batchings (two prompts, images per prompt): the images (output_type "pt", in [0, 1]) and the
  latents before decoding (a second run with output_type "latent"), with every noise tensor drawn
  (the posterior's sample, the added noise, the schedulers' noise; randn_tensor is patched in their
  modules, so the Go test feeds the same numbers);
- pixel-space img2img on unet2d_tiny (diffusers has no pipeline for it, so the script writes the
  pipeline's own steps: get_timesteps, add_noise at the first kept timestep, the loop) with DDPM;
- img2img_refs.json: each run's scheduler config, steps, strength, guidance and batching.
"""

import json
import os

import torch
from diffusers import (
    AutoencoderKL,
    DDIMScheduler,
    DDPMScheduler,
    DPMSolverMultistepScheduler,
    EulerAncestralDiscreteScheduler,
    EulerDiscreteScheduler,
    LMSDiscreteScheduler,
    PNDMScheduler,
    StableDiffusionImg2ImgPipeline,
    UNet2DConditionModel,
    UNet2DModel,
)
from diffusers.models.autoencoders import vae as vae_module
from diffusers.pipelines.stable_diffusion import pipeline_stable_diffusion_img2img
from diffusers.schedulers import (
    scheduling_ddim,
    scheduling_ddpm,
    scheduling_dpmsolver_multistep,
    scheduling_euler_ancestral_discrete,
)
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

# scheduler, its config, steps, strength, guidance, prompts, images per prompt, extra arguments
RUNS = {
    "ddim": (DDIMScheduler, {}, 10, 0.6, 7.5, 1, 1, {"eta": 0.0}),
    "euler": (EulerDiscreteScheduler, {}, 8, 0.75, 5.0, 2, 1, {}),
    "euler_a": (EulerAncestralDiscreteScheduler, {}, 6, 0.5, 3.0, 1, 2, {}),
    "lms": (LMSDiscreteScheduler, {}, 8, 0.7, 4.0, 1, 1, {}),
    "dpm": (DPMSolverMultistepScheduler, {}, 10, 0.55, 6.0, 2, 2, {}),
    "pndm": (PNDMScheduler, {"skip_prk_steps": True}, 10, 0.45, 5.0, 1, 1, {}),
    "ddim_unguided": (DDIMScheduler, {}, 5, 1.0, 1.0, 1, 1, {"eta": 0.5}),
}
SEQ = 7
PIXEL = {"steps": 12, "strength": 0.4}


def record_noise(drawn):
    """Make every randn_tensor the runs reach record what it returns, in call order.

    EulerDiscreteScheduler also draws a tensor every step, but only uses it with s_churn > 0 (not
    here), and webtensor draws it only when used, so its module is left unpatched.
    """
    for m in (pipeline_stable_diffusion_img2img, vae_module, scheduling_ddim, scheduling_ddpm,
              scheduling_dpmsolver_multistep, scheduling_euler_ancestral_discrete):
        orig = m.randn_tensor

        def rec(*args, _orig=orig, **kwargs):
            x = _orig(*args, **kwargs)
            drawn.append(x.clone())
            return x

        m.randn_tensor = rec


def config_json(sched):
    cfg = {k: v for k, v in sched.config.items() if not k.startswith("_")}
    cfg["_class_name"] = type(sched).__name__
    return json.dumps(cfg)


def main():
    tensors, meta = {}, {"runs": {}}
    unet = UNet2DConditionModel.from_pretrained(os.path.join(HERE, "unet2dcond_tiny")).eval()
    vae = AutoencoderKL.from_pretrained(os.path.join(HERE, "vae_tiny")).eval()
    gen = torch.Generator().manual_seed(11)
    side = unet.config.sample_size * 2  # vae_tiny downsamples once
    image = torch.rand((1, 3, side, side), generator=gen)
    prompts = torch.randn((2, SEQ, unet.config.cross_attention_dim), generator=gen)
    negative = torch.randn((1, SEQ, unet.config.cross_attention_dim), generator=gen)
    tensors["image"], tensors["prompt_embeds"], tensors["negative_prompt_embeds"] = image, prompts, negative
    drawn = []
    record_noise(drawn)
    for name, (cls, extra, steps, strength, scale, n_prompts, per_prompt, kwargs) in RUNS.items():
        pipe = StableDiffusionImg2ImgPipeline(vae=vae, text_encoder=None, tokenizer=None, unet=unet,
                                              scheduler=cls(**extra), safety_checker=None,
                                              feature_extractor=None, requires_safety_checker=False)
        pipe.set_progress_bar_config(disable=True)
        args = dict(image=image, strength=strength, prompt_embeds=prompts[:n_prompts],
                    negative_prompt_embeds=negative.repeat(n_prompts, 1, 1), num_inference_steps=steps,
                    guidance_scale=scale, num_images_per_prompt=per_prompt, **kwargs)
        out = {}
        for kind in ("pt", "latent"):
            drawn.clear()
            with torch.no_grad():
                out[kind] = pipe(generator=torch.Generator().manual_seed(3), output_type=kind, **args).images
        tensors[f"{name}/images"] = out["pt"].contiguous()
        tensors[f"{name}/latents"] = out["latent"].contiguous()
        for i, z in enumerate(drawn):
            tensors[f"{name}/noise_{i}"] = z.contiguous()
        meta["runs"][name] = {"steps": steps, "strength": strength, "guidance_scale": scale,
                              "prompts": n_prompts, "images_per_prompt": per_prompt,
                              "noise_draws": len(drawn), "scheduler": config_json(pipe.scheduler), **kwargs}

    # Pixel space: StableDiffusionImg2ImgPipeline's steps written out for a UNet2DModel.
    model = UNet2DModel.from_pretrained(os.path.join(HERE, "unet2d_tiny")).eval()
    sched = DDPMScheduler()
    steps, strength = PIXEL["steps"], PIXEL["strength"]
    sched.set_timesteps(steps)
    keep = min(int(steps * strength), steps)
    timesteps = sched.timesteps[steps - keep:]
    s = model.config.sample_size
    gen = torch.Generator().manual_seed(13)
    pixels = torch.rand((2, 3, s, s), generator=gen) * 2 - 1
    drawn.clear()
    noise = torch.randn(pixels.shape, generator=gen)
    drawn.append(noise)
    x = sched.add_noise(pixels, noise, timesteps[:1].repeat(2))
    with torch.no_grad():
        for t in timesteps:
            x = sched.step(model(x, t).sample, t, x, generator=gen).prev_sample
    tensors["pixel/images"], tensors["pixel/result"] = pixels, x
    for i, z in enumerate(drawn):
        tensors[f"pixel/noise_{i}"] = z.contiguous()
    meta["pixel"] = {**PIXEL, "noise_draws": len(drawn), "scheduler": config_json(sched)}
    save_file(tensors, os.path.join(HERE, "img2img_refs.safetensors"))
    with open(os.path.join(HERE, "img2img_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
