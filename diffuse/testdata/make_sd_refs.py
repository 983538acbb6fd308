"""Reference vectors for diffuse's StableDiffusionPipeline (text to image), made by diffusers (test-only).

CI never runs this. Run from the repository root with the project's Python (PyTorch, diffusers 0.42,
transformers 5, tokenizers):

    python diffuse/testdata/make_sd_refs.py

It builds a tiny Stable Diffusion with seeded random weights (diffusers' and transformers' own
initialisation): a UNet2DConditionModel in SD's layout, an AutoencoderKL, a CLIPTextModel (hidden 32,
2 layers, 4 heads) and a CLIPTokenizer whose vocabulary and merges are those of multimodal's
testdata/clip_bpe (a CLIP-layout BPE trained there). It writes the whole pipeline with
save_pretrained into testdata/sd_tiny/ in float16, to keep the files small (everything below runs
on the stored weights, reloaded in float32). The tokenizer folder also gets vocab.json and
merges.txt, the layout Stable Diffusion's own repositories ship (transformers 5 writes only
tokenizer.json); the script checks that transformers loads the same tokenizer from them with SD v1's
tokenizer_config.json, and sd_refs.json records that tokenizer's ids for texts spelling the special
tokens in other cases (SD v1's config marks <|startoftext|> normalized, so it matches lowercased).

Then StableDiffusionPipeline.from_pretrained(sd_tiny) runs in float32 on the CPU for each run of
RUNS, with a fixed generator and output_type="np", and sd_refs.safetensors records per run:

- <run>/input_ids, <run>/negative_input_ids: the tokenizer's ids (padded and truncated to
  model_max_length) for the prompts and the negative prompts ("" for each without them);
- <run>/prompt_embeds, <run>/negative_prompt_embeds: encode_prompt's text encoder states, one row
  per prompt;
- <run>/noise: every noise tensor the pipeline and the scheduler drew (randn_tensor is patched in
  their modules, so the Go test feeds the same numbers), the initial latents first;
- <run>/latents: the final latents (output_type="latent", the same generator);
- <run>/images: the images in [0, 1], (batch, height, width, 3) as output_type="np" gives them.

sd_refs.json holds each run's prompts, negative prompts, scheduler class, steps, guidance scale and
images per prompt.
"""

import json
import os
import shutil
import tempfile

import torch
from diffusers import (
    AutoencoderKL,
    DDIMScheduler,
    EulerAncestralDiscreteScheduler,
    StableDiffusionPipeline,
    UNet2DConditionModel,
)
from diffusers.pipelines.stable_diffusion import pipeline_stable_diffusion
from diffusers.schedulers import scheduling_ddim, scheduling_euler_ancestral_discrete
from safetensors.torch import save_file
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sd_tiny")
BPE = os.path.join(HERE, "..", "..", "multimodal", "testdata", "clip_bpe", "tokenizer.json")

# Stable Diffusion's layout in miniature: cross-attention at both levels, conv projections, two heads.
UNET = dict(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(8, 16),
            down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
            layers_per_block=1, norm_num_groups=4, cross_attention_dim=32, attention_head_dim=2)
# Two levels: latents are half the image's side (vae_scale_factor 2), so images are 16×16.
VAE = dict(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 16),
           down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
           up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
           layers_per_block=1, norm_num_groups=4, sample_size=16)
# Stable Diffusion v1's DDIM settings.
SCHEDULER = dict(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                 set_alpha_to_one=False, steps_offset=1)

LONG = " ".join(["a very detailed and intricate painting of a castle on a hill"] * 8)
# run: prompts, negative prompts (None: diffusers' empty prompt), scheduler (None: the folder's),
# steps, guidance scale, images per prompt.
RUNS = {
    "ddim": (["a photo of an astronaut riding a horse on mars", "A watercolor painting of a fox, 4k!"],
             None, None, 5, 7.5, 2),
    # Negative prompts, a prompt past 77 tokens (truncated), a stochastic scheduler.
    "euler_a": ([LONG, "an oil painting of a lighthouse at dawn"], ["blurry, low quality", ""],
                EulerAncestralDiscreteScheduler, 4, 4.0, 1),
}


def record_noise(drawn):
    """Make the pipeline's and the schedulers' randn_tensor record what it returns, in call order."""
    for m in (pipeline_stable_diffusion, scheduling_ddim, scheduling_euler_ancestral_discrete):
        orig = m.randn_tensor

        def rec(*args, _orig=orig, **kwargs):
            x = _orig(*args, **kwargs)
            drawn.append(x.clone())
            return x

        m.randn_tensor = rec


