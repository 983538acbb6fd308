"""Reference functions for the activations: the elementwise ones, gelu's
gradient and the softmax family (core/ops_activation*.go).
"""

import torch
import torch.nn.functional as F

from ._util import _float_result, _plain


def gelu_backward(ins, a):
    g, x = ins
    return torch.ops.aten.gelu_backward(g, x, approximate=a.get("approximate", "none"))


def softmax(ins, a):
    return torch.softmax(ins[0], a.get("axis", -1))


def log_softmax(ins, a):
    return torch.log_softmax(ins[0], a.get("axis", -1))


def softmax_backward(ins, a):
    y, g = ins
    return torch._softmax_backward_data(g, y, a.get("axis", -1) % y.dim(), y.dtype)


def log_softmax_backward(ins, a):
    y, g = ins
    return torch._log_softmax_backward_data(g, y, a.get("axis", -1) % y.dim(), y.dtype)


REFS = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "_softmax_backward": softmax_backward,
    "_log_softmax_backward": log_softmax_backward,
    "sigmoid": _float_result(torch.sigmoid),
    "relu": _plain(torch.relu),
    "leaky_relu": lambda ins, a: F.leaky_relu(ins[0], a.get("negative_slope", 0.01)),
    "elu": lambda ins, a: F.elu(ins[0], a.get("alpha", 1.0)),
    "gelu": lambda ins, a: F.gelu(ins[0], approximate=a.get("approximate", "none")),
    "_gelu_backward": gelu_backward,
    "silu": _plain(F.silu),
    "softplus": lambda ins, a: F.softplus(ins[0], a.get("beta", 1.0), a.get("threshold", 20.0)),
}
