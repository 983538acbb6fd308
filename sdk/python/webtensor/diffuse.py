"""Diffusion pipelines from diffusers folders: the library's samplers (the
Go package diffuse, through the C ABI's wt_call: the diffusion.* targets
that docs/calls.md lists).

    import webtensor as wt
    pipe = wt.diffuse.Pipeline("ddpm-folder")      # DDPM, DDIM or DiT pipeline
    images = pipe.generate(batch=4, steps=50, seed=0)   # (4, C, H, W) in [0, 1]
    small = wt.diffuse.Pipeline("ddpm-folder", int8_weights=True)   # a quarter of the weight bytes

    sd = wt.diffuse.Pipeline("stable-diffusion-folder")  # StableDiffusionPipeline
    images = sd.generate_text(["a photo of an astronaut"], steps=30, seed=0)

    zipped = wt.diffuse.Pipeline.from_zip(open("pipe.zip", "rb").read())  # a zip of such a folder

The noise comes from the library's Philox stream: the same seed gives the
same images on one device, from every SDK.
"""

from __future__ import annotations

import os
from typing import Any

from ._objects import Handle, Inputs, call, text_list
from ._tensor import Tensor


class Pipeline(Handle):
    """A folder save_pretrained wrote for DDPMPipeline, DDIMPipeline (unet/,
    scheduler/), DiTPipeline (transformer/, vae/, scheduler/) or
    StableDiffusionPipeline (unet/, vae/, text_encoder/, tokenizer/,
    scheduler/; its safety checker is not run)."""

    _kind, _what = "diffusion", "diffusion pipeline"

    def __init__(self, path: str | os.PathLike, device: str | None = None, int8_weights: bool = False):
        """int8_weights holds the models' linear and conv weights as int8 with one
        f32 scale per output channel (diffusion.quantize_int8), dequantised
        layer by layer as they run."""
        super().__init__(call("diffusion.load", path=os.fsdecode(path), device=device))
        self._setup(int8_weights)

    @classmethod
    def from_zip(cls, data: bytes | bytearray | memoryview, device: str | None = None,
                 int8_weights: bool = False) -> Pipeline:
        """The pipeline in a zip archive of such a folder (its files at the root,
        or in one top-level folder as `zip -r pipe.zip pipe` nests them), from
        the archive's bytes. A hostile or broken archive (paths leaving it, a
        zip bomb, truncation, a missing file) raises ValueError naming the entry."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"Pipeline.from_zip takes the archive's bytes, got {type(data).__name__}")
        pipe = cls.__new__(cls)
        Handle.__init__(pipe, call("diffusion.load", data=bytes(data), device=device))
        pipe._setup(int8_weights)
        return pipe

    def _setup(self, int8_weights: bool) -> None:
        try:
            if int8_weights:
                call("diffusion.quantize_int8", self._h)
            info: dict[str, Any] = call("diffusion.info", self._h)
        except BaseException:
            self.close()
            raise
        self.pipeline: str = info["pipeline"]
        self.scheduler: str = info["scheduler"]
        self.image_shape: tuple[int, ...] = tuple(info["image_shape"])
        self.class_conditional: bool = info["class_conditional"]
        self.text_conditional: bool = info["text_conditional"]
        self.device: str = info["device"]
        self.weight_bytes: int = info["weight_bytes"]
        self.int8_weights: bool = info["int8_weights"]

    def generate(self, batch: int = 1, steps: int = 50, seed: int = 0, scheduler: str | None = None) -> Tensor:
        """batch images (batch, C, H, W) in [0, 1]; scheduler names another
        diffusers scheduler class to sample with (its config converted from
        the folder's)."""
        return Tensor._wrap(call("diffusion.generate", self._live(), batch=batch, steps=steps, seed=seed,
                                 scheduler=scheduler))

    def generate_classes(self, labels: list[int], steps: int = 50, seed: int = 0, guidance_scale: float = 4.0,
                         scheduler: str | None = None) -> Tensor:
        """One image per class label (DiT), with classifier-free guidance."""
        return Tensor._wrap(call("diffusion.generate_classes", self._live(), labels=list(labels),
                                 steps=steps, seed=seed, guidance_scale=guidance_scale, scheduler=scheduler))

    def generate_text(self, prompts: str | list[str], negative_prompts: str | list[str] | None = None,
                      steps: int = 50, seed: int = 0, guidance_scale: float = 7.5, images_per_prompt: int = 1,
                      height: int = 0, width: int = 0, scheduler: str | None = None,
                      latents: Any = None) -> Tensor:
        """Text to image (StableDiffusionPipeline): (len(prompts) *
        images_per_prompt, C, H, W) in [0, 1], each prompt's images adjacent.
        negative_prompts: None (the empty prompt), one, or one per prompt;
        guidance_scale <= 1 runs without guidance; height and width 0 take
        image_shape's. latents are the initial latents (diffusers' latents=);
        without them the seed's stream draws them."""
        negative = None if negative_prompts is None else text_list(negative_prompts)
        with Inputs() as ins:
            return Tensor._wrap(call("diffusion.generate_text", self._live(), prompts=text_list(prompts),
                                     negative_prompts=negative, images_per_prompt=images_per_prompt, steps=steps,
                                     seed=seed, guidance_scale=guidance_scale, height=height, width=width,
                                     scheduler=scheduler, latents=ins.optional(latents, "f32")))

    def encode_text(self, texts: str | list[str]) -> Tensor:
        """The text encoder's states for texts (len(texts), max length, width),
        what a text-to-image pipeline's UNet attends to."""
        return Tensor._wrap(call("diffusion.encode_text", self._live(), texts=text_list(texts)))

    def __repr__(self) -> str:
        return f"diffuse.Pipeline({self.pipeline}, scheduler={self.scheduler}, image_shape={self.image_shape}, " \
               f"device={self.device!r}, int8_weights={self.int8_weights})"
