"""Tensor.__setitem__ and the in-place operators (+=, -=, *=, /=, //=, %=, **=).

webtensor's ops never write into their inputs: a tensor's values are fixed
once made, which is what keeps autograd graphs, views and DLPack exports
consistent. So "in place" here means that the Python object takes a new value:
the new tensor is computed with ordinary ops (scatter for an assignment, the
binary op for `+=`) and the object's handle is swapped to it. Code that holds
the object sees the change; tensors that shared the old storage (views such as
t[0], DLPack exports such as t.numpy()) keep the old values, unlike PyTorch
and NumPy.

A tensor that requires grad is never changed: swapping its value would cut
it from its autograd graph (and a parameter from its gradient). Assigning into
one is an error that says what to do instead; `a += b` on one makes a new
tensor, as `a = a + b`, which is what these operators did before (sums of
losses keep working).

Also refused, with an error: an in-place result of another shape (a
broadcast that grows the tensor) or of a wider kind of dtype (a float result
into an integer tensor, an integer one into a bool tensor); a narrower dtype
of the same kind is cast back, as in PyTorch (f64 into f32).
"""

from __future__ import annotations

import numbers

from . import _lib
from ._tensor import Tensor, op1, run_op, tensor

_KIND = {"bool": 0, "u8": 1, "i8": 1, "i16": 1, "i32": 1, "u32": 1, "i64": 1, "u16": 1, "u64": 1}  # floats: 2


def _kind(dt) -> int:
    return _KIND.get(dt.name, 2)


def _swap(t: Tensor, new: Tensor) -> None:
    """Move new's handle into t (new is left closed) and free t's old one."""
    old, t._h, t._keep = t._h, new._h, new._keep
    new._h, new._keep = 0, None
    if old:
        _lib.call("wt_tensor_free", old)


def _refuse_grad(t: Tensor, what: str, instead: str) -> None:
    if t.requires_grad:
        raise RuntimeError(f"{what}: the tensor requires grad, and replacing its values would cut it from "
                           f"its autograd graph; {instead}")


# ---- __setitem__ --------------------------------------------------------------------


def setitem(self: Tensor, key, value) -> None:
    """t[key] = value for every key t[key] reads (ints, slices, None, ...,
    an integer index array along axis 0, a boolean mask): value, a scalar,
    a nested list, a NumPy array or a Tensor, broadcast to t[key]'s shape and
    cast to t's dtype. With repeated indices one of the values wins."""
    self._live()
    _refuse_grad(self, "t[...] = value", "assign into a copy that does not (u = t.detach(); u[...] = value), "
                 "or build the new tensor with ops such as wt.where")
    shape, dtype, device = self.shape, self.dtype, self.device
    with _Owned() as own:
        # The flat positions key selects, read with the same indexing as t[key].
        positions = own(op1("reshape", [own(run_op("arange", [], [
            ("start", "float", 0), ("stop", "float", self.numel()), ("step", "float", 1),
            ("dtype", "dtype", "i64"), ("device", "string", device)])[0])], [("shape", "ints", list(shape))]))
        picked = own(positions[key])
        v = value if isinstance(value, Tensor) else own(tensor(value, dtype=dtype, device=device))
        if v.dtype != dtype:
            v = own(v.to(dtype))
        target = picked.shape
        if v.shape != target:
            try:
                v = own(op1("expand", [v], [("shape", "ints", list(target))]))
            except ValueError:
                raise ValueError(f"t[...] = value: cannot broadcast a value of shape {list(v.shape)} to the "
                                 f"selection's shape {list(target)}") from None
        flat = [("shape", "ints", [-1])]
        if dtype.is_complex:
            # scatter takes real dtypes: the (re, im) pairs are scattered as
            # rows of two, each row's index repeated across its pair.
            pairs = [("shape", "ints", [-1, 2])]
            idx = own(op1("reshape", [picked], [("shape", "ints", [-1, 1])]))
            rows = own(op1("scatter", [
                own(op1("reshape", [own(op1("view_as_real", [self]))], pairs)),
                own(op1("contiguous", [own(op1("expand", [idx], [("shape", "ints", [idx.shape[0], 2])]))])),
                own(op1("reshape", [own(op1("view_as_real", [own(op1("contiguous", [v]))]))], pairs)),
            ], [("axis", "int", 0)]))
            new = op1("view_as_complex", [own(op1("reshape", [rows], [("shape", "ints", [*shape, 2])]))])
        else:
            new = op1("reshape", [own(op1("scatter", [
                own(op1("reshape", [self], flat)),
                own(op1("reshape", [picked], flat)),
                own(op1("reshape", [own(op1("contiguous", [v]))], flat)),
            ], [("axis", "int", 0)]))], [("shape", "ints", list(shape))])
    _swap(self, new)


class _Owned:
    """Closes the intermediate tensors of a block when it ends."""

    def __init__(self):
        self.made: list[Tensor] = []

    def __call__(self, t: Tensor) -> Tensor:
        self.made.append(t)
        return t

    def __enter__(self) -> _Owned:
        return self

    def __exit__(self, *exc) -> None:
        for t in self.made:
            t.close()


# ---- in-place operators -----------------------------------------------------------------


def _inplace(op: str, symbol: str):
    def method(self, other):
        if not isinstance(other, (Tensor, numbers.Number)):
            return NotImplemented
        r = run_op(op, [self, other], (), self)[0]
        if r.requires_grad or self.requires_grad:  # a graph: a new tensor, as a = a op b
            return r
        try:
            if r.shape != self.shape:
                raise ValueError(f"a {symbol}= b: the result has shape {list(r.shape)}, not a's {list(self.shape)} "
                                 f"(an in-place operator cannot broadcast a); write a = a {symbol} b")
            if r.dtype != self.dtype:
                if _kind(r.dtype) > _kind(self.dtype):
                    raise TypeError(f"a {symbol}= b: the result is {r.dtype.name}, which a's {self.dtype.name} "
                                    f"cannot hold; write a = a {symbol} b")
                cast = r.to(self.dtype)
                r.close()
                r = cast
        except Exception:
            r.close()
            raise
        _swap(self, r)
        return self

    method.__name__ = f"__i{op}__"
    return method


Tensor.__setitem__ = setitem
Tensor.__iadd__ = _inplace("add", "+")
Tensor.__isub__ = _inplace("sub", "-")
Tensor.__imul__ = _inplace("mul", "*")
Tensor.__itruediv__ = _inplace("div", "/")
Tensor.__ifloordiv__ = _inplace("floor_divide", "//")
Tensor.__imod__ = _inplace("remainder", "%")
Tensor.__ipow__ = _inplace("pow", "**")
Tensor.__iand__ = _inplace("bitwise_and", "&")
Tensor.__ior__ = _inplace("bitwise_or", "|")
Tensor.__ixor__ = _inplace("bitwise_xor", "^")
Tensor.__ilshift__ = _inplace("bitwise_left_shift", "<<")
Tensor.__irshift__ = _inplace("bitwise_right_shift", ">>")
