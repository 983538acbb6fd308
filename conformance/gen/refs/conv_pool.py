"""References for convolution, pooling and resampling ops (torch.nn.functional).

The internal backward ops are references of the gradient they stand for:
torch.autograd.grad of the forward op, or torch.nn.grad.conv2d_weight.
"""

import torch
import torch.nn.functional as F
from torch.nn.grad import conv2d_weight


def _spatial(attrs, name, default, dims=2):
    """An int-list attribute as a tuple with one value per spatial dim."""
    v = attrs.get(name)
    if v is None:
        v = [default]
    if len(v) == 1:
        v = list(v) * dims
    return tuple(v)


def _conv_args(attrs, dims=2):
    return dict(
        stride=_spatial(attrs, "stride", 1, dims),
        padding=_spatial(attrs, "padding", 0, dims),
        dilation=_spatial(attrs, "dilation", 1, dims),
        groups=attrs.get("groups", 1),
    )


def _transpose_args(attrs):
    args = _conv_args(attrs)
    args["output_padding"] = _spatial(attrs, "output_padding", 0)
    return args


def conv2d(ins, attrs):
    x, w, b = ins
    return F.conv2d(x, w, b, **_conv_args(attrs))


def conv1d(ins, attrs):
    x, w, b = ins
    return F.conv1d(x, w, b, **_conv_args(attrs, dims=1))


def conv_transpose2d(ins, attrs):
    x, w, b = ins
    return F.conv_transpose2d(x, w, b, **_transpose_args(attrs))


def _batched(t):
    return t if t.dim() == 4 else t.unsqueeze(0)


def conv2d_weight_grad(ins, attrs):
    x, gy = ins
    args = _conv_args(attrs)
    kernel = _spatial(attrs, "kernel_size", 1)
    x, gy = _batched(x), _batched(gy)
    # The op accepts a grid shorter than the input allows (positions past
    # its end have zero gradient); torch wants the full grid.
    full = [
        (x.shape[2 + i] + 2 * args["padding"][i] - args["dilation"][i] * (kernel[i] - 1) - 1) // args["stride"][i] + 1
        for i in range(2)
    ]
    gy = F.pad(gy, (0, full[1] - gy.shape[3], 0, full[0] - gy.shape[2]))
    size = (gy.shape[1], x.shape[1] // args["groups"]) + kernel
    return conv2d_weight(x, size, gy, **args)


def conv_transpose2d_input_grad(ins, attrs):
    gy, w = ins
    args = _transpose_args(attrs)
    spatial = [
        (
            gy.shape[-2 + i] - 1 + 2 * args["padding"][i]
            - args["dilation"][i] * (w.shape[2 + i] - 1) - args["output_padding"][i]
        )
        // args["stride"][i]
        + 1
        for i in range(2)
    ]
    x = torch.zeros(*gy.shape[:-3], w.shape[0], *spatial, dtype=gy.dtype, requires_grad=True)
    return torch.autograd.grad(F.conv_transpose2d(x, w, None, **args), x, gy)[0]


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
    "conv2d": conv2d,
    "conv1d": conv1d,
    "conv_transpose2d": conv_transpose2d,
    "_conv2d_weight_grad": conv2d_weight_grad,
    "_conv_transpose2d_input_grad": conv_transpose2d_input_grad,
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
