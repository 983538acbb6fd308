"""Reference results for affine 8-bit quantisation (core/ops_quantization.go).
"""

import torch

from ._util import _dtype_name, _get


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


def _dequantize_int8x4(ins, attrs):
    # A u32 word's bytes, little-endian, are its four i8 elements.
    q = ins[0].contiguous().view(torch.int8)
    return q.float() * ins[1].float()[:, None]


REFS = {
    "quantize": _quantize,
    "dequantize": _dequantize,
    "dequantize_int8x4": _dequantize_int8x4,
}
