"""Initialisers, as torch.nn.init. The formulas and the draws are the
runtime's (Go's nn package, through wt_nn_init), so a seed gives the same
weights here as in Go, JavaScript and Java, on every backend: they consume
the global Philox generator in a fixed order (wt.manual_seed(s) before
building a model). They cannot reproduce torch's own generator. Each
function replaces the tensor's values in place (a parameter stays a leaf
that requires its gradient, and keeps it) and returns it.
"""

from __future__ import annotations

import ctypes as C
import math

from .. import _lib
from .._tensor import Tensor, _attr, zeros


def _init(t: Tensor, method: str, **settings) -> Tensor:
    keep: list = []
    given = [(k, v) for k, v in settings.items() if v is not None]
    attrs = (_lib.Attr * max(len(given), 1))(
        *[_attr(k, "string" if isinstance(v, str) else "float", v, keep) for k, v in given])
    _lib.call("wt_nn_init", t._h, method.encode(), attrs, len(given))
    return t


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """torch.nn.init.calculate_gain (param: leaky_relu's negative slope, default 0.01)."""
    gain = C.c_double()
    _lib.call("wt_nn_calculate_gain", nonlinearity.encode(), 0.01 if param is None else float(param), C.byref(gain))
    return gain.value


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    return _init(t, "uniform", a=a, b=b)


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _init(t, "normal", mean=mean, std=std)


def constant_(t: Tensor, val: float) -> Tensor:
    return _init(t, "constant", val=val)


def zeros_(t: Tensor) -> Tensor:
    return constant_(t, 0.0)


def ones_(t: Tensor) -> Tensor:
    return constant_(t, 1.0)


def xavier_uniform_(t: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain·sqrt(6 / (fan_in + fan_out))."""
    return _init(t, "xavier_uniform", gain=gain)


def xavier_normal_(t: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std²) with std = gain·sqrt(2 / (fan_in + fan_out))."""
    return _init(t, "xavier_normal", gain=gain)


def kaiming_uniform_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-b, b) with b = sqrt(3)·gain/sqrt(fan); a is leaky_relu's negative slope."""
    return _init(t, "kaiming_uniform", a=a, mode=mode, nonlinearity=nonlinearity)


def kaiming_normal_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """N(0, std²) with std = gain/sqrt(fan)."""
    return _init(t, "kaiming_normal", a=a, mode=mode, nonlinearity=nonlinearity)


def _uniform_values(shape, lo: float, hi: float, dtype, device) -> Tensor:
    """A new tensor from U(lo, hi), drawn as Go's nn draws it."""
    return uniform_(zeros(*shape, dtype=dtype, device=device), lo, hi)


def _normal_values(shape, mean: float, std: float, dtype, device) -> Tensor:
    """A new tensor from N(mean, std²), drawn as Go's nn draws it."""
    return normal_(zeros(*shape, dtype=dtype, device=device), mean, std)


def _default_weight_and_bias(w_shape, bias_len: int | None, dtype, device) -> tuple[Tensor, Tensor | None]:
    """A Linear's or convolution's weight and bias as torch's reset_parameters
    draws them (kaiming_uniform_(a=√5), i.e. U(±1/√fan_in), then a bias from
    U(±1/√fan_in)), in the Go package's order: weight first, then bias."""
    receptive = 1
    for s in w_shape[2:]:
        receptive *= s
    fan_in = w_shape[1] * receptive
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    w = _uniform_values(w_shape, -bound, bound, dtype, device)
    b = _uniform_values((bias_len,), -bound, bound, dtype, device) if bias_len is not None else None
    return w, b
