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
    if k == 0:
        # A 0-d mask: x[True] is x[None], x[False] x[None][:0] (the standard's
        # boolean indexing with M = 0: one new axis of size 1 or 0).
        one = op1("unsqueeze", [x], [("axis", "int", 0)])
        if bool(m.item()):
            return one
        try:
            return op1("slice", [one], [("axis", "int", 0), ("start", "int", 0), ("stop", "int", 0)])
        finally:
            one.close()
    if tuple(m.shape) != shape[:k]:
        raise IndexError(f"boolean index of shape {list(m.shape)} does not match the leading axes of a tensor "
                         f"of shape {list(shape)}")
    if k == len(shape) and not x.dtype.is_complex:  # (masked_select takes real dtypes; complex: below)
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


def _is_array(i) -> bool:
    return isinstance(i, (Tensor, list)) or type(i).__name__ == "ndarray"


def _integral(a) -> bool:
    """Whether a (a Tensor or NumPy array) has an integer dtype."""
    if isinstance(a, Tensor):
        return not (a.dtype.name == "bool" or a.dtype.is_floating or a.dtype.is_complex)
    return a.dtype.kind in "iu"


def _wrapped(idx: Tensor, n: int, owned: list) -> Tensor:
    """idx as i64 with negative entries counted from the end of an axis of n."""
    if idx.dtype.name != "i64":
        idx = op1("cast", [idx], [("dtype", "dtype", "i64")])
        owned.append(idx)
    lt = op1("lt", [idx, 0])
    plus = op1("add", [idx, n])
    out = op1("where", [lt, plus, idx])
    owned += [lt, plus, out]
    return out


def _int_arrays(x: Tensor, items: tuple) -> Tensor:
    """x[i1, ..., iN] for integers and integer arrays, one per axis (the
    standard's integer array indexing): the arrays broadcast together, and
    the result has their shape."""
    shape = x.shape
    if len(items) != len(shape):
        raise IndexError(f"integer array indexing needs one integer or integer array per axis ({len(shape)}), "
                         f"got {len(items)} indices")
    owned: list = []
    try:
        idxs = []
        for k, i in enumerate(items):
            if isinstance(i, bool) or not (_is_array(i) or isinstance(i, numbers.Integral)):
                raise IndexError(f"unsupported index {i!r} with integer arrays: use integers and integer arrays only")
            t = i if isinstance(i, Tensor) else tensor(i, dtype="i64", device=x.device)
            if t is not i:
                owned.append(t)
            if t.dtype.name == "bool" or t.dtype.is_floating or t.dtype.is_complex:
                raise IndexError(f"index arrays must have an integer dtype, got {t.dtype.name}")
            idxs.append(_wrapped(t, shape[k], owned))
        flat = None
        stride = 1
        for k in range(len(shape) - 1, -1, -1):
            term = op1("mul", [idxs[k], stride]) if stride != 1 else idxs[k]
            if term is not idxs[k]:
                owned.append(term)
            if flat is not None:
                flat = op1("add", [term, flat])
                owned.append(flat)
            else:
                flat = term
            stride *= shape[k]
        out_shape = list(flat.shape)
        for t in idxs:  # every array's shape, broadcast (a scalar index adds none)
            out_shape = _broadcast(out_shape, list(t.shape))
        full = op1("contiguous", [op1("expand", [flat], [("shape", "ints", out_shape)])])
        owned.append(full)
        pos = op1("reshape", [full], [("shape", "ints", [-1])])
        src = op1("reshape", [x], [("shape", "ints", [-1])])
        got = op1("index_select", [src, pos], [("axis", "int", 0)])
        owned += [pos, src, got]
        return op1("reshape", [got], [("shape", "ints", out_shape)])
    finally:
        for t in owned:
            t.close()


def _broadcast(a: list, b: list) -> list:
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for p, q in zip(a, b, strict=True):
        if p != q and 1 not in (p, q):
            raise IndexError(f"index arrays of shapes {a} and {b} do not broadcast")
        out.append(q if p == 1 else p)
    return out


def getitem(self: Tensor, index) -> Tensor:
    if _is_array(index) and not isinstance(index, list) and index.ndim == 0 and _integral(index):
        index = int(index.item())  # a 0-d integer array indexes as the integer it holds
    if _is_array(index):
        idx = index if isinstance(index, Tensor) else tensor(index, device=self.device)
        try:
            if idx.dtype.name == "bool":
                return _mask(self, idx)
            owned: list = []
            try:
                # negative entries count from the end, as with integers; an
                # index of any rank gives its shape in front of x's other axes
                w = _wrapped(idx, self.shape[0], owned)
                if idx.ndim != 1:
                    w = op1("reshape", [w], [("shape", "ints", [-1])])
                    owned.append(w)
                got = op1("index_select", [self, w], [("axis", "int", 0)])
                if idx.ndim == 1:
                    return got
                owned.append(got)
                return op1("reshape", [got], [("shape", "ints", [*idx.shape, *self.shape[1:]])])
            finally:
                for t in owned:
                    t.close()
        finally:
            if idx is not index:
                idx.close()
    if isinstance(index, tuple) and any(_is_array(i) and not (isinstance(i, Tensor) and i.ndim == 0
                                                                 and i.dtype.name != "bool") for i in index):
        return _int_arrays(self, index)
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
