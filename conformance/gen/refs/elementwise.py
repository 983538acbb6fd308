"""Reference functions for the elementwise ops: arithmetic, unary math,
activations, rounding, comparisons, logical connectives and where
(core/ops_binary.go, ops_binary_more.go, ops_unary*.go, ops_compare.go).

Every reference is a PyTorch call. Two conventions of ours need a word:
- ops that give f32 for integer inputs (exp, div, atan2, ...) get their
  integer inputs as float64 here, so the reference is the exact result
  rounded once, as the Go kernels compute it;
- clamp keeps integer dtypes, so for integer tensors its bounds round inward
  (ceil(min), floor(max)), which selects the same integers as the real bounds.
Samples carry only the attributes they set; absent ones take the OpDef
defaults, which are PyTorch's.
"""

import math

import torch
import torch.nn.functional as F


def _float(x):
    return x if x.is_floating_point() else x.to(torch.float64)


def _float_result(fn):
    return lambda ins, a: fn(*[_float(x) for x in ins])


def _plain(fn):
    return lambda ins, a: fn(*ins)


def div(ins, a):
    x, y = ins
    if not x.is_floating_point() and not y.is_floating_point():
        x, y = _float(x), _float(y)
    return torch.div(x, y)


def clamp(ins, a):
    x = ins[0]
    lo, hi = a.get("min"), a.get("max")
    if not x.is_floating_point():
        lo = None if lo is None else math.ceil(lo)
        hi = None if hi is None else math.floor(hi)
    return torch.clamp(x, min=lo, max=hi)


def nan_to_num(ins, a):
    return torch.nan_to_num(ins[0], nan=a.get("nan", 0.0), posinf=a.get("posinf"), neginf=a.get("neginf"))


def gelu_backward(ins, a):
    g, x = ins
    return torch.ops.aten.gelu_backward(g, x, approximate=a.get("approximate", "none"))


REFS = {
    # arithmetic (core/ops_binary.go)
    "add": _plain(torch.add),
    "sub": _plain(torch.sub),
    "mul": _plain(torch.mul),
    "div": div,
    # more binary ops
    "floor_divide": _plain(torch.floor_divide),
    "remainder": _plain(torch.remainder),
    "pow": _plain(torch.pow),
    "maximum": _plain(torch.maximum),
    "minimum": _plain(torch.minimum),
    "atan2": _float_result(torch.atan2),
    "where": _plain(torch.where),
    # comparisons and logic
    "eq": _plain(torch.eq),
    "ne": _plain(torch.ne),
    "lt": _plain(torch.lt),
    "le": _plain(torch.le),
    "gt": _plain(torch.gt),
    "ge": _plain(torch.ge),
    "logical_and": _plain(torch.logical_and),
    "logical_or": _plain(torch.logical_or),
    "logical_xor": _plain(torch.logical_xor),
    "logical_not": _plain(torch.logical_not),
    "isnan": _plain(torch.isnan),
    "isinf": _plain(torch.isinf),
    # unary math
    "neg": _plain(torch.neg),
    "abs": _plain(torch.abs),
    "sign": _plain(torch.sign),
    "square": _plain(torch.square),
    "exp": _float_result(torch.exp),
    "expm1": _float_result(torch.expm1),
    "log": _float_result(torch.log),
    "log1p": _float_result(torch.log1p),
    "sqrt": _float_result(torch.sqrt),
    "rsqrt": _float_result(torch.rsqrt),
    "reciprocal": _float_result(torch.reciprocal),
    "sin": _float_result(torch.sin),
    "cos": _float_result(torch.cos),
    "tan": _float_result(torch.tan),
    "tanh": _float_result(torch.tanh),
    "erf": _float_result(torch.erf),
    # activations
    "sigmoid": _float_result(torch.sigmoid),
    "relu": _plain(torch.relu),
    "leaky_relu": lambda ins, a: F.leaky_relu(ins[0], a.get("negative_slope", 0.01)),
    "elu": lambda ins, a: F.elu(ins[0], a.get("alpha", 1.0)),
    "gelu": lambda ins, a: F.gelu(ins[0], approximate=a.get("approximate", "none")),
    "_gelu_backward": gelu_backward,
    "silu": _plain(F.silu),
    "softplus": lambda ins, a: F.softplus(ins[0], a.get("beta", 1.0), a.get("threshold", 20.0)),
    # rounding and value fixes
    "floor": _plain(torch.floor),
    "ceil": _plain(torch.ceil),
    "round": _plain(torch.round),
    "clamp": clamp,
    "nan_to_num": nan_to_num,
}
