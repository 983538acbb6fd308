"""Reference vectors for diffuse's ControlNetModel and ControlNet pipelines, made by diffusers (test-only).

CI never runs this. Run from the repository root with the project's Python (PyTorch, diffusers 0.42)
and transformers importable (the pipelines' modules import it; no text model is built), after
make_cond_refs.py and make_vae_refs.py (it loads their tiny UNets and VAE):

    python diffuse/testdata/make_controlnet_refs.py

It builds tiny ControlNetModels shaped for the tiny UNet2DConditionModels (ControlNetModel.from_unet
without copying the UNet's weights: each gets its own seeded diffusers initialisation, and the
zero-initialised convolutions, which would make every residual zero, are re-drawn with torch's
default initialisation), writes each with save_pretrained into testdata/<name>/ in float16 (to keep
the files small; everything below runs on those weights in float32), and records, in
float32 on the CPU, in controlnet_refs.safetensors:

- <name>/sample, <name>/encoder_hidden_states, <name>/cond: a seeded batch, random encoder states
  and a seeded control image in [0, 1];
- <name>/down_<i>, <name>/mid: the ControlNet's residuals at timestep 500 with conditioning_scale
  0.7;
- <name>/unet_<t>: the matching UNet's output with the ControlNet's residuals (scale 1) added, at
  timesteps 999 and 37;
- pipe_<run>/latents (and /images for img2img) and pipe_<run>/noise_<k>: StableDiffusionControlNet
  Pipeline and StableDiffusionControlNetImg2ImgPipeline on unet2dcond_tiny, controlnet_tiny and
  vae_tiny (the VAE sets the control image's scale, 2, and encodes and decodes for img2img) with
  fixed random prompt embeddings, with every noise tensor they drew (randn_tensor is patched in
  their modules, so the Go test feeds the same numbers);
- controlnet_refs.json: each run's scheduler config, steps, guidance, conditioning scale, control
  guidance window and batching.
"""

import json
import os

import torch
from diffusers import (
    AutoencoderKL,
    ControlNetModel,
    DDIMScheduler,
    EulerAncestralDiscreteScheduler,
    EulerDiscreteScheduler,
    StableDiffusionControlNetImg2ImgPipeline,
    StableDiffusionControlNetPipeline,
    UNet2DConditionModel,
)
from diffusers.models.autoencoders import vae as vae_module
from diffusers.pipelines.controlnet import pipeline_controlnet, pipeline_controlnet_img2img
from diffusers.schedulers import scheduling_ddim, scheduling_euler_ancestral_discrete
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

# ControlNet name: (its UNet, from_unet's extra arguments). The tiny one has Stable Diffusion's
# layout with a two-level conditioning embedding (the control image is twice the latents' size);
# the variant inherits the variant UNet's options (linear projections, per-block heads, scale-shift
# time conditioning, ...), takes its image in BGR order and embeds it over three levels (scale 4).
MODELS = {
    "controlnet_tiny": ("unet2dcond_tiny", dict(conditioning_embedding_out_channels=(8, 16))),
    "controlnet_variant": ("unet2dcond_variant", dict(conditioning_embedding_out_channels=(4, 8, 8),
                                                      controlnet_conditioning_channel_order="bgr")),
}
SEQ = 7
RESIDUAL_T, RESIDUAL_SCALE = 500, 0.7
UNET_TIMESTEPS = [999, 37]

# Stable Diffusion's DDIM configuration. DDIM's default (linear betas, alphas_cumprod[999] = 4e-5)
# divides the first steps' noise prediction by sqrt(alphas_cumprod) ~ 0.006, so float32 reordering
# in the ControlNet's residuals grows a thousandfold over a guided run; SD's scaled_linear schedule
# keeps that within the tolerance.
SD_DDIM = dict(beta_schedule="scaled_linear", beta_start=0.00085, beta_end=0.012, clip_sample=False,
               set_alpha_to_one=False, steps_offset=1)

# Pipeline runs: pipeline, scheduler and its config, steps, guidance, conditioning scale, (start, end),
# prompts, images per prompt, control images, strength (img2img only), extra call arguments.
RUNS = {
    "ddim": ("txt2img", DDIMScheduler, SD_DDIM, 6, 7.5, 0.8, (0.1, 0.8), 2, 1, 1, None, {"eta": 0.0}),
    "euler_a": ("txt2img", EulerAncestralDiscreteScheduler, {}, 5, 3.0, 1.0, (0.0, 1.0), 2, 2, 2, None, {}),
    "euler_unguided": ("txt2img", EulerDiscreteScheduler, {}, 4, 1.0, 1.3, (0.0, 0.5), 1, 1, 1, None, {}),
    "img2img": ("img2img", DDIMScheduler, SD_DDIM, 8, 5.0, 0.9, (0.2, 1.0), 1, 1, 1, 0.6, {"eta": 0.0}),
}
LATENT = 8  # the pipelines' latents are LATENT x LATENT


def record_noise(drawn):
    """Make every randn_tensor the runs reach record what it returns, in call order."""
    for m in (pipeline_controlnet, pipeline_controlnet_img2img, vae_module, scheduling_ddim,
              scheduling_euler_ancestral_discrete):
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


