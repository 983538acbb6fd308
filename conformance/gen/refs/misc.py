"""Reference results for creation, random, quantisation, sparse and spectral ops.

Each entry of REFS maps an op name to fn(ins, attrs) -> tensor or tuple of
tensors, computed with PyTorch. The random ops are the one exception: our
Philox4x32-10 stream (core/rng.go) is re-derived here with NumPy, since
torch does not use it.
"""

import numpy as np
import torch
import torch.nn.functional as F

_TORCH_DTYPES = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f64": torch.float64,
    "i64": torch.int64,
    "i32": torch.int32,
    "u32": torch.uint32,
    "i16": torch.int16,
    "i8": torch.int8,
    "u8": torch.uint8,
    "bool": torch.bool,
}
_INT_NAMES = {"i64", "i32", "u32", "i16", "i8", "u8"}


def _get(attrs, name, default=None):
    v = attrs.get(name)
    return default if v is None else v


def _dtype_name(attrs, default):
    return _get(attrs, "dtype", default)


# ---- creation ---------------------------------------------------------------


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


# ---- Philox4x32-10, as documented in core/rng.go ------------------------------

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


# ---- quantisation -------------------------------------------------------------


def _qdtype(name):
    return torch.quint8 if name == "u8" else torch.qint8


def _quantize(ins, attrs):
    x = ins[0].float()
    scale = attrs["scale"]
    zps = _get(attrs, "zero_point", [0] * len(scale))
    qd = _qdtype(_dtype_name(attrs, "i8"))
    axis = attrs.get("axis")
    if axis is None:
        return torch.quantize_per_tensor(x, float(scale[0]), int(zps[0]), qd).int_repr()
    axis %= x.dim()
    scales = torch.tensor(scale, dtype=torch.float64)
    zeros = torch.tensor(zps, dtype=torch.int64)
    return torch.quantize_per_channel(x, scales, zeros, axis, qd).int_repr()


def _dequantize(ins, attrs):
    q = ins[0]
    scale = attrs["scale"]
    zps = _get(attrs, "zero_point", [0] * len(scale))
    axis = attrs.get("axis")
    if axis is None:
        qt = torch._make_per_tensor_quantized_tensor(q, float(scale[0]), int(zps[0]))
    else:
        scales = torch.tensor(scale, dtype=torch.float64)
        zeros = torch.tensor(zps, dtype=torch.int64)
        qt = torch._make_per_channel_quantized_tensor(q, scales, zeros, axis % q.dim())
    return qt.dequantize()


# ---- sparse and graph -----------------------------------------------------------


def _segment(reduce):
    def ref(ins, attrs):
        data, ids = ins[0], ins[1].long()
        shape = (int(attrs["num_segments"]),) + tuple(data.shape[1:])
        out = torch.zeros(shape, dtype=data.dtype)
        index = ids.reshape((-1,) + (1,) * (data.dim() - 1)).expand_as(data)
        return out.scatter_reduce(0, index, data, reduce=reduce, include_self=False)

    return ref


def _segment_gather(ins, attrs):
    return ins[0][ins[1].long()]


def _segment_max_grad(ins, attrs):
    data, ids, out, grad = ins
    data = data.clone().requires_grad_(True)
    maxes = _segment("amax")([data, ids], {"num_segments": out.shape[0]})
    (g,) = torch.autograd.grad(maxes, data, grad)
    return g


def _csr_dense(indptr, indices, values, cols):
    """The CSR matrix as a dense tensor; repeated entries add up."""
    rows = indptr.numel() - 1
    row_of = torch.repeat_interleave(torch.arange(rows), torch.diff(indptr.long()))
    dense = torch.zeros(rows, cols, dtype=values.dtype)
    return dense.index_put_((row_of, indices.long()), values, accumulate=True)


def _spmm(ins, attrs):
    indptr, indices, values, dense = ins
    return _csr_dense(indptr, indices, values, dense.shape[0]) @ dense


def _spmm_transposed(ins, attrs):
    indptr, indices, values, dense = ins
    return _csr_dense(indptr, indices, values, int(attrs["cols"])).T @ dense


def _sddmm(ins, attrs):
    indptr, indices, a, b = ins
    rows = indptr.numel() - 1
    row_of = torch.repeat_interleave(torch.arange(rows), torch.diff(indptr.long()))
    return (a @ b)[row_of, indices.long()]


# ---- spectral ---------------------------------------------------------------------


def _fft_args(attrs):
    return dict(
        n=attrs.get("n"),
        dim=int(_get(attrs, "axis", -1)),
        norm=_get(attrs, "norm", "backward"),
    )


def _complex(x):
    return torch.view_as_complex(x.contiguous())


def _fft(ins, attrs):
    return torch.view_as_real(torch.fft.fft(_complex(ins[0]), **_fft_args(attrs)))


def _ifft(ins, attrs):
    return torch.view_as_real(torch.fft.ifft(_complex(ins[0]), **_fft_args(attrs)))


def _rfft(ins, attrs):
    return torch.view_as_real(torch.fft.rfft(ins[0], **_fft_args(attrs)))


def _irfft(ins, attrs):
    return torch.fft.irfft(_complex(ins[0]), **_fft_args(attrs))


def _resize_axis(ins, attrs):
    x, n = ins[0], int(attrs["n"])
    axis = int(attrs["axis"]) % x.dim()
    if n <= x.shape[axis]:
        return x.narrow(axis, 0, n)
    pad = [0, 0] * (x.dim() - 1 - axis) + [0, n - x.shape[axis]]
    return F.pad(x, pad)


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
    "rand": _rand,
    "randn": _randn,
    "randint": _randint,
    "bernoulli": _bernoulli,
    "rand_like": _rand_like,
    "randn_like": _randn_like,
    "quantize": _quantize,
    "dequantize": _dequantize,
    "segment_sum": _segment("sum"),
    "segment_mean": _segment("mean"),
    "segment_max": _segment("amax"),
    "_segment_gather": _segment_gather,
    "_segment_max_grad": _segment_max_grad,
    "spmm": _spmm,
    "_spmm_transposed": _spmm_transposed,
    "sddmm": _sddmm,
    "fft": _fft,
    "ifft": _ifft,
    "rfft": _rfft,
    "irfft": _irfft,
    "_resize_axis": _resize_axis,
}
