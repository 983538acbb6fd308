"""Reference results for the Fourier transforms (core/ops_spectral*.go): torch.fft, with
complex pairs [..., 2] read and written through view_as_complex and view_as_real.
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


def _fftn_args(attrs):
    s, axes = attrs.get("s"), attrs.get("axes")
    return dict(
        s=None if s is None else [int(v) for v in s],
        dim=None if axes is None else [int(v) for v in axes],
        norm=_get(attrs, "norm", "backward"),
    )


def _fftn(ins, attrs):
    return torch.view_as_real(torch.fft.fftn(_complex(ins[0]), **_fftn_args(attrs)))


def _ifftn(ins, attrs):
    return torch.view_as_real(torch.fft.ifftn(_complex(ins[0]), **_fftn_args(attrs)))


def _rfftn(ins, attrs):
    return torch.view_as_real(torch.fft.rfftn(ins[0], **_fftn_args(attrs)))


def _irfftn(ins, attrs):
    return torch.fft.irfftn(_complex(ins[0]), **_fftn_args(attrs))


def _hfft(ins, attrs):
    return torch.fft.hfft(_complex(ins[0]), **_fft_args(attrs))


def _ihfft(ins, attrs):
    return torch.view_as_real(torch.fft.ihfft(ins[0], **_fft_args(attrs)).resolve_conj())


def _freq(fn):
    # In float64: the runner rounds the result once to the declared dtype.
    return lambda ins, attrs: fn(int(attrs["n"]), float(_get(attrs, "d", 1.0)), dtype=torch.float64)


def _shift(fn):
    def ref(ins, attrs):
        axes = attrs.get("axes")
        dim = None if axes is None else [int(v) for v in axes]
        if _get(attrs, "pairs", False):
            return torch.view_as_real(fn(_complex(ins[0]), dim=dim))
        return fn(ins[0], dim=dim)

    return ref


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
    "fftn": _fftn,
    "ifftn": _ifftn,
    "rfftn": _rfftn,
    "irfftn": _irfftn,
    "hfft": _hfft,
    "ihfft": _ihfft,
    "fftfreq": _freq(torch.fft.fftfreq),
    "rfftfreq": _freq(torch.fft.rfftfreq),
    "fftshift": _shift(torch.fft.fftshift),
    "ifftshift": _shift(torch.fft.ifftshift),
    "_resize_axis": _resize_axis,
}