def make_controlnet(name, unet, extra):
    torch.manual_seed(len(name) + 100)
    net = ControlNetModel.from_unet(unet, load_weights_from_unet=False, **extra).eval()
    zeroed = [net.controlnet_mid_block, net.controlnet_cond_embedding.conv_out, *net.controlnet_down_blocks]
    for conv in zeroed:
        conv.reset_parameters()
    # Stored in float16 to keep the files small; the references are computed with the stored
    # weights read back as float32, which is what the Go test loads.
    net.to(torch.float16).save_pretrained(os.path.join(HERE, name), safe_serialization=True)
    return ControlNetModel.from_pretrained(os.path.join(HERE, name), torch_dtype=torch.float32).eval()


def model_refs(tensors, unets):
    for name, (unet_name, extra) in MODELS.items():
        unet = unets[unet_name]
        net = make_controlnet(name, unet, extra)
        c, s = unet.config.in_channels, unet.config.sample_size
        f = 2 ** (len(extra["conditioning_embedding_out_channels"]) - 1)
        gen = torch.Generator().manual_seed(2)
        x = torch.randn((2, c, s, s), generator=gen)
        enc = torch.randn((2, SEQ, unet.config.cross_attention_dim), generator=gen)
        cond = torch.rand((2, net.config.conditioning_channels, s * f, s * f), generator=gen)
        tensors[f"{name}/sample"], tensors[f"{name}/encoder_hidden_states"], tensors[f"{name}/cond"] = x, enc, cond
        with torch.no_grad():
            down, mid = net(x, torch.tensor(RESIDUAL_T), enc, cond, conditioning_scale=RESIDUAL_SCALE,
                            return_dict=False)
            for i, d in enumerate(down):
                tensors[f"{name}/down_{i}"] = d.contiguous()
            tensors[f"{name}/mid"] = mid.contiguous()
            for t in UNET_TIMESTEPS:
                down, mid = net(x, torch.tensor(t), enc, cond, return_dict=False)
                out = unet(x, torch.tensor(t), enc, down_block_additional_residuals=down,
                           mid_block_additional_residual=mid).sample
                tensors[f"{name}/unet_{t}"] = out.contiguous()


def main():
    tensors = {}
    meta = {"models": list(MODELS), "residual_t": RESIDUAL_T, "residual_scale": RESIDUAL_SCALE,
            "unet_timesteps": UNET_TIMESTEPS, "runs": {}}
    unets = {n: UNet2DConditionModel.from_pretrained(os.path.join(HERE, n)).eval()
             for n in ("unet2dcond_tiny", "unet2dcond_variant")}
    model_refs(tensors, unets)

    unet = unets["unet2dcond_tiny"]
    net = ControlNetModel.from_pretrained(os.path.join(HERE, "controlnet_tiny")).eval()
    vae = AutoencoderKL.from_pretrained(os.path.join(HERE, "vae_tiny")).eval()
    side = LATENT * 2  # vae_tiny and controlnet_tiny scale by 2
    gen = torch.Generator().manual_seed(9)
    control = torch.rand((2, 3, side, side), generator=gen)
    init = torch.rand((1, 3, side, side), generator=gen)
    prompts = torch.randn((2, SEQ, unet.config.cross_attention_dim), generator=gen)
    negative = torch.randn((2, SEQ, unet.config.cross_attention_dim), generator=gen)
    tensors["pipe/control"], tensors["pipe/init"] = control, init
    tensors["pipe/prompt_embeds"], tensors["pipe/negative_prompt_embeds"] = prompts, negative
    drawn = []
    record_noise(drawn)
    for run, (kind, cls, sched_cfg, steps, scale, cscale, window, n_prompts, per_prompt, n_control, strength,
              kwargs) in RUNS.items():
        common = dict(vae=vae, text_encoder=None, tokenizer=None, unet=unet, controlnet=net, scheduler=cls(**sched_cfg),
                      safety_checker=None, feature_extractor=None, requires_safety_checker=False)
        args = dict(prompt_embeds=prompts[:n_prompts], negative_prompt_embeds=negative[:n_prompts],
                    num_inference_steps=steps, guidance_scale=scale, num_images_per_prompt=per_prompt,
                    controlnet_conditioning_scale=cscale, control_guidance_start=window[0],
                    control_guidance_end=window[1], **kwargs)
        if kind == "txt2img":
            pipe = StableDiffusionControlNetPipeline(**common)
            args["image"] = control[:n_control]
        else:
            pipe = StableDiffusionControlNetImg2ImgPipeline(**common)
            args.update(image=init, control_image=control[:n_control], strength=strength)
        pipe.set_progress_bar_config(disable=True)
        kinds = ("latent",) if kind == "txt2img" else ("pt", "latent")
        out = {}
        for k in kinds:
            drawn.clear()
            with torch.no_grad():
                out[k] = pipe(generator=torch.Generator().manual_seed(3), output_type=k, **args).images
        tensors[f"pipe_{run}/latents"] = out["latent"].contiguous()
        if "pt" in out:
            tensors[f"pipe_{run}/images"] = out["pt"].contiguous()
        for i, z in enumerate(drawn):
            tensors[f"pipe_{run}/noise_{i}"] = z.contiguous()
        meta["runs"][run] = {"kind": kind, "steps": steps, "guidance_scale": scale, "conditioning_scale": cscale,
                             "control_guidance_start": window[0], "control_guidance_end": window[1],
                             "prompts": n_prompts, "images_per_prompt": per_prompt, "control_images": n_control,
                             "strength": strength, "noise_draws": len(drawn), "scheduler": config_json(pipe.scheduler),
                             **kwargs}
    save_file(tensors, os.path.join(HERE, "controlnet_refs.safetensors"))
    with open(os.path.join(HERE, "controlnet_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
