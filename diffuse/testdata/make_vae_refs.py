"""Reference vectors for diffuse's AutoencoderKL, made by diffusers (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42):

    python diffuse/testdata/make_vae_refs.py

It builds tiny AutoencoderKLs with seeded random weights (diffusers' own initialisation), writes each
with save_pretrained into testdata/<name>/ (config.json and diffusion_pytorch_model.safetensors), and
records, in float32 on the CPU, in vae_refs.safetensors:

- <name>/images: a seeded batch of images in [-1, 1];
- <name>/mean, <name>/logvar: encode(images).latent_dist's mean and (clamped) logvar;
- <name>/noise, <name>/sample: the noise the posterior's sample() drew (randn_tensor is patched in
  diffusers' vae module so the Go test feeds the same noise) and the sample it returned;
- <name>/decoded: decode(sample);
- <name>/latents, <name>/full, <name>/tiled: a seeded latent larger than one tile, its plain decode,
  and its decode with enable_tiling() and the tile sizes of vae_refs.json (tile_latent_min_size,
  tile_sample_min_size = tile_latent_min_size * 2^(levels - 1), tile_overlap_factor), which tile it
  with overlapping tiles and blend them with blend_v / blend_h.
"""

import json
import os

import torch
from diffusers import AutoencoderKL
from diffusers.models.autoencoders import vae as vae_module
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    # Two levels, quant convs, the mid blocks' attention: the layout of Stable Diffusion's VAE.
    "vae_tiny": dict(
        in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(16, 32), layers_per_block=1,
        latent_channels=4, norm_num_groups=8, sample_size=32,
    ),
    # The other options: three levels, two layers per block, other channel counts, no quant_conv,
    # no post_quant_conv, no mid-block attention, another scaling factor, no upcast.
    "vae_variant": dict(
        in_channels=4, out_channels=2, down_block_types=("DownEncoderBlock2D",) * 3,
        up_block_types=("UpDecoderBlock2D",) * 3, block_out_channels=(8, 16, 16), layers_per_block=2,
        latent_channels=3, norm_num_groups=4, sample_size=16, scaling_factor=0.13025, force_upcast=False,
        use_quant_conv=False, use_post_quant_conv=False, mid_block_add_attention=False,
    ),
}
# Tiles of 4 latent pixels overlapping by one (int(4 * 0.75) = 3 apart); the latents are 8 x 10, so
# the tiles start at rows 0, 3, 6 and columns 0, 3, 6, 9 (the last ones partial).
TILE_LATENT, OVERLAP_FACTOR, LATENT_HW = 4, 0.25, (8, 10)


def main():
    tensors, meta = {}, {"models": list(MODELS), "tile_latent": TILE_LATENT, "overlap_factor": OVERLAP_FACTOR,
                         "overlap_latent": TILE_LATENT - int(TILE_LATENT * (1 - OVERLAP_FACTOR))}
    drawn = []
    orig = vae_module.randn_tensor

    def rec(*args, **kwargs):
        x = orig(*args, **kwargs)
        drawn.append(x.clone())
        return x

    vae_module.randn_tensor = rec
    for name, cfg in MODELS.items():
        torch.manual_seed(len(name))
        vae = AutoencoderKL(**cfg).eval()
        vae.save_pretrained(os.path.join(HERE, name), safe_serialization=True)
        gen = torch.Generator().manual_seed(1)
        s = cfg["sample_size"]
        x = torch.rand((2, cfg["in_channels"], s, s), generator=gen) * 2 - 1
        tensors[f"{name}/images"] = x
        with torch.no_grad():
            post = vae.encode(x).latent_dist
            tensors[f"{name}/mean"] = post.mean.contiguous()
            tensors[f"{name}/logvar"] = post.logvar.contiguous()
            drawn.clear()
            z = post.sample(generator=torch.Generator().manual_seed(2))
            assert len(drawn) == 1
            tensors[f"{name}/noise"] = drawn[0].contiguous()
            tensors[f"{name}/sample"] = z.contiguous()
            tensors[f"{name}/decoded"] = vae.decode(z).sample.contiguous()

            lat = torch.randn((2, cfg["latent_channels"], *LATENT_HW), generator=gen)
            tensors[f"{name}/latents"] = lat
            tensors[f"{name}/full"] = vae.decode(lat).sample.contiguous()
            f = 2 ** (len(cfg["block_out_channels"]) - 1)
            vae.enable_tiling()
            vae.tile_latent_min_size = TILE_LATENT
            vae.tile_sample_min_size = TILE_LATENT * f
            vae.tile_overlap_factor = OVERLAP_FACTOR
            tensors[f"{name}/tiled"] = vae.decode(lat).sample.contiguous()
            vae.disable_tiling()
    vae_module.randn_tensor = orig
    save_file(tensors, os.path.join(HERE, "vae_refs.safetensors"))
    with open(os.path.join(HERE, "vae_refs.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
