"""webtensor.fft: the array API standard's fft extension (2024.12).

Complex in, complex out, with the standard's signatures (keyword-only n,
axis, s, axes, norm) over the registry's transforms. Those work on real
pairs and take a complex tensor as itself (core's complex forms), so the
transforms here are one op call each; rfft, rfftn and ihfft return pairs,
viewed as complex without a copy. A real input to a
complex transform (fft, ifft, fftn, ifftn, irfft, hfft, ...) is converted
to the complex dtype of its precision first, as NumPy does; rfft, rfftn and
ihfft take real input. Gradients flow through the ops (PyTorch's rules).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import _ops
from ._dtype import to_dtype
from ._tensor import Tensor, scope

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_NORMS = ("backward", "ortho", "forward")


def _check_norm(norm: str) -> str:
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {', '.join(_NORMS)}, got {norm!r}")
    return norm


def _complex(x: Tensor) -> Tensor:
    """x as a complex tensor: itself when complex, else its values with zero
    imaginary parts in c128 for f64 and c64 for the rest."""
    if x.dtype.is_complex:
        return x
    return _ops.cast(x, dtype=to_dtype("c128" if x.dtype.name == "f64" else "c64"))


def _real(x: Tensor) -> Tensor:
    if x.dtype.is_complex:
        raise TypeError(f"expected a real-valued tensor, got dtype {x.dtype.name}")
    if x.dtype.is_floating:
        return x
    return _ops.cast(x, dtype=to_dtype("f32"))


def _attrs(n=None, axis=None, s=None, axes=None):
    out = {}
    if n is not None:
        out["n"] = int(n)
    if axis is not None:
        out["axis"] = int(axis)
    if s is not None:
        out["s"] = [int(v) for v in s]
    if axes is not None:
        out["axes"] = [int(v) for v in axes]
    return out


def _c2c(op: str, x: Tensor, norm: str, **kw) -> Tensor:
    with scope() as s:
        return s.keep(getattr(_ops, op)(_complex(x), norm=_check_norm(norm), **kw))


def _r2c(op: str, x: Tensor, norm: str, **kw) -> Tensor:
    with scope() as s:
        return s.keep(_ops.view_as_complex(getattr(_ops, op)(_real(x), norm=_check_norm(norm), **kw)))


def _c2r(op: str, x: Tensor, norm: str, **kw) -> Tensor:
    with scope() as s:
        return s.keep(getattr(_ops, op)(_complex(x), norm=_check_norm(norm), **kw))


def fft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The one-dimensional discrete Fourier transform along axis (zero-padded or trimmed to n)."""
    return _c2c("fft", x, norm, **_attrs(n=n, axis=axis))


def ifft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The one-dimensional inverse discrete Fourier transform along axis."""
    return _c2c("ifft", x, norm, **_attrs(n=n, axis=axis))


def fftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Tensor:
    """The n-dimensional discrete Fourier transform over axes (every axis by default; the last len(s) with s)."""
    return _c2c("fftn", x, norm, **_attrs(s=s, axes=axes))


def ifftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Tensor:
    """The n-dimensional inverse discrete Fourier transform."""
    return _c2c("ifftn", x, norm, **_attrs(s=s, axes=axes))


def rfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The transform of a real signal: its n//2 + 1 non-negative frequency terms."""
    return _r2c("rfft", x, norm, **_attrs(n=n, axis=axis))


def irfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The inverse of rfft: a real signal of length n (2*(m-1) by default for m input terms)."""
    return _c2r("irfft", x, norm, **_attrs(n=n, axis=axis))


def rfftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Tensor:
    """The n-dimensional transform of a real signal (rfft along the last of axes, fft along the others)."""
    return _r2c("rfftn", x, norm, **_attrs(s=s, axes=axes))


def irfftn(x: Tensor, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Tensor:
    """The inverse of rfftn."""
    return _c2r("irfftn", x, norm, **_attrs(s=s, axes=axes))


def hfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The transform of a signal with Hermitian symmetry (given by its non-negative half): a real spectrum."""
    return _c2r("hfft", x, norm, **_attrs(n=n, axis=axis))


def ihfft(x: Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Tensor:
    """The inverse of hfft: the Hermitian half of a real spectrum's inverse transform."""
    return _r2c("ihfft", x, norm, **_attrs(n=n, axis=axis))


def fftfreq(n: int, /, *, d: float = 1.0, dtype=None, device: str | None = None) -> Tensor:
    """The sample frequencies of an n-point transform with sample spacing d: [0, 1, ..., -1] / (d*n)."""
    return _ops.fftfreq(n=int(n), d=float(d), dtype=to_dtype(dtype or "f32"), device=device or "")


def rfftfreq(n: int, /, *, d: float = 1.0, dtype=None, device: str | None = None) -> Tensor:
    """The n//2 + 1 non-negative sample frequencies of rfft."""
    return _ops.rfftfreq(n=int(n), d=float(d), dtype=to_dtype(dtype or "f32"), device=device or "")


def _shift(op: str, x: Tensor, axes) -> Tensor:
    kw = {} if axes is None else {"axes": [int(axes)] if isinstance(axes, int) else [int(a) for a in axes]}
    return getattr(_ops, op)(x, **kw)


def fftshift(x: Tensor, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """x with the zero-frequency term moved to the centre of axes (every axis by default)."""
    return _shift("fftshift", x, axes)


def ifftshift(x: Tensor, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes)
