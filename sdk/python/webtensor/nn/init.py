"""Initialisers, as torch.nn.init, matching the Go nn package draw for draw.

They draw through the rand and randn ops, so they consume the runtime's global
Philox generator in a fixed order: wt.manual_seed(s) before building a model
gives the same weights here, in Go (nn.NewLinear ... after core.ManualSeed(s))
and on every backend. (They cannot reproduce torch's own generator.) Each
function replaces the tensor's value in place and returns it.
"""

from __future__ import annotations

import math

from .._tensor import Tensor, full, no_grad
from .._tensor import rand as _rand
from .._tensor import randn as _randn
from .module import _replace


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """torch.nn.init.calculate_gain (param: leaky_relu's negative slope, default 0.01)."""
    if nonlinearity in ("linear", "identity", "sigmoid", "conv1d", "conv2d", "conv3d",
                        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope * slope))
    if nonlinearity == "selu":
        return 0.75
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(t: Tensor) -> tuple[int, int]:
    shape = t.shape
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out need at least 2 dims, got shape {list(shape)}")
    receptive = 1
    for s in shape[2:]:
        receptive *= s
    return shape[1] * receptive, shape[0] * receptive


def _uniform_values(shape, lo: float, hi: float, dtype, device) -> Tensor:
    """U(lo, hi) as Go's uniformTensor: rand·(hi-lo) + lo, skipping ·1 and +0."""
    with no_grad():
        u = _rand(*shape, dtype=dtype, device=device)
        if hi - lo != 1:
            u = u * (hi - lo)
        if lo != 0:
            u = u + lo
        return u


def _normal_values(shape, mean: float, std: float, dtype, device) -> Tensor:
    with no_grad():
        n = _randn(*shape, dtype=dtype, device=device)
        if std != 1:
            n = n * std
        if mean != 0:
            n = n + mean
        return n


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    _replace(t, _uniform_values(t.shape, a, b, t.dtype, t.device))
    return t


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    _replace(t, _normal_values(t.shape, mean, std, t.dtype, t.device))
    return t


def constant_(t: Tensor, val: float) -> Tensor:
    with no_grad():
        _replace(t, full(t.shape, val, dtype=t.dtype, device=t.device))
    return t


def zeros_(t: Tensor) -> Tensor:
    return constant_(t, 0.0)


def ones_(t: Tensor) -> Tensor:
    return constant_(t, 1.0)


def xavier_uniform_(t: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain·sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(t)
    a = gain * math.sqrt(6 / float(fan_in + fan_out))
    return uniform_(t, -a, a)


def xavier_normal_(t: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(t)
    return normal_(t, 0.0, gain * math.sqrt(2 / float(fan_in + fan_out)))


def _kaiming_std(t: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(t)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r}, want fan_in or fan_out")
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ValueError(f"kaiming: fan is 0 for shape {list(t.shape)}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-b, b) with b = sqrt(3)·gain/sqrt(fan); a is leaky_relu's negative slope."""
    bound = math.sqrt(3) * _kaiming_std(t, a, mode, nonlinearity)
    return uniform_(t, -bound, bound)


def kaiming_normal_(t: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    return normal_(t, 0.0, _kaiming_std(t, a, mode, nonlinearity))


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
