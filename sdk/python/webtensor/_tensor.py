"""The Tensor class: a Python object over one wt_tensor handle."""

from __future__ import annotations

import ctypes as C
import numbers
import os
import struct
import threading

from . import _lib
from ._dtype import BY_NAME, DType, from_code, to_dtype
from ._lib import call, lib

try:
    import numpy as np
except ImportError:  # NumPy is optional; lists and scalars still work without it
    np = None

try:  # the C hot path (_fast.c); optional, the ctypes code below does everything without it
    from . import _fast
except ImportError:
    _fast = None
_FAST = False  # whether _use_fast() bound the C hot path


_STRUCT_CODES = {
    "f32": "f", "f16": "e", "f64": "d", "i64": "q", "i32": "i", "u32": "I",
    "i16": "h", "i8": "b", "u8": "B", "bool": "B", "u16": "H", "u64": "Q",
}

# ---- calling ops -----------------------------------------------------------------


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _int64(name: str, value) -> int:
    """value as an int that fits wt_attr's int64 (ctypes would wrap it silently)."""
    v = int(value)
    if not _I64_MIN <= v <= _I64_MAX:
        raise OverflowError(f"attribute {name}: {v} is outside int64 ({_I64_MIN}..{_I64_MAX})")
    return v


def _is_int64(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and _I64_MIN <= int(value) <= _I64_MAX


def _attr(name: str, kind: str, value, keep: list) -> _lib.Attr:
    """One wt_attr; `keep` holds the buffers the struct points into until the call returns."""
    a = _lib.Attr()
    a.name = name.encode()
    keep.append(a.name)
    if kind == "int":
        a.kind, a.i = _lib.ATTR_INT, _int64(name, value)
    elif kind == "float" and _is_int64(value):
        # An integer goes as one: attributes that keep integers exact (arange's
        # bounds) get every digit; the others convert it as float() would.
        a.kind, a.i = _lib.ATTR_INT, int(value)
    elif kind == "float":
        a.kind, a.f = _lib.ATTR_FLOAT, float(value)
    elif kind == "bool":
        a.kind, a.i = _lib.ATTR_BOOL, 1 if value else 0
    elif kind == "string":
        a.kind, a.s = _lib.ATTR_STRING, str(value).encode()
        keep.append(a.s)
    elif kind == "dtype":
        a.kind, a.i = _lib.ATTR_DTYPE, to_dtype(value).code
    elif kind == "ints":
        vals = [_int64(name, v) for v in value] if isinstance(value, (list, tuple)) else [_int64(name, value)]
        arr = (C.c_int64 * max(len(vals), 1))(*vals)
        keep.append(arr)
        a.kind, a.ints, a.len = _lib.ATTR_INTS, C.cast(arr, C.POINTER(C.c_int64)), len(vals)
    elif kind == "floats":
        vals = [float(v) for v in value] if isinstance(value, (list, tuple)) else [float(value)]
        arr = (C.c_double * max(len(vals), 1))(*vals)
        keep.append(arr)
        a.kind, a.floats, a.len = _lib.ATTR_FLOATS, C.cast(arr, C.POINTER(C.c_double)), len(vals)
    else:
        raise TypeError(f"attribute {name}: unknown kind {kind!r}")
    return a


_NO_ATTRS = (_lib.Attr * 1)()
_IN_TYPES = [C.c_int64 * k for k in range(1, 9)]


def run_op(name: str, inputs, attrs=(), like=None) -> list[Tensor]:
    """Call registry op `name`. inputs: Tensors, scalars or None (an absent
    optional input); attrs: (name, kind, value) triples, None values left out.
    (With webtensor._fast, run_op is a _fast.Runner that calls this function
    only for what it does not take itself.)"""
    ref = like
    handles, temps = [], []
    for x in inputs:
        if type(x) is Tensor:  # the common case first: this is the per-op overhead
            h = x._h
            handles.append(h if h else x._live())
        elif x is None:
            handles.append(0)
        elif isinstance(x, Tensor):
            handles.append(x._live())
        else:
            if ref is None:
                ref = next((t for t in inputs if isinstance(t, Tensor)), None)
            t = _scalar_like(x, ref) if isinstance(x, numbers.Number) else tensor(x)
            temps.append(t)
            handles.append(t._h)
    if attrs:
        keep: list = []
        arr = [_attr(n, k, v, keep) for n, k, v in attrs if v is not None]
        c_attrs, n_attrs = (_lib.Attr * max(len(arr), 1))(*arr), len(arr)
    else:
        c_attrs, n_attrs = _NO_ATTRS, 0
    k = len(handles)
    c_in = _IN_TYPES[k - 1](*handles) if 0 < k <= 8 else _lib.i64_array(handles)
    cap = 4
    try:
        while True:
            outs, n = (C.c_int64 * cap)(), C.c_int32()
            st = lib.wt_op(name.encode(), c_in, k, c_attrs, n_attrs, outs, cap, C.byref(n))
            if st == _lib.ERR_BUFFER_TOO_SMALL and n.value > cap:
                cap = n.value
                continue
            _lib.check(st)
            return [Tensor._wrap(outs[i]) for i in range(n.value)]
    finally:
        for t in temps:
            t.close()


def op1(name: str, inputs, attrs=()) -> Tensor:
    return _run_op_ctypes(name, inputs, attrs)[0]


_run_op_ctypes = run_op  # the reference path, whatever run_op is bound to later


def _scalar_like(x, ref) -> Tensor:
    """A 0-d tensor for a Python scalar next to tensor `ref`: ref's dtype when
    it holds x without loss of kind, else the default dtype for x."""
    device = ref.device if ref is not None else None
    if ref is not None:
        dt = ref.dtype
        if isinstance(x, bool) or (isinstance(x, numbers.Integral) and dt.name != "bool"):
            return tensor(x, dtype=dt, device=device)
        if isinstance(x, numbers.Real) and dt.is_floating:
            return tensor(x, dtype=dt, device=device)
        if isinstance(x, numbers.Complex) and dt.is_complex:
            return tensor(x, dtype=dt, device=device)
    return tensor(x, device=device)


def _nest(flat: list, shape: tuple[int, ...]):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


# ---- construction -------------------------------------------------------------------


def _infer(data) -> tuple[list, list[int], DType]:
    """Flatten nested lists of Python scalars (used when NumPy is absent)."""
    shape: list[int] = []
    d = data
    while isinstance(d, (list, tuple)):
        shape.append(len(d))
        d = d[0] if len(d) else 0.0
    flat: list = []

    def walk(x, depth):
        if depth == len(shape):
            flat.append(x)
            return
        if not isinstance(x, (list, tuple)) or len(x) != shape[depth]:
            raise ValueError(f"tensor: ragged nested sequence at depth {depth}: {x!r}")
        for y in x:
            walk(y, depth + 1)

    walk(data, 0)
    if all(isinstance(v, bool) for v in flat) and flat:
        dt = BY_NAME["bool"]
    elif all(isinstance(v, numbers.Integral) for v in flat) and flat:
        dt = BY_NAME["i64"]
    else:
        dt = BY_NAME["f32"]
    return flat, shape, dt


def _from_bytes(buf, nbytes: int, dtype: DType, shape, device) -> Tensor:
    h = C.c_int64()
    dev = device.encode() if device else None
    call("wt_tensor_from_data", buf, nbytes, dtype.code, _lib.i64_array(shape), len(shape), dev, C.byref(h))
    return Tensor._wrap(h.value)


def tensor(data, dtype=None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of data (a scalar, nested lists, a NumPy array or a Tensor)."""
    dt = to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        t = data.to(dt) if dt is not None else data.detach()
        t = t.to(device) if device else t
    elif np is not None:
        a = np.asarray(data)
        if dt is None:
            if a.dtype == np.float64 and not isinstance(data, np.ndarray):
                dt = BY_NAME["f32"]  # Python floats become f32, as in PyTorch
            elif a.dtype.kind in "iu" and not isinstance(data, np.ndarray):
                dt = BY_NAME["i64"]
            elif a.dtype == np.complex128 and not isinstance(data, np.ndarray):
                dt = BY_NAME["c64"]  # Python complex numbers become c64, as floats become f32
            else:
                dt = to_dtype(a.dtype.name)
        if dt.numpy_name is None:
            # NumPy has no bfloat16: build f32 and round on the device (exact
            # for values bf16 can hold), so wt.tensor(x, dtype=wt.bf16) works.
            from ._ops import cast

            f = tensor(np.asarray(a, dtype=np.float32), device=device)
            t = cast(f, dtype=dt)
            f.close()
            if requires_grad:
                t.requires_grad = True
            return t
        a = np.asarray(a, dtype=dt.numpy_name)
        if not a.flags.c_contiguous:  # (np.ascontiguousarray would turn 0-d into 1-d)
            a = a.copy(order="C")
        t = _from_bytes(a.ctypes.data_as(C.c_void_p), a.nbytes, dt, a.shape, device)
    else:
        flat, shape, inferred = _infer(data)
        dt = dt or inferred
        codes = {"f32": "f", "f64": "d", "i64": "q", "i32": "i", "u32": "I", "i16": "h", "i8": "b", "u8": "B",
                 "u16": "H", "u64": "Q"}
        import array

        if dt.name == "bool":
            raw = bytes(1 if v else 0 for v in flat)
        elif dt.name in codes:
            raw = array.array(codes[dt.name], flat).tobytes()
        else:
            raise TypeError(f"tensor: {dt.name} from Python lists needs NumPy")
        t = _from_bytes(raw, len(raw), dt, shape, device)
    if requires_grad:
        t.requires_grad = True
    return t


def _shape_args(shape) -> list[int]:
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    return [int(s) for s in shape]


def _creation(name, shape, dtype, device, requires_grad, extra=()):
    attrs = [("shape", "ints", _shape_args(shape)), ("dtype", "dtype", dtype), ("device", "string", device)]
    t = op1(name, [], attrs + list(extra))
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros: wt.zeros(2, 3) or wt.zeros((2, 3))."""
    return _creation("zeros", shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones."""
    return _creation("ones", shape, dtype, device, requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor filled with fill_value."""
    shape = (shape,) if isinstance(shape, numbers.Integral) else shape
    return _creation("full", shape, dtype, device, requires_grad, [("value", "float", fill_value)])


def randn(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal samples from the global Philox generator (see manual_seed)."""
    return _creation("randn", shape, dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform samples in [0, 1) from the global Philox generator."""
    return _creation("rand", shape, dtype, device, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    """Evenly spaced values in [start, stop); integer arguments give i64 unless dtype says otherwise.

    Integer bounds are exact (computed in int64); ones outside int64 are an error."""
    if stop is None:
        start, stop = 0, start
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, numbers.Integral) and not _I64_MIN <= int(v) <= _I64_MAX:
            raise OverflowError(f"arange: {name} {int(v)} is outside int64 ({_I64_MIN}..{_I64_MAX})")
    if dtype is None:
        # The standard: all ints give the default integer dtype, any float the default real floating one.
        dtype = "i64" if all(isinstance(v, numbers.Integral) for v in (start, stop, step)) else "f32"
    if step != 0 and (stop - start) * step <= 0:
        # An empty range (stop not after start in step's direction): the
        # standard's length ceil((stop - start) / step) is zero there.
        return _creation("zeros", (0,), dtype, device, False)
    attrs = [("start", "float", start), ("stop", "float", stop), ("step", "float", step)]
    return op1("arange", [], attrs + [("dtype", "dtype", dtype), ("device", "string", device)])


# ---- the Tensor ---------------------------------------------------------------------------


def _binary(name, reflected=False):
    def method(self, other):
        if not isinstance(other, (Tensor, numbers.Number)):
            return NotImplemented
        return run_op(name, [other, self] if reflected else [self, other], (), self)[0]

    method.__name__ = name
    method._wt_op = (name, reflected, 2)  # _use_fast() replaces it with a _fast.Method
    return method


def _unary(name):
    def method(self):
        return op1(name, [self])

    method.__name__ = name
    method._wt_op = (name, False, 1)
    return method


class Tensor:
    """An n-dimensional array on a device, backed by a native handle.

    The handle is freed by close(), by leaving a `with` block, or when the
    object is garbage-collected. Using a closed tensor raises RuntimeError.
    """

    __slots__ = ("_h", "_keep", "__weakref__")
    __array_priority__ = 1000  # NumPy defers to our reflected operators

    def __init__(self, data, dtype=None, device=None):
        t = tensor(data, dtype, device)
        self._h, self._keep = t._h, None
        t._h = 0

    @classmethod
    def _wrap(cls, handle: int, keep=None) -> Tensor:
        t = object.__new__(cls)
        t._h, t._keep = handle, keep
        scopes = getattr(_scopes, "stack", None)
        if scopes:
            scopes[-1].append(t)
        return t

    # -- lifetime
    @property
    def handle(self) -> int:
        """The wt_tensor handle (0 once closed)."""
        return self._h

    def close(self) -> None:
        """Free the native tensor now. Closing twice is harmless; using it afterwards raises."""
        h, self._h = self._h, 0
        if h:
            call("wt_tensor_free", h)

    def __enter__(self) -> Tensor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        h = getattr(self, "_h", 0)
        if h and lib is not None:
            try:
                lib.wt_tensor_free(h)
            except Exception:  # interpreter shutdown: the library may be gone
                pass

    def _live(self) -> int:
        if not self._h:
            raise RuntimeError("tensor used after close()")
        return self._h

    # -- metadata
    def _i32(self, fn: str) -> int:
        v = C.c_int32()
        call(fn, self._live(), C.byref(v))
        return v.value

    @property
    def ndim(self) -> int:
        return self._i32("wt_tensor_ndim")

    @property
    def shape(self) -> tuple[int, ...]:
        nd = self.ndim
        buf = (C.c_int64 * max(nd, 1))()
        call("wt_tensor_shape", self._live(), buf, nd)
        return tuple(buf[:nd])

    def strides(self) -> tuple[int, ...]:
        """Strides in elements."""
        nd = self.ndim
        buf = (C.c_int64 * max(nd, 1))()
        call("wt_tensor_strides", self._live(), buf, nd)
        return tuple(buf[:nd])

    @property
    def dtype(self) -> DType:
        return from_code(self._i32("wt_tensor_dtype"))

    @property
    def device(self) -> str:
        return _lib.read_string("wt_tensor_device", self._live())

    def numel(self) -> int:
        n = C.c_int64()
        call("wt_tensor_numel", self._live(), C.byref(n))
        return n.value

    @property
    def size(self) -> int:
        """The number of elements (NumPy's .size)."""
        return self.numel()

    def is_contiguous(self) -> bool:
        return bool(self._i32("wt_tensor_is_contiguous"))

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    # -- conversions
    def _new(self, fn: str, *args) -> Tensor:
        out = C.c_int64()
        call(fn, self._live(), *args, C.byref(out))
        return Tensor._wrap(out.value, self._keep)

    def contiguous(self) -> Tensor:
        return self._new("wt_tensor_contiguous")

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, cut from the autograd graph."""
        return self._new("wt_tensor_detach")

    def to(self, target) -> Tensor:
        """A copy on another device (a str such as "cpu") or with another dtype."""
        if isinstance(target, str) and target in BY_NAME:
            target = BY_NAME[target]
        if isinstance(target, str):
            return self._new("wt_tensor_to_device", target.encode())
        return op1("cast", [self], [("dtype", "dtype", to_dtype(target))])

    def numpy(self):
        """The values as a NumPy array: shared memory for CPU tensors NumPy can view, else a copy."""
        if np is None:
            raise ImportError("Tensor.numpy() needs NumPy")
        dt = self.dtype
        if dt.numpy_name is None:
            raise TypeError(f"NumPy has no {dt.name} dtype; use .to('f32') or torch.from_dlpack")
        if self.device == "cpu":
            return np.from_dlpack(self)
        return self._host_copy()

    def _host_copy(self):
        dt = self.dtype
        out = np.empty(self.shape, dtype=dt.numpy_name)
        call("wt_tensor_to_host", self._live(), out.ctypes.data_as(C.c_void_p), out.nbytes)
        return out

    def __array__(self, dtype=None, copy=None):
        a = self._host_copy() if copy else self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def _host_list(self) -> list:
        """The elements in row-major order as Python numbers, without NumPy."""
        dt, n = self.dtype, self.numel()
        raw = C.create_string_buffer(max(n * dt.itemsize, 1))
        call("wt_tensor_to_host", self._live(), raw, n * dt.itemsize)
        data = raw.raw[: n * dt.itemsize]
        if dt.name == "bf16":  # the top half of an f32
            vals = struct.unpack(f"<{n}f", b"".join(b"\0\0" + data[i : i + 2] for i in range(0, len(data), 2)))
            return list(vals)
        if dt.is_complex:  # pairs of the parts
            parts = struct.unpack(f"<{2 * n}{'f' if dt.name == 'c64' else 'd'}", data)
            return [complex(parts[2 * i], parts[2 * i + 1]) for i in range(n)]
        vals = struct.unpack(f"<{n}{_STRUCT_CODES[dt.name]}", data)
        return [v != 0 for v in vals] if dt.name == "bool" else list(vals)

    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item(): the tensor has {self.numel()} elements, not one")
        return self._host_list()[0]

    def tolist(self):
        if np is not None and self.dtype.numpy_name is not None:
            return self._host_copy().tolist()
        return _nest(self._host_list(), self.shape)

    def __float__(self) -> float:
        return float(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    @property
    def real(self) -> Tensor:
        """The real part (a view; a real tensor is its own), as NumPy's and PyTorch's attribute."""
        return op1("real", [self])

    @property
    def imag(self) -> Tensor:
        """The imaginary part of a complex tensor (a view)."""
        return op1("imag", [self])

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        return bool(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating:
            raise TypeError("only integer tensors can be used as an index")
        return int(self.item())

    def __repr__(self) -> str:
        if not self._h:
            return "tensor(<closed>)"
        if np is not None and self.dtype.numpy_name is not None:
            body = np.array2string(self._host_copy(), separator=", ", prefix="tensor(")
        else:
            body = repr(self.tolist())
        extra = "" if self.dtype.name in ("f32", "i64", "bool") else f", dtype={self.dtype.name}"
        if self.device != "cpu":
            extra += f", device={self.device!r}"
        return f"tensor({body}{extra})"

    # -- autograd
    @property
    def requires_grad(self) -> bool:
        return bool(self._i32("wt_tensor_requires_grad"))

    @requires_grad.setter
    def requires_grad(self, on: bool) -> None:
        call("wt_tensor_set_requires_grad", self._live(), 1 if on else 0)

    def requires_grad_(self, on: bool = True) -> Tensor:
        self.requires_grad = on
        return self

    def backward(self, grad: Tensor | None = None) -> None:
        """Backpropagate from this tensor (one element, or pass its gradient)."""
        if grad is not None and not isinstance(grad, Tensor):
            raise TypeError(f"backward: grad must be a Tensor or None, got {type(grad).__name__}")
        # A closed gradient raises here: its handle, 0, would mean "no gradient".
        call("wt_backward", self._live(), grad._live() if grad is not None else 0)

    @property
    def grad(self) -> Tensor | None:
        out = C.c_int64()
        call("wt_tensor_grad", self._live(), C.byref(out))
        return Tensor._wrap(out.value) if out.value else None

    def zero_grad(self) -> None:
        call("wt_tensor_zero_grad", self._live())

    # -- operators
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", True)
    __truediv__, __rtruediv__ = _binary("div"), _binary("div", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __pow__, __rpow__ = _binary("pow"), _binary("pow", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __eq__, __ne__ = _binary("eq"), _binary("ne")  # type: ignore[assignment]
    __lt__, __le__, __gt__, __ge__ = _binary("lt"), _binary("le"), _binary("gt"), _binary("ge")
    # Bitwise on integers, logical on bools (the array API's and NumPy's &, |, ^, ~).
    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lshift__, __rlshift__ = _binary("bitwise_left_shift"), _binary("bitwise_left_shift", True)
    __rshift__, __rrshift__ = _binary("bitwise_right_shift"), _binary("bitwise_right_shift", True)
    __hash__ = object.__hash__

    __neg__, __abs__, __invert__ = _unary("neg"), _unary("abs"), _unary("bitwise_invert")

    def __pos__(self) -> Tensor:
        return self

    @property
    def T(self) -> Tensor:
        """The axes reversed (NumPy's .T)."""
        nd = self.ndim
        if nd < 2:
            return self.detach() if nd else self._new("wt_tensor_detach")
        return op1("permute", [self], [("dims", "ints", list(range(nd))[::-1])])

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped."""
        return op1("transpose", [self])


def _use_fast() -> None:
    """Route the hot path through _fast.c when it is built and not disabled
    with WEBTENSOR_CTYPES_ONLY=1: run_op, op1, the operator methods and
    Tensor.__del__ (each falls back to the code above for what it does not take)."""
    global _FAST, run_op, op1
    if _fast is None or os.environ.get("WEBTENSOR_CTYPES_ONLY", "") not in ("", "0"):
        return
    names = ("wt_op", "wt_tensor_free", "wt_tensor_dtype", "wt_tensor_device", "wt_tensor_from_data")
    addresses = {n: C.cast(getattr(lib, n), C.c_void_p).value for n in names}
    try:
        free = _fast.init(addresses, Tensor, _lib.check, Tensor._wrap, to_dtype)
    except (TypeError, ValueError):  # a Tensor layout this build does not know: stay on ctypes
        return
    Tensor.__del__ = free
    _fast.direct_finalizer()  # after the assignment, which sets CPython's generic slot
    for attr, value in list(vars(Tensor).items()):
        if hasattr(value, "_wt_op"):
            op, reflected, arity = value._wt_op
            setattr(Tensor, attr, _fast.Method(op, reflected, value, arity))
    run_op, op1 = _fast.Runner(run_op, False), _fast.Runner(op1, True)
    _FAST = True


def fast_path() -> bool:
    """Whether the C hot path (webtensor._fast) is in use."""
    return _FAST


_use_fast()
_scopes = threading.local()


class scope:
    """`with wt.scope() as s:` closes every tensor made inside (on this thread)
    when the block ends, except those passed to s.keep(t) (which it returns)."""

    def __init__(self):
        self._made: list[Tensor] = []
        self._kept: set[int] = set()

    def keep(self, t: Tensor) -> Tensor:
        self._kept.add(id(t))
        return t

    def __enter__(self) -> scope:
        if not hasattr(_scopes, "stack"):
            _scopes.stack = []
        _scopes.stack.append(self._made)
        if _FAST:
            _fast.scope_entered(1)
        return self

    def __exit__(self, *exc) -> None:
        _scopes.stack.pop()
        if _FAST:
            _fast.scope_entered(-1)
        for t in self._made:
            if id(t) in self._kept:
                if _scopes.stack:  # a kept tensor belongs to the enclosing scope
                    _scopes.stack[-1].append(t)
            else:
                t.close()
        self._made.clear()


def manual_seed(seed: int) -> None:
    """Reset the global Philox generator: the same seed gives the same tensors everywhere."""
    call("wt_manual_seed", int(seed) & (2**64 - 1))


class no_grad:
    """`with wt.no_grad():` (or @wt.no_grad()): ops this thread makes inside are not recorded.

    The scope belongs to the thread (as in PyTorch): other threads keep recording."""

    def __enter__(self):
        call("wt_no_grad_enter")
        return self

    def __exit__(self, *exc):
        call("wt_no_grad_exit")

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        wrapped.__name__, wrapped.__doc__ = fn.__name__, fn.__doc__
        return wrapped


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)

