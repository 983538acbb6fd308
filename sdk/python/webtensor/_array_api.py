"""Array API standard names that the op manifest spells differently, made of
the generated ops (no op of their own, so no kernels to keep in step):
wt.permute_dims, wt.expand_dims, wt.astype (and Tensor.astype),
wt.matrix_transpose, wt.vecdot, wt.broadcast_to, wt.moveaxis, wt.clip,
wt.take, wt.unstack, wt.count_nonzero, wt.asarray, wt.empty,
wt.empty_like, wt.cumulative_sum, wt.cumulative_prod, the statistics
with the standard's defaults (wt.var and wt.std divide by N unless given a
correction; the Tensor methods keep PyTorch's N - 1) and the spelled-out
elementwise names (wt.multiply, wt.less_equal, ...). Defaults and keywords
follow the standard.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import _ops
from ._dtype import to_dtype
from ._tensor import Tensor, scope, tensor, zeros

# The standard's spelled-out elementwise names for ops the manifest abbreviates.
multiply, subtract, divide, negative = _ops.mul, _ops.sub, _ops.div, _ops.neg
equal, not_equal = _ops.eq, _ops.ne
less, less_equal, greater, greater_equal = _ops.lt, _ops.le, _ops.gt, _ops.ge


def positive(x: Tensor) -> Tensor:
    """+x: a new tensor with x's values."""
    return x.detach()


def sign(x: Tensor, /) -> Tensor:
    """-1, 0 or 1 by the sign of x, and NaN for NaN as the standard says
    (x.sign() keeps PyTorch's 0 for NaN)."""
    out = _ops.sign(x)
    if not x.dtype.is_floating:
        return out
    with scope() as s:
        return s.keep(_ops.where(_ops.isnan(x), x, out))


def astype(x: Tensor, dtype, /, *, copy: bool = True, device: str | None = None) -> Tensor:
    """x converted to dtype (and moved to device); with copy=False and
    nothing to change, x itself."""
    dt = to_dtype(dtype)
    if device is not None and device != x.device:
        moved = x.to(device)
        out = astype(moved, dt, copy=False)
        if out is not moved:
            moved.close()
        return out
    if x.dtype == dt:
        return x.detach() if copy else x
    return _ops.cast(x, dtype=dt)


def permute_dims(x: Tensor, /, axes: Sequence[int]) -> Tensor:
    """x with its axes in the given order (wt.permute)."""
    return _ops.permute(x, dims=list(axes))


