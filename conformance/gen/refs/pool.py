"""References for pooling and resampling (torch.nn.functional).

The internal backward ops are references of the gradient they stand for:
torch.autograd.grad of the forward op.
"""

import torch
import torch.nn.functional as F

from ._util import _spatial


def _max_pool_args(attrs):
    kernel = _spatial(attrs, "kernel_size", 1)
    stride = attrs.get("stride")
    return dict(
        kernel_size=kernel,
        stride=_spatial(attrs, "stride", 1) if stride else kernel,
        padding=_spatial(attrs, "padding", 0),
        dilation=_spatial(attrs, "dilation", 1),
        ceil_mode=attrs.get("ceil_mode", False),
    )


def _avg_pool_args(attrs):
    kernel = _spatial(attrs, "kernel_size", 1)
    stride = attrs.get("stride")
    return dict(
        kernel_size=kernel,
        stride=_spatial(attrs, "stride", 1) if stride else kernel,
        padding=_spatial(attrs, "padding", 0),
        ceil_mode=attrs.get("ceil_mode", False),
        count_include_pad=attrs.get("count_include_pad", True),
        divisor_override=attrs.get("divisor_override"),
    )


def _interp_args(attrs):
    size, scale = attrs.get("size"), attrs.get("scale_factor")
    return dict(
        size=_spatial(attrs, "size", 0) if size is not None else None,
        scale_factor=_spatial(attrs, "scale_factor", 1.0) if scale is not None else None,
        mode=attrs.get("mode", "nearest"),
        align_corners=attrs.get("align_corners"),
    )


def _grad_of(fn, gy, x=None, shape=None):
    """The gradient of fn at x (or at zeros of shape: fn is linear) for upstream gy."""
    if x is None:
        x = torch.zeros(shape, dtype=gy.dtype)
    x = x.detach().clone().requires_grad_(True)
    return torch.autograd.grad(fn(x), x, gy)[0]


REFS = {
    "max_pool2d": lambda ins, a: F.max_pool2d(ins[0], **_max_pool_args(a)),
    "avg_pool2d": lambda ins, a: F.avg_pool2d(ins[0], **_avg_pool_args(a)),
    "adaptive_avg_pool2d": lambda ins, a: F.adaptive_avg_pool2d(ins[0], _spatial(a, "output_size", 1)),
    "interpolate": lambda ins, a: F.interpolate(ins[0], **_interp_args(a)),
    "_max_pool2d_backward": lambda ins, a: _grad_of(lambda x: F.max_pool2d(x, **_max_pool_args(a)), ins[0], x=ins[1]),
    "_avg_pool2d_backward": lambda ins, a: _grad_of(
        lambda x: F.avg_pool2d(x, **_avg_pool_args(a)), ins[0], shape=a["input_shape"]),
    "_adaptive_avg_pool2d_backward": lambda ins, a: _grad_of(
        lambda x: F.adaptive_avg_pool2d(x, tuple(ins[0].shape[-2:])), ins[0], shape=a["input_shape"]),
    "_interpolate_backward": lambda ins, a: _grad_of(
        lambda x: F.interpolate(x, **_interp_args(a)), ins[0], shape=a["input_shape"]),
}
