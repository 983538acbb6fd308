"""Reference functions for the unary math ops: arithmetic, transcendental
functions, rounding, clamp and nan_to_num (core/ops_unary*.go).

Every reference is a PyTorch call. Two conventions of ours need a word:
- ops that give f32 for integer inputs (exp, log, ...) get their integer
  inputs as float64 here, so the reference is the exact result rounded once,
  as the Go kernels compute it;
- clamp keeps integer dtypes, so for integer tensors its bounds round inward
  (ceil(min), floor(max)), which selects the same integers as the real bounds.
Samples carry only the attributes they set; absent ones take the OpDef
defaults, which are PyTorch's.
"""

import math

import torch

from ._util import _float_result, _plain


def clamp(ins, a):
    x = ins[0]
    lo, hi = a.get("min"), a.get("max")
    if not x.is_floating_point():
        lo = None if lo is None else math.ceil(lo)
        hi = None if hi is None else math.floor(hi)
    return torch.clamp(x, min=lo, max=hi)


def nan_to_num(ins, a):
    return torch.nan_to_num(ins[0], nan=a.get("nan", 0.0), posinf=a.get("posinf"), neginf=a.get("neginf"))


REFS = {
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
    "asin": _float_result(torch.asin),
    "acos": _float_result(torch.acos),
    "atan": _float_result(torch.atan),
    "sinh": _float_result(torch.sinh),
    "cosh": _float_result(torch.cosh),
    "asinh": _float_result(torch.asinh),
    "acosh": _float_result(torch.acosh),
    "atanh": _float_result(torch.atanh),
    "log2": _float_result(torch.log2),
    "log10": _float_result(torch.log10),
    "trunc": _plain(torch.trunc),
    "floor": _plain(torch.floor),
    "ceil": _plain(torch.ceil),
    "round": _plain(torch.round),
    "clamp": clamp,
    "nan_to_num": nan_to_num,
}
