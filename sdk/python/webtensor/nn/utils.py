"""Gradient clipping, as torch.nn.utils': the library scales or clamps the
gradients on their device (wt_clip_grad_norm, wt_clip_grad_value), nothing
waits for the GPU, and the total norm comes back as a 0-d Tensor."""

from __future__ import annotations

import ctypes as C
from collections.abc import Iterable

from .. import _lib
from .._tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _handles(parameters: Tensor | Iterable[Tensor]) -> list[int]:
    ps = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p._live() for p in ps]


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0) -> Tensor:
    """Scale the gradients so that their total norm_type-norm is at most
    max_norm (by min(1, max_norm / (total + 1e-6))); returns the total norm
    before clipping. Parameters without a gradient are skipped."""
    hs = _handles(parameters)
    total = C.c_int64()
    _lib.call("wt_clip_grad_norm", _lib.i64_array(hs), len(hs), float(max_norm), float(norm_type), C.byref(total))
    return Tensor._wrap(total.value)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    hs = _handles(parameters)
    _lib.call("wt_clip_grad_value", _lib.i64_array(hs), len(hs), float(clip_value))