def expand_dims(x: Tensor, /, *, axis: int = 0) -> Tensor:
    """x with a new axis of size 1 at axis (wt.unsqueeze)."""
    return _ops.unsqueeze(x, axis=axis)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """x with its last two axes swapped (x.mT)."""
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x has {x.ndim} dimension(s), at least 2 are needed")
    return _ops.transpose(x, -2, -1)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of x1 and x2 along axis, the other axes broadcast (the
    vecdot op: real dtypes, keeping the promoted dtype)."""
    return _ops.vecdot(x1, x2, axis=axis)


def broadcast_to(x: Tensor, /, shape: Sequence[int]) -> Tensor:
    """x broadcast to shape, without a copy (wt.expand)."""
    return _ops.expand(x, shape=list(shape))


def moveaxis(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int], /) -> Tensor:
    """x with the axes source moved to the positions destination, the rest in order."""
    nd = x.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: {len(src)} source axes but {len(dst)} destinations")
    for a in src + dst:
        if not -nd <= a < nd:
            raise IndexError(f"moveaxis: axis {a} out of range for rank {nd}")
    src, dst = [a % nd for a in src], [a % nd for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axes")
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _ops.permute(x, dims=order)


def clip(x: Tensor, /, min: float | Tensor | None = None, max: float | Tensor | None = None) -> Tensor:
    """x limited to [min, max]: scalar bounds (wt.clamp) or tensors that
    broadcast with x; a NaN bound gives NaN, and the result keeps x's shape
    and dtype."""
    if min is None and max is None:  # no bounds: x's values
        return x.detach()
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        return _ops.clamp(x, min=min, max=max)
    with scope() as s:
        out = x
        if min is not None:
            lo = min if isinstance(min, Tensor) else tensor(min, dtype=x.dtype, device=x.device)
            out = _ops.maximum(out, lo)
        if max is not None:
            hi = max if isinstance(max, Tensor) else tensor(max, dtype=x.dtype, device=x.device)
            out = _ops.minimum(out, hi)
        if out.shape != x.shape:
            raise ValueError(f"clip: the bounds broadcast x's shape {list(x.shape)} to {list(out.shape)}")
        return s.keep(out if out.dtype == x.dtype else _ops.cast(out, dtype=x.dtype))


def take(x: Tensor, indices, /, *, axis: int | None = None) -> Tensor:
    """The elements (or slices along axis) at indices, an integer tensor or
    list; a negative index counts from the end (2024.12)."""
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for a {x.ndim}-d tensor")
        axis = 0
    with scope() as s:
        idx = indices if isinstance(indices, Tensor) else tensor(indices, dtype="i64", device=x.device)
        if idx.dtype.name in ("i8", "i16", "i32", "i64"):
            n = x.shape[axis]
            idx = _ops.where(_ops.lt(idx, 0), _ops.add(idx, n), idx)
        return s.keep(_ops.index_select(x, idx, axis=axis))


def roll(x: Tensor, /, shift=None, axis=None, *, shifts=None, axes=None) -> Tensor:
    """x's elements shifted cyclically along axis (the flattened x when
    None): the standard's roll(x, shift, *, axis), which also takes the
    op's shifts=/axes= spellings."""
    shift = shifts if shift is None else shift
    axis = axes if axis is None else axis
    if shift is None:
        raise TypeError("roll: shift is required")
    return _ops.roll(x, shift, axis)


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of x along axis, each without that axis."""
    nd = x.ndim
    if not -nd <= axis < nd:
        raise IndexError(f"unstack: axis {axis} out of range for rank {nd}")
    axis %= nd
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


def count_nonzero(x: Tensor, /, *, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
    """The number of nonzero elements (over axis, else all), as i64."""
    nz = _ops.ne(x, 0)
    try:
        return _ops.sum(nz, axes=axis, keepdim=keepdims)
    finally:
        nz.close()


def cumulative_sum(x: Tensor, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> Tensor:
    """Running sums along axis (required unless x is 1-d); include_initial puts a 0 first."""
    return _cumulative("cumulative_sum", _ops.cumsum, 0, x, axis, dtype, include_initial)


def _with_dtype(op, x: Tensor, dtype):
    """op(x) computed in dtype when one is given (the standard's sum, prod and
    cumulative_* keyword), else in the standard's default: an unsigned
    integer x accumulates as uint64, "the unsigned integer data type having
    the same number of bits as the default integer data type", where the
    device holds it (WebGPU has no 64-bit integers: u32 there)."""
    if dtype is None and x.dtype.name in ("u8", "u16", "u32"):
        dtype = "u32" if x.device.startswith("webgpu") else "u64"
    if dtype is None:
        return op(x)
    dt = to_dtype(dtype)
    # WebGPU sums u8 and u16 as u64, which it cannot hold: in u32 there,
    # wrapped to dt after (as the sum in dt would wrap).
    work = to_dtype("u32") if dt.name in ("u8", "u16") and x.device.startswith("webgpu") else dt
    with scope() as s:
        out = op(x if work == x.dtype else _ops.cast(x, dtype=work))
        return s.keep(out if out.dtype == dt else _ops.cast(out, dtype=dt))


def sum(x: Tensor, /, axes=None, keepdim: bool = False, *, axis=None, dtype=None, keepdims=None) -> Tensor:  # noqa: A001
    """The sum over axes (all when None); bools and signed integers sum as i64, unsigned integers as u64
    (u32 on WebGPU), the standard's defaults, unless dtype says otherwise (x.sum() keeps PyTorch's)."""
    return _with_dtype(lambda v: _ops.sum(v, axes, keepdim, axis=axis, keepdims=keepdims), x, dtype)


def prod(x: Tensor, /, axes=None, keepdim: bool = False, *, axis=None, dtype=None, keepdims=None) -> Tensor:
    """The product over axes (all when None); integers and bools multiply as sum's dtype (i64; u64 for
    unsigned integers, u32 on WebGPU), unless dtype says otherwise."""
    return _with_dtype(lambda v: _ops.prod(v, axes, keepdim, axis=axis, keepdims=keepdims), x, dtype)


def var(x: Tensor, /, axes=None, keepdim: bool = False, correction: float = 0.0, *, axis=None,
        keepdims=None) -> Tensor:
    """The variance over axes with divisor N - correction: 0 (the population
    variance) by default, as the standard says; x.var() keeps PyTorch's 1."""
    return _ops.var(x, axes, keepdim, correction, axis=axis, keepdims=keepdims)


