"""The array API standard's creation and manipulation functions that the
op manifest spells otherwise or lacks, made of the generated ops:
broadcast_arrays/shapes, meshgrid, tensordot, tril/triu, diff, repeat,
concat with axis=None, reshape with copy, eye with k, linspace with
endpoint, full/full_like with the standard's dtype defaults, the _like
creations with device, and imag of a real tensor (zeros).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

from . import _ops
from ._dtype import to_dtype
from ._tensor import Tensor, arange, scope, tensor, zeros


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape arrays of these shapes broadcast to (NumPy's rules)."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, start=rank - len(s)):
            if n != out[i] and 1 not in (n, out[i]):
                raise ValueError(f"broadcast_shapes: shapes {[tuple(s) for s in shapes]} do not broadcast "
                                 f"(axis {i - rank}: {out[i]} vs {n})")
            out[i] = n if out[i] == 1 else out[i]
    return tuple(out)


def broadcast_arrays(*arrays: Tensor) -> list[Tensor]:
    """The arrays broadcast to their common shape (views, no copies)."""
    shape = list(broadcast_shapes(*(a.shape for a in arrays)))
    return [_ops.expand(a, shape=shape) for a in arrays]


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids from 1-d arrays: "xy" (Cartesian, the first two
    axes swapped) or "ij" (matrix) indexing."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    for a in arrays:
        if a.ndim != 1:
            raise ValueError(f"meshgrid: every array must be 1-d, got shape {list(a.shape)}")
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            axis = 1 - i
        view = [1] * len(arrays)
        view[axis] = sizes[axis]
        with scope() as s:
            out.append(s.keep(_ops.expand(_ops.reshape(a, view), shape=sizes)))
    return out


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Tensor:
    """The sum of products over axes (the tensordot op): the last `axes` of x1
    with the first of x2, or the listed pairs of axes."""
    if isinstance(axes, int):
        return _ops.tensordot(x1, x2, axes=axes)
    a1, a2 = axes
    return _ops.tensordot(x1, x2, axes_a=list(a1), axes_b=list(a2))


def _band(x: Tensor, k: int, lower: bool) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: x needs at least 2 dimensions, it has {x.ndim}")
    n, m = x.shape[-2:]
    with scope() as s:
        offset = _ops.sub(_ops.unsqueeze(arange(m, device=x.device), axis=0),
                          _ops.unsqueeze(arange(n, device=x.device), axis=1))
        keep = _ops.le(offset, k) if lower else _ops.ge(offset, k)
        return s.keep(_ops.where(keep, x, zeros(dtype=x.dtype, device=x.device)))


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    """x with the elements above the k-th diagonal of its last two axes set to zero."""
    return _band(x, k, True)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    """x with the elements below the k-th diagonal of its last two axes set to zero."""
    return _band(x, k, False)


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along axis, after joining prepend and append to x there."""
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    nd = x.ndim
    if not -nd <= axis < nd:
        raise IndexError(f"diff: axis {axis} out of range for rank {nd}")
    axis %= nd
    with scope() as s:
        cur = x
        if prepend is not None or append is not None:
            cur = _ops.concat([t for t in (prepend, x, append) if t is not None], axis=axis)
        for _ in range(n):
            length = cur.shape[axis]
            if length == 0:
                break
            hi = _ops.slice(cur, axis=axis, start=1, stop=length)
            lo = _ops.slice(cur, axis=axis, start=0, stop=length - 1)
            cur = _ops.sub(hi, lo)
        return s.keep(cur if cur is not x else x.detach())


def repeat(x: Tensor, repeats, /, *, axis: int | None = None) -> Tensor:
    """Each element (along axis; of the flattened x when None) repeated
    `repeats` times: an int, or one count per element."""
    if isinstance(repeats, builtins.int):
        if repeats < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
        return _ops.repeat_interleave(x, repeats, axis=axis)
    counts = repeats.tolist() if isinstance(repeats, Tensor) else list(repeats)
    with scope() as s:
        src = _ops.reshape(x, [-1]) if axis is None else x
        ax = 0 if axis is None else axis % x.ndim
        if len(counts) == 1:
            counts = counts * src.shape[ax]
        if len(counts) != src.shape[ax]:
            raise ValueError(f"repeat: {len(counts)} counts for an axis of {src.shape[ax]} elements")
        if any(c < 0 for c in counts):
            raise ValueError(f"repeat: counts must be non-negative, got {counts}")
        idx = tensor([i for i, c in enumerate(counts) for _ in range(c)], dtype="i64", device=x.device)
        return s.keep(_ops.index_select(src, idx, axis=ax))


def concat(arrays: Sequence[Tensor], /, *, axis: int | None = 0) -> Tensor:
    """The arrays joined along axis; with axis None, flattened and joined."""
    if axis is not None:
        return _ops.concat(list(arrays), axis=axis)
    with scope() as s:
        return s.keep(_ops.concat([_ops.reshape(a, [-1]) for a in arrays], axis=0))


