"""The array API standard's linalg extension (version 2024.12): webtensor.linalg,
also reached as x.__array_namespace__().linalg.

Every function is a registry op (the generated webtensor._ops, so the other
SDKs have the same ones) called with the standard's signature: positional-only
arrays, keyword-only options with its defaults, and named tuples for the
factorisations with several results. The factorisations (cholesky, qr, eigh,
svd, slogdet and solve's LU) have kernels on the CPU, WebGPU and CUDA; the
rest is composed of them. Conventions the standard leaves open (see
core/ops_linalg_decomp.go): eigh and cholesky read the lower triangle; qr
has LAPACK's signs (NumPy's and PyTorch's); each eigenvector and each left
singular vector has its largest-magnitude element positive; a full SVD's
extra columns are a pivoted Gram-Schmidt completion; a singular matrix gives
non-finite values rather than an error. Real floating dtypes only (no complex
dtypes yet).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import NamedTuple

from . import _ops
from ._array_api import matrix_transpose, vecdot
from ._array_api_shape import tensordot
from ._dtype import to_dtype
from ._tensor import Tensor, scope


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (A = L Lᵀ) of symmetric positive definite
    matrices, read from the lower triangle; U = Lᵀ when upper. A matrix that
    is not positive definite gives NaN."""
    return _ops.cholesky(x, upper=upper)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-element vectors along axis (negative: counted
    from the last dim of both)."""
    return _ops.cross(x1, x2, axis=axis)


def det(x: Tensor, /) -> Tensor:
    """The determinant of square matrices."""
    return _ops.det(x)


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The offset-th diagonal of the last two dims (a view)."""
    return _ops.diagonal(x, offset=offset)


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    return EighResult(*_ops.eigh(x))


def eigvalsh(x: Tensor, /) -> Tensor:
    """Eigenvalues (ascending) of symmetric matrices."""
    return _ops.eigvalsh(x)


def inv(x: Tensor, /) -> Tensor:
    """The inverse of square matrices."""
    return _ops.inv(x)


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The matrix product (the standard's matmul)."""
    return _ops.matmul(x1, x2)


# The standard's matrix norm orders as the op's names.
_MATRIX_ORDS = {"fro": "fro", "nuc": "nuc", math.inf: "inf", -math.inf: "-inf", 1: "1", -1: "-1", 2: "2", -2: "-2"}


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord: int | float | str | None = "fro") -> Tensor:  # noqa: A002
    """A matrix norm over the last two dims: 'fro' (also for None), 'nuc',
    1, -1, 2, -2, inf or -inf."""
    key = "fro" if ord is None else ord
    if isinstance(key, builtins.bool) or key not in _MATRIX_ORDS:
        raise ValueError(f"matrix_norm: ord={ord!r}; the standard's orders are 'fro', 'nuc', 1, -1, 2, -2, inf "
                         "and -inf")
    return _ops.matrix_norm(x, ord=_MATRIX_ORDS[key], keepdim=keepdims)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """Square matrices raised to the integer power n (n < 0: of the inverse)."""
    if isinstance(n, builtins.bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power: n must be an int, got {type(n).__name__}")
    return _ops.matrix_power(x, n=n)


def _cutoff(s: Tensor, rtol: Tensor) -> Tensor:
    """rtol (a tensor that broadcasts against the batch dims) times each
    matrix's largest singular value, shaped to compare with s."""
    return _ops.mul(_ops.max(s, axes=[-1], keepdim=True), _ops.unsqueeze(rtol, axis=-1))


def matrix_rank(x: Tensor, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The rank (int64) of matrices: their singular values above rtol times
    the largest; rtol defaults to max(M, N) times the dtype's eps."""
    if not isinstance(rtol, Tensor):
        return _ops.matrix_rank(x, rtol=rtol)
    with scope() as sc:
        s = _ops.svdvals(x)
        return sc.keep(_ops.sum(_ops.gt(s, _cutoff(s, rtol)), axes=[-1]))


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The outer product of two vectors."""
    return _ops.outer(x1, x2)


def pinv(x: Tensor, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, singular values up to rtol times the
    largest taken as zero (rtol defaults to max(M, N) times the dtype's eps)."""
    if not isinstance(rtol, Tensor):
        return _ops.pinv(x, rtol=rtol)
    with scope() as sc:
        u, s, vh = _ops.svd(x, full_matrices=False)
        keep = _ops.gt(s, _cutoff(s, rtol))
        one = _ops.ones_like(s)
        sinv = _ops.where(keep, _ops.div(one, _ops.where(keep, s, one)), _ops.zeros_like(s))
        vs = _ops.mul(_ops.transpose(vh, -2, -1), _ops.unsqueeze(sinv, axis=-2))
        return sc.keep(_ops.matmul(vs, _ops.transpose(u, -2, -1)))


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorisation: mode 'reduced' (Q M x K, R K x N) or 'complete'
    (Q M x M, R M x N)."""
    return QRResult(*_ops.qr(x, mode=mode))


def slogdet(x: Tensor, /) -> SlogdetResult:
    """The sign and the natural log of the absolute value of the determinant."""
    return SlogdetResult(*_ops.slogdet(x))


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """X with x1 X = x2: x2 of shape (n,) is one right-hand side for every
    matrix, else (..., n, k) with batch dims that broadcast."""
    return _ops.solve(x1, x2)


def svd(x: Tensor, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition x = U diag(S) Vh, S descending."""
    return SVDResult(*_ops.svd(x, full_matrices=full_matrices))


def svdvals(x: Tensor, /) -> Tensor:
    """The singular values, descending."""
    return _ops.svdvals(x)


def trace(x: Tensor, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of the offset-th diagonal of the last two dims: integers sum
    as int64, floats keep their dtype, unless dtype says otherwise."""
    if dtype is None:
        return _ops.matrix_trace(x, offset=offset)
    dt = to_dtype(dtype)
    with scope() as sc:
        src = x if x.dtype == dt else _ops.cast(x, dtype=dt)
        out = _ops.matrix_trace(src, offset=offset)
        return sc.keep(out if out.dtype == dt else _ops.cast(out, dtype=dt))


def vector_norm(x: Tensor, /, *, axis: int | Sequence[int] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Tensor:  # noqa: A002
    """The vector norm over axis (all axes when None): ord 2 (default), any
    p > 0, inf, -inf or 0 (the count of nonzeros). The norm op."""
    axes = [axis] if isinstance(axis, int) else (None if axis is None else list(axis))
    return _ops.norm(x, axes=axes, keepdim=keepdims, ord=float(ord))


__all__ = [
    "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cross", "det", "diagonal", "eigh",
    "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
    "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]