def std(x: Tensor, /, axes=None, keepdim: bool = False, correction: float = 0.0, *, axis=None,
        keepdims=None) -> Tensor:
    """The standard deviation over axes with divisor N - correction, 0 by
    default (the standard's); x.std() keeps PyTorch's 1."""
    return _ops.std(x, axes, keepdim, correction, axis=axis, keepdims=keepdims)


def cumulative_prod(x: Tensor, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> Tensor:
    """Running products along axis (required unless x is 1-d); include_initial puts a 1 first."""
    return _cumulative("cumulative_prod", _ops.cumprod, 1, x, axis, dtype, include_initial)


def _cumulative(name, op, initial, x, axis, dtype, include_initial) -> Tensor:
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{name}: axis is required for a {x.ndim}-d tensor")
        axis = 0
    with scope() as s:
        out = _with_dtype(lambda v: op(v, axis=axis), x, dtype)
        if include_initial:
            shape = list(out.shape)
            shape[axis] = 1
            out = _ops.concat([_ops.full(shape, initial, dtype=out.dtype, device=out.device), out], axis=axis)
        return s.keep(out)


def where(condition: Tensor, x1, x2, /) -> Tensor:
    """x1 where condition, else x2 (broadcast); a Python scalar takes the
    other argument's dtype, as the standard's scalar rules say (where(c, x,
    0) keeps x's int8)."""
    x1, x2 = _scalar_like(x1, x2), _scalar_like(x2, x1)
    return _ops.where(condition, x1, x2)


def _scalar_like(v, other):
    """v as a 0-d tensor of other's dtype when v is a Python scalar of a kind
    that dtype holds (bool; int for integers and floats; float for floats;
    complex for complex), else v unchanged."""
    import builtins

    if not isinstance(other, Tensor) or isinstance(v, Tensor):
        return v
    dt = other.dtype
    fits = (isinstance(v, builtins.bool) and dt.name == "bool") or (
        not isinstance(v, builtins.bool) and (
            (isinstance(v, builtins.int) and dt.name != "bool") or
            (isinstance(v, builtins.float) and (dt.is_floating or dt.is_complex)) or
            (isinstance(v, builtins.complex) and dt.is_complex)))
    return tensor(v, dtype=dt, device=other.device) if fits else v


def asarray(obj, /, *, dtype=None, device: str | None = None, copy: bool | None = None) -> Tensor:
    """obj as a Tensor: a Tensor itself when nothing needs to change and copy is not True, else a new one."""
    if isinstance(obj, Tensor):
        same = (dtype is None or to_dtype(dtype) == obj.dtype) and (device is None or device == obj.device)
        if same and not copy:
            return obj
        if copy is False:
            raise ValueError("asarray: copy=False, but the dtype or device differs")
        if same:  # copy=True: a new buffer (tensor() of a Tensor would share x's)
            return obj.to(obj.dtype)
    return tensor(obj, dtype=dtype, device=device)


def empty(shape, *, dtype=None, device: str | None = None) -> Tensor:
    """A new tensor of shape (its values are zeros here)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return zeros(*shape, dtype=dtype, device=device)


def empty_like(x: Tensor, /, *, dtype=None, device: str | None = None) -> Tensor:
    """A new tensor with x's shape (its values are zeros here)."""
    return zeros(*x.shape, dtype=dtype or x.dtype, device=device or x.device)


def _array_namespace(self: Tensor, /, *, api_version: str | None = None):
    """The module of the array API functions for this tensor: webtensor itself."""
    import webtensor

    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"__array_namespace__: api_version {api_version!r} is not one webtensor implements "
                         "(2021.12 ... 2024.12)")
    return webtensor


def _to_device(self: Tensor, device: str, /, *, stream=None) -> Tensor:
    """A copy on device (self, when it is there already)."""
    if stream is not None:
        raise ValueError("to_device: webtensor orders its device work itself; pass stream=None")
    return self if device == self.device else self.to(device)


Tensor.astype = astype  # NumPy's and many array libraries' method spelling
Tensor.__array_namespace__ = _array_namespace
Tensor.to_device = _to_device

__all__ = [
    "asarray", "astype", "broadcast_to", "clip", "count_nonzero", "cumulative_prod", "cumulative_sum", "divide",
    "empty", "empty_like", "equal", "expand_dims", "greater", "greater_equal", "less", "less_equal",
    "matrix_transpose", "moveaxis", "multiply", "negative", "not_equal", "permute_dims", "positive",
    "prod", "roll", "sign", "std", "subtract", "sum", "take", "unstack", "var", "vecdot", "where",
]
