"""Diffusion pipelines from diffusers folders: the library's samplers (the
Go package diffuse, through the C ABI's wt_diffusion_*).

    import webtensor as wt
    pipe = wt.diffuse.Pipeline("ddpm-folder")      # DDPM, DDIM or DiT pipeline
    images = pipe.generate(batch=4, steps=50, seed=0)   # (4, C, H, W) in [0, 1]
    small = wt.diffuse.Pipeline("ddpm-folder", int8_weights=True)   # a quarter of the weight bytes

The noise comes from the library's Philox stream: the same seed gives the
same images on one device, from every SDK.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import _lib
from ._objects import Handle, device_arg, load, new_tensor
from ._tensor import Tensor


class Pipeline(Handle):
    """A folder save_pretrained wrote for DDPMPipeline, DDIMPipeline (unet/,
    scheduler/) or DiTPipeline (transformer/, vae/, scheduler/)."""

    _free, _what = "wt_diffusion_free", "diffusion pipeline"

    def __init__(self, path: str | os.PathLike, device: str | None = None, int8_weights: bool = False):
        """int8_weights holds the models' linear and conv weights as int8 with one
        f32 scale per output channel (wt_diffusion_quantize_int8), dequantised
        layer by layer as they run."""
        super().__init__(load("wt_diffusion_load", path, device_arg(device)))
        if int8_weights:
            _lib.call("wt_diffusion_quantize_int8", self._h)
        info: dict[str, Any] = json.loads(_lib.read_string("wt_diffusion_info_json", self._h))
        self.pipeline: str = info["pipeline"]
        self.scheduler: str = info["scheduler"]
        self.image_shape: tuple[int, ...] = tuple(info["image_shape"])
        self.class_conditional: bool = info["class_conditional"]
        self.device: str = info["device"]
        self.weight_bytes: int = info["weight_bytes"]
        self.int8_weights: bool = info["int8_weights"]

    def generate(self, batch: int = 1, steps: int = 50, seed: int = 0, scheduler: str | None = None) -> Tensor:
        """batch images (batch, C, H, W) in [0, 1]; scheduler names another
        diffusers scheduler class to sample with (its config converted from
        the folder's)."""
        return new_tensor("wt_diffusion_generate", self._live(), batch, steps, seed,
                          scheduler.encode() if scheduler else None)

    def generate_classes(self, labels: list[int], steps: int = 50, seed: int = 0, guidance_scale: float = 4.0,
                         scheduler: str | None = None) -> Tensor:
        """One image per class label (DiT), with classifier-free guidance."""
        return new_tensor("wt_diffusion_generate_classes", self._live(), _lib.i64_array(labels), len(labels), steps,
                          seed, guidance_scale, scheduler.encode() if scheduler else None)

    def __repr__(self) -> str:
        return f"diffuse.Pipeline({self.pipeline}, scheduler={self.scheduler}, image_shape={self.image_shape}, " \
               f"device={self.device!r}, int8_weights={self.int8_weights})"
