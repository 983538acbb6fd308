"""References for the convolutions (torch.nn.functional).

The internal backward ops are references of the gradient they stand for:
torch.nn.grad.conv2d_weight, or torch.autograd.grad of the forward op.
"""

import torch
import torch.nn.functional as F
from torch.nn.grad import conv2d_weight

from ._util import _spatial


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


REFS = {
    "conv2d": conv2d,
    "conv1d": conv1d,
    "conv_transpose2d": conv_transpose2d,
    "_conv2d_weight_grad": conv2d_weight_grad,
    "_conv_transpose2d_input_grad": conv_transpose2d_input_grad,
}
