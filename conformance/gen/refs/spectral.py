"""Reference results for the Fourier transforms (core/ops_spectral.go).
"""

import torch
import torch.nn.functional as F

from ._util import _get


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
    "fft": _fft,
    "ifft": _ifft,
    "rfft": _rfft,
    "irfft": _irfft,
    "_resize_axis": _resize_axis,
}
