"""The array API standard's sorting, searching and set functions, made of
the generated ops: sort (values only; Tensor.sort keeps PyTorch's
(values, indices)), searchsorted, nonzero (a tuple of index tensors),
isin and the unique_* family over the unique op.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _ops
from ._tensor import Tensor, arange, scope, tensor


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Tensor:
    """x's values sorted along axis (NaNs last ascending, first descending);
    stable keeps equal values in their order."""
    values, indices = _ops.sort(x, axis=axis, descending=descending, stable=stable)
    indices.close()
    return values


def nonzero(x: Tensor, /) -> tuple[Tensor, ...]:
    """The indices of x's nonzero elements, one i64 tensor per axis (row-major order)."""
    if x.ndim == 0:
        raise ValueError("nonzero: x is 0-d; the standard asks for at least one dimension")
    coords = _ops.nonzero(x)
    try:
        return tuple(coords[:, k] for k in range(x.ndim))
    finally:
        coords.close()


def searchsorted(x1: Tensor, x2, /, *, side: str = "left", sorter: Tensor | None = None) -> Tensor:
    """For each value of x2, the index (i64) at which it would go into the
    ascending 1-d x1 (x1 taken in the order sorter gives, when given) to
    keep it sorted: before equal values (side "left") or after them
    ("right"). NaN sorts after every number, as in sort."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', not {side!r}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-d, it has shape {list(x1.shape)}")
    with scope() as s:
        seq = _ops.take_along_axis(x1, sorter, axis=0) if sorter is not None else x1
        values = x2 if isinstance(x2, Tensor) else tensor(x2, dtype=x1.dtype, device=x1.device)
        # The index is the number of entries of seq that sort before v:
        # s < v (s <= v on the right), where NaN is larger than every
        # number and (on the right) not smaller than another NaN.
        v = _ops.unsqueeze(values, axis=-1)
        before = _ops.lt(seq, v) if side == "left" else _ops.le(seq, v)
        v_nan = _ops.isnan(v)
        if side == "left":
            v_nan = _ops.logical_and(v_nan, _ops.logical_not(_ops.isnan(seq)))
        return s.keep(_ops.sum(_ops.logical_or(before, v_nan), axes=-1))


def isin(x1, x2, /, *, invert: bool = False) -> Tensor:
    """True where an element of x1 equals some element of x2 (NaN equals
    nothing); invert gives the opposite."""
    with scope() as s:
        a = x1 if isinstance(x1, Tensor) else tensor(x1)
        b = x2 if isinstance(x2, Tensor) else tensor(x2, dtype=a.dtype, device=a.device)
        eq = _ops.eq(_ops.unsqueeze(a, axis=-1), _ops.reshape(b, [-1]))
        found = _ops.any(eq, axes=-1)
        return s.keep(_ops.logical_not(found) if invert else found)


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def unique_values(x: Tensor, /) -> Tensor:
    """The distinct values of x, sorted, as a 1-d tensor (every NaN distinct)."""
    return _ops.unique(x)[0]


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The distinct values of x and how often each occurs."""
    values, counts = _ops.unique(x, return_counts=True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The distinct values of x and, in x's shape, the position of each element's value among them."""
    values, inverse = _ops.unique(x, return_inverse=True)
    return UniqueInverseResult(values, inverse)


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """unique_inverse and unique_counts in one, with indices: where each
    distinct value first occurs in the flattened x."""
    values, inverse, counts = _ops.unique(x, return_inverse=True, return_counts=True)
    with scope() as s:
        # The smallest position per value: the positions scattered with amin
        # into a tensor that starts at n, past every position.
        n = x.size
        start = _ops.full_like(values, n, dtype="i64")
        pos = arange(n, device=x.device)
        first = s.keep(_ops.scatter_reduce(start, _ops.reshape(inverse, [-1]), pos, reduce="amin", axis=0))
    return UniqueAllResult(values, first, inverse, counts)


__all__ = [
    "isin", "nonzero", "searchsorted", "sort", "unique_all", "unique_counts", "unique_inverse", "unique_values",
]
