"""Tensor.__getitem__: NumPy-style basic indexing over the slice, flip, squeeze
and unsqueeze ops, plus one integer or boolean tensor/list index.

Supported: ints, slices with any step, None, ..., and as the only index an
integer array (index_select along axis 0) or a boolean mask of the shape
of the tensor's leading axes (the selected elements, or slices when the
mask has fewer axes than the tensor).
"""

from __future__ import annotations

import numbers

from ._tensor import Tensor, op1, tensor


def _expand(index: tuple, ndim: int) -> list:
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for a tensor of dimension {ndim}: {used}")
    out: list = []
    for i in index:
        if i is Ellipsis:
            if Ellipsis in out:
                raise IndexError("an index can only have a single ellipsis ('...')")
            out.extend([slice(None)] * (ndim - used))
            out.append(Ellipsis)  # a marker, dropped below
        else:
            out.append(i)
    if Ellipsis not in out:
        out.extend([slice(None)] * (ndim - used))
    return [i for i in out if i is not Ellipsis]


def _slice_axis(t: Tensor, axis: int, n: int, s: slice) -> Tensor:
    start, stop, step = s.indices(n)
    count = len(range(start, stop, step))
    if step > 0:
        return op1("slice", [t], [("axis", "int", axis), ("start", "int", start),
                                  ("stop", "int", start + max(count - 1, 0) * step + (1 if count else 0)),
                                  ("step", "int", step)])
    flipped = op1("flip", [t], [("axes", "ints", [axis])])
    first = n - 1 - start
    stop = first + (count - 1) * -step + 1 if count else first
    out = op1("slice", [flipped], [("axis", "int", axis), ("start", "int", first), ("stop", "int", stop),
                                   ("step", "int", -step)])
    flipped.close()
    return out


def _mask(x: Tensor, m: Tensor) -> Tensor:
    """x[m] for a boolean m of the shape of x's leading axes: the selected
    slices, in row-major order, stacked along one new first axis."""
    k, shape = m.ndim, x.shape
    if tuple(m.shape) != shape[:k] or k == 0:
        raise IndexError(f"boolean index of shape {list(m.shape)} does not match the leading axes of a tensor "
                         f"of shape {list(shape)}")
    if k == len(shape):
        return op1("masked_select", [x, m])
    n = 1
    for d in shape[:k]:
        n *= d
    rows = op1("reshape", [x], [("shape", "ints", [n, *shape[k:]])])
    flat = op1("reshape", [m], [("shape", "ints", [n])])
    coords = op1("nonzero", [flat])
    idx = op1("reshape", [coords], [("shape", "ints", [-1])])
    try:
        return op1("index_select", [rows, idx], [("axis", "int", 0)])
    finally:
        for t in (rows, flat, coords, idx):
            t.close()


def getitem(self: Tensor, index) -> Tensor:
    if isinstance(index, (Tensor, list)) or type(index).__name__ == "ndarray":
        idx = index if isinstance(index, Tensor) else tensor(index)
        try:
            if idx.dtype.name == "bool":
                return _mask(self, idx)
            return op1("index_select", [self, idx], [("axis", "int", 0)])
        finally:
            if idx is not index:
                idx.close()
    index = index if isinstance(index, tuple) else (index,)
    shape = self.shape
    items = _expand(index, len(shape))
    t, axis, src, owned = self, 0, 0, False
    for i in items:
        if i is None:
            nxt = op1("unsqueeze", [t], [("axis", "int", axis)])
            axis += 1
        elif isinstance(i, slice):
            nxt = _slice_axis(t, axis, shape[src], i)
            axis, src = axis + 1, src + 1
        elif isinstance(i, numbers.Integral) or (isinstance(i, Tensor) and i.ndim == 0):
            k, n = int(i), shape[src]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {src} with size {n}")
            k %= n
            part = op1("slice", [t], [("axis", "int", axis), ("start", "int", k), ("stop", "int", k + 1)])
            nxt = op1("squeeze", [part], [("axes", "ints", [axis])])
            part.close()
            src += 1
        else:
            raise IndexError(f"unsupported index {i!r}: use ints, slices, None, ... or one index array")
        if owned:
            t.close()
        t, owned = nxt, True
    return t if owned else self.detach()


Tensor.__getitem__ = getitem