def tokenizer():
    """A CLIPTokenizer on clip_bpe's vocabulary and merges."""
    model = json.load(open(BPE))["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return CLIPTokenizer(vocab=model["vocab"], merges=merges, model_max_length=77), model


def write_vocab_files(model, folder):
    """vocab.json and merges.txt as CLIPTokenizer's slow form wrote them (SD v1's layout)."""
    with open(os.path.join(folder, "vocab.json"), "w") as f:
        json.dump(model["vocab"], f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
        for m in model["merges"]:
            f.write((" ".join(m) if isinstance(m, list) else m) + "\n")


# Stable Diffusion v1's tokenizer_config.json (its special tokens as AddedToken dicts, bos
# normalized), for the vocab.json + merges.txt layout.
SD1_TOKENIZER_CONFIG = {
    "add_prefix_space": False, "do_lower_case": True, "errors": "replace", "model_max_length": 77,
    "pad_token": "<|endoftext|>", "tokenizer_class": "CLIPTokenizer",
    **{k: {"__type": "AddedToken", "content": v, "lstrip": False, "normalized": True, "rstrip": False,
           "single_word": False}
       for k, v in [("bos_token", "<|startoftext|>"), ("eos_token", "<|endoftext|>"), ("unk_token", "<|endoftext|>")]},
}
# Texts for the vocab layout: the runs' prompts and special tokens spelt in other cases.
SPECIAL_TEXTS = ["<|StartOfText|> A <|EndOfText|> b <|startoftext|>", "x<|endoftext|>y", "It's 2 o'clock!!"]


def vocab_layout(tok, model, meta):
    """transformers loads the tokenizer from vocab.json, merges.txt and SD v1's tokenizer_config.json
    alone: the same ids as tokenizer.json for the prompts; meta records its ids for SPECIAL_TEXTS."""
    texts = [p for run in RUNS.values() for p in run[0] + (run[1] or [])]
    kw = dict(padding="max_length", max_length=77, truncation=True)
    with tempfile.TemporaryDirectory() as d:
        write_vocab_files(model, d)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(SD1_TOKENIZER_CONFIG, f)
        slow = CLIPTokenizer.from_pretrained(d)
        assert slow(texts, **kw).input_ids == tok(texts, **kw).input_ids
        meta["vocab_layout"] = {"tokenizer_config": SD1_TOKENIZER_CONFIG, "texts": SPECIAL_TEXTS,
                                "input_ids": slow(SPECIAL_TEXTS, **kw).input_ids}


def build(meta):
    tok, model = tokenizer()
    torch.manual_seed(0)
    unet = UNet2DConditionModel(**UNET).eval()
    vae = AutoencoderKL(**VAE).eval()
    text = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(model["vocab"]), hidden_size=32, intermediate_size=37, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=77, hidden_act="quick_gelu", projection_dim=16,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)).eval()
    pipe = StableDiffusionPipeline(vae=vae, text_encoder=text, tokenizer=tok, unet=unet,
                                   scheduler=DDIMScheduler(**SCHEDULER), safety_checker=None,
                                   feature_extractor=None, requires_safety_checker=False)
    shutil.rmtree(OUT, ignore_errors=True)
    pipe.to(torch.float16).save_pretrained(OUT, safe_serialization=True)
    write_vocab_files(model, os.path.join(OUT, "tokenizer"))
    vocab_layout(tok, model, meta)


def main():
    meta = {"runs": {}}
    build(meta)
    pipe = StableDiffusionPipeline.from_pretrained(OUT, torch_dtype=torch.float32)
    pipe.set_progress_bar_config(disable=True)
    folder_scheduler = pipe.scheduler
    drawn = []
    record_noise(drawn)
    tensors = {}
    kw = dict(padding="max_length", max_length=pipe.tokenizer.model_max_length, truncation=True, return_tensors="pt")
    for name, (prompts, negative, cls, steps, scale, per) in RUNS.items():
        pipe.scheduler = cls.from_config(folder_scheduler.config) if cls else folder_scheduler
        neg = negative or [""] * len(prompts)
        tensors[f"{name}/input_ids"] = pipe.tokenizer(prompts, **kw).input_ids
        tensors[f"{name}/negative_input_ids"] = pipe.tokenizer(neg, **kw).input_ids
        with torch.no_grad():
            emb, neg_emb = pipe.encode_prompt(prompts, "cpu", 1, True, negative_prompt=negative)
        tensors[f"{name}/prompt_embeds"] = emb
        tensors[f"{name}/negative_prompt_embeds"] = neg_emb
        args = dict(prompt=prompts, negative_prompt=negative, num_inference_steps=steps, guidance_scale=scale,
                    num_images_per_prompt=per)
        with torch.no_grad():
            drawn.clear()
            images = pipe(**args, generator=torch.Generator().manual_seed(11), output_type="np").images
            tensors[f"{name}/noise"] = torch.stack(drawn)
            noise_draws = len(drawn)
            latents = pipe(**args, generator=torch.Generator().manual_seed(11), output_type="latent").images
        tensors[f"{name}/latents"] = latents
        tensors[f"{name}/images"] = torch.from_numpy(images)
        print(name, "images in", float(images.min()), float(images.max()), "latents", tuple(latents.shape))
        meta["runs"][name] = {"prompts": prompts, "negative_prompts": negative,
                              "scheduler": pipe.scheduler.__class__.__name__, "steps": steps,
                              "guidance_scale": scale, "images_per_prompt": per, "noise_draws": noise_draws}
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(HERE, "sd_refs.safetensors"))
    with open(os.path.join(HERE, "sd_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
