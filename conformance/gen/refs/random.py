"""Reference results for the random ops and dropout (core/ops_random.go).

Our Philox4x32-10 stream (core/numerics/philox.go) is re-derived here with NumPy, since
torch does not use it; dropout applies its mask with PyTorch.
"""

import numpy as np
import torch
import torch.nn.functional as F

from ._util import _dtype_name, _get


_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)


_W0, _W1 = 0x9E3779B9, 0xBB67AE85


_MASK32 = np.uint64(0xFFFFFFFF)


def _philox_bits(seed, offset, n, stream):
    """The 32 raw bits of elements 0..n-1 of one stream, as uint64."""
    seed &= (1 << 64) - 1
    offset &= (1 << 64) - 1
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        block = np.uint64(offset) + i // np.uint64(4)
    c0, c1 = block & _MASK32, block >> np.uint64(32)
    c2 = np.full(n, stream, dtype=np.uint64)
    c3 = np.zeros(n, dtype=np.uint64)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for r in range(10):
        if r > 0:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
        p0, p1 = _M0 * c0, _M1 * c2
        c0, c1, c2, c3 = (
            (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0),
            p1 & _MASK32,
            (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1),
            p0 & _MASK32,
        )
    lanes = np.stack([c0, c1, c2, c3])
    return lanes[(np.arange(n) % 4), np.arange(n)]


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


# Uniform draws keep as many top bits as the output has significand bits
# (24 for f32 and f64), so narrow floats never round up to 1.
_DIGITS = {"f16": 11, "bf16": 8}


def _uniform(seed, offset, shape, dtype_name):
    digits = _DIGITS.get(dtype_name, 24)
    bits = _philox_bits(seed, offset, _numel(shape), 0)
    u = (bits >> np.uint64(32 - digits)).astype(np.float64) * 2.0**-digits
    return torch.from_numpy(u.reshape(shape))


def _normal(seed, offset, shape):
    n = _numel(shape)
    u1 = (_philox_bits(seed, offset, n, 0) >> np.uint64(8)) * 2.0**-24
    u2 = (_philox_bits(seed, offset, n, 1) >> np.uint64(8)) * 2.0**-24
    z = np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
    return torch.from_numpy(z.reshape(shape))


def _rand(ins, attrs):
    shape = list(attrs["shape"])
    return _uniform(attrs["seed"], attrs["offset"], shape, _dtype_name(attrs, "f32"))


def _randn(ins, attrs):
    return _normal(attrs["seed"], attrs["offset"], list(attrs["shape"]))


def _rand_like(ins, attrs):
    shape = list(ins[0].shape)
    return _uniform(attrs["seed"], attrs["offset"], shape, _dtype_name(attrs, "f32"))


def _randn_like(ins, attrs):
    return _normal(attrs["seed"], attrs["offset"], list(ins[0].shape))


def _randint(ins, attrs):
    shape = list(attrs["shape"])
    low, high = int(_get(attrs, "low", 0)), int(attrs["high"])
    bits = _philox_bits(attrs["seed"], attrs["offset"], _numel(shape), 0)
    vals = [low + int(b) % (high - low) for b in bits]
    return torch.tensor(vals, dtype=torch.int64).reshape(shape)


def _bernoulli(ins, attrs):
    p = ins[0]
    u = _uniform(attrs["seed"], attrs["offset"], list(p.shape), "f32")
    return (u < p).to(p.dtype)


def dropout(ins, a):
    x, p = ins[0], a.get("p", 0.5)
    if not a.get("training", True) or p == 0:
        return F.dropout(x, p, training=False)
    if p == 1:
        return F.dropout(x, 1.0, training=True)
    bits = _philox_bits(a["seed"], a["offset"], x.numel(), 0)
    u = torch.from_numpy((bits >> np.uint64(8)).astype(np.float64) * 2.0**-24).reshape(x.shape)
    keep = (u >= p).to(x.dtype)
    return x * keep * (1.0 / (1.0 - p))


REFS = {
    "rand": _rand,
    "randn": _randn,
    "randint": _randint,
    "bernoulli": _bernoulli,
    "rand_like": _rand_like,
    "randn_like": _randn_like,
    "dropout": dropout,
}
