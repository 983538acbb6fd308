"""Reference results for the creation ops (core/ops_creation*.go).

Each entry of REFS maps an op name to fn(ins, attrs) -> tensor or tuple of
tensors, computed with PyTorch.
"""

import torch

from ._util import _TORCH_DTYPES, _dtype_name, _get


_INT_NAMES = {"i64", "i32", "u32", "i16", "i8", "u8"}


def _zeros(ins, attrs):
    return torch.zeros(attrs["shape"], dtype=torch.float64)


def _ones(ins, attrs):
    return torch.ones(attrs["shape"], dtype=torch.float64)


def _full(ins, attrs):
    return torch.full(attrs["shape"], float(attrs["value"]), dtype=torch.float64)


def _zeros_like(ins, attrs):
    return torch.zeros_like(ins[0])


def _ones_like(ins, attrs):
    return torch.ones_like(ins[0])


def _full_like(ins, attrs):
    return torch.full_like(ins[0], float(attrs["value"]))


def _arange(ins, attrs):
    return torch.arange(
        float(_get(attrs, "start", 0.0)),
        float(attrs["stop"]),
        float(_get(attrs, "step", 1.0)),
        dtype=torch.float64,
    )


def _linspace(ins, attrs):
    name = _dtype_name(attrs, "f32")
    dtype = _TORCH_DTYPES[name] if name in _INT_NAMES else torch.float64
    start, stop = float(attrs["start"]), float(attrs["stop"])
    return torch.linspace(start, stop, int(attrs["steps"]), dtype=dtype)


def _eye(ins, attrs):
    n = int(attrs["n"])
    m = int(_get(attrs, "m", n))
    return torch.eye(n, m, dtype=torch.float64)


REFS = {
    "zeros": _zeros,
    "ones": _ones,
    "full": _full,
    "zeros_like": _zeros_like,
    "ones_like": _ones_like,
    "full_like": _full_like,
    "arange": _arange,
    "linspace": _linspace,
    "eye": _eye,
}