def reshape(x: Tensor, /, shape: Sequence[int], *, copy: bool | None = None) -> Tensor:
    """x with another shape (-1 inferred): a view where the layout allows, a
    copy when copy is True; copy False refuses where a copy would be needed."""
    shape = [shape] if isinstance(shape, builtins.int) else list(shape)
    out = _ops.reshape(x, shape)
    if copy:
        c = _ops.contiguous(out) if not out.is_contiguous() else _ops.cast(out, dtype=out.dtype)
        if c is not out:
            out.close()
        return c
    if copy is False and not x.is_contiguous():
        out.close()
        raise ValueError(f"reshape: copy=False, but x (strides {x.strides()}) cannot be viewed as {shape}")
    return out


def eye(n_rows: int, n_cols: int | None = None, dtype=None, device: str | None = None, *, k: int = 0) -> Tensor:
    """A 2-d tensor with ones on the k-th diagonal (k > 0 above the main one) and zeros elsewhere."""
    m = n_rows if n_cols is None else n_cols
    dt = to_dtype(dtype) if dtype is not None else to_dtype("f32")
    with scope() as s:
        offset = _ops.sub(_ops.unsqueeze(arange(m, device=device), axis=0),
                          _ops.unsqueeze(arange(n_rows, device=device), axis=1))
        return s.keep(_ops.cast(_ops.eq(offset, k), dtype=dt))


def linspace(start, stop, num: int, dtype=None, device: str | None = None, *, endpoint: bool = True) -> Tensor:
    """num evenly spaced values from start to stop (stop left out when endpoint is False)."""
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    if builtins.any(isinstance(v, builtins.complex) for v in (start, stop)) or (
            dtype is not None and to_dtype(dtype).is_complex):
        # Complex ends (the standard: the default complex dtype then): the
        # real and imaginary parts spaced one by one.
        dt = to_dtype(dtype if dtype is not None else "c64")
        part = "f64" if dt.name == "c128" else "f32"
        a, b = builtins.complex(start), builtins.complex(stop)
        with scope() as s:
            re = linspace(a.real, b.real, num, dtype=part, device=device, endpoint=endpoint)
            im = linspace(a.imag, b.imag, num, dtype=part, device=device, endpoint=endpoint)
            return s.keep(_ops.complex(re, im))
    dt = dtype if dtype is not None else "f32"
    if endpoint:
        return _ops.linspace(start, stop, num, dtype=dt, device=device or "")
    with scope() as s:
        full_ = _ops.linspace(start, stop, num + 1, dtype=dt, device=device or "")
        return s.keep(_ops.slice(full_, axis=0, start=0, stop=num))


def _fill_dtype(fill_value):
    """The standard's default dtype for a fill value: bool, i64 for an int, f32 for a float."""
    if isinstance(fill_value, builtins.bool):
        return "bool"
    if isinstance(fill_value, builtins.int):
        return "i64"
    if isinstance(fill_value, builtins.float):
        return "f32"
    if isinstance(fill_value, builtins.complex):
        return "c64"
    raise TypeError(f"full: fill_value must be a bool, int, float or complex, got {type(fill_value).__name__}")


def full(shape, fill_value, dtype=None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape filled with fill_value (its dtype by default: bool, i64 or f32)."""
    shape = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
    dt = dtype if dtype is not None else _fill_dtype(fill_value)
    if isinstance(fill_value, builtins.complex):
        # The full op's value is real: the parts are filled one by one.
        with scope() as s:
            part = to_dtype({"c128": "f64"}.get(to_dtype(dt).name, "f32"))
            re = _ops.full(list(shape), fill_value.real, dtype=part, device=device or "")
            im = _ops.full(list(shape), fill_value.imag, dtype=part, device=device or "")
            out = s.keep(_ops.cast(_ops.complex(re, im), dtype=dt))
    elif isinstance(fill_value, builtins.int) and not isinstance(fill_value, builtins.bool) and \
            abs(fill_value) > 2**53 and not to_dtype(dt).is_floating:
        # Past 2**53 the op's float attribute would round the value: the
        # exact integer as a 0-d tensor, broadcast and copied.
        with scope() as s:
            one = tensor(fill_value, dtype=dt, device=device)
            out = s.keep(_ops.contiguous(_ops.expand(one, shape=list(shape))))
    else:
        out = _ops.full(list(shape), fill_value, dtype=dt, device=device or "")
    if requires_grad:
        out.requires_grad = True
    return out


def full_like(x: Tensor, /, fill_value, dtype=None, *, device: str | None = None) -> Tensor:
    """A tensor of x's shape (and dtype, unless given) filled with fill_value."""
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=device or x.device)


def zeros_like(x: Tensor, /, dtype=None, *, device: str | None = None) -> Tensor:
    """Zeros of x's shape, dtype and device unless given."""
    return full(x.shape, 0, dtype=dtype or x.dtype, device=device or x.device)


def ones_like(x: Tensor, /, dtype=None, *, device: str | None = None) -> Tensor:
    """Ones of x's shape, dtype and device unless given."""
    return full(x.shape, 1, dtype=dtype or x.dtype, device=device or x.device)


def imag(x: Tensor, /) -> Tensor:
    """The imaginary part (a view) of a complex tensor; zeros of a real one's shape and dtype."""
    if x.dtype.is_complex:
        return _ops.imag(x)
    return zeros_like(x)


__all__ = [
    "broadcast_arrays", "broadcast_shapes", "concat", "diff", "eye", "full", "full_like", "imag",
    "linspace", "meshgrid", "ones_like", "repeat", "reshape", "tensordot", "tril", "triu", "zeros_like",
]
