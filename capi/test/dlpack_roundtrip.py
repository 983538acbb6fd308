"""DLPack round trips between libwebtensor and NumPy / PyTorch, through ctypes.

Usage: dlpack_roundtrip.py path/to/libwebtensor.so

It proves capi/include/dlpack.h and the C ABI's DLPack functions against two
real implementations of the protocol: webtensor tensors exported with
wt_to_dlpack_versioned / wt_to_dlpack are consumed by np.from_dlpack and
torch.from_dlpack, and NumPy / PyTorch capsules are imported with
wt_from_dlpack_versioned / wt_from_dlpack. Every direction must share memory:
a write on one side is read back on the other. Exits non-zero on the first
mismatch, naming it.
"""

import ctypes as C
import gc
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import torch

# ---- the C structs (dlpack.h) -------------------------------------------------
# The Python SDK's mirror of dlpack.h, loaded by path: importing the webtensor
# package would load its own libwebtensor, not the one under test.

_spec = importlib.util.spec_from_file_location(
    "_dlpack_h", Path(__file__).resolve().parents[2] / "sdk/python/webtensor/_dlpack_h.py"
)
_dlpack_h = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_dlpack_h)
DLTensor, DLManagedTensor, DLManagedTensorVersioned = (
    _dlpack_h.DLTensor,
    _dlpack_h.DLManagedTensor,
    _dlpack_h.DLManagedTensorVersioned,
)
FLAG_READ_ONLY = _dlpack_h.FLAG_READ_ONLY

# Capsule names: PyCapsule keeps the char pointer, so these must live as long
# as the process (module constants do).
NAME_V, USED_V = b"dltensor_versioned", b"used_dltensor_versioned"
NAME_L, USED_L = b"dltensor", b"used_dltensor"

# webtensor.h
WT_OK = 0
WT = {"f32": 1, "f16": 2, "bf16": 3, "f64": 4, "i64": 5, "i32": 6, "u32": 7, "i16": 8, "i8": 9, "u8": 10, "bool": 11,
      "u16": 14, "u64": 15}
NP_TO_WT = {
    np.float32: "f32", np.float16: "f16", np.float64: "f64", np.int64: "i64", np.int32: "i32",
    np.uint32: "u32", np.int16: "i16", np.int8: "i8", np.uint8: "u8", np.bool_: "bool",
    np.uint16: "u16", np.uint64: "u64",
}
TORCH_TO_WT = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64", torch.int64: "i64",
    torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "bool",
}
# PyTorch 2.3 added uint16 and uint64 (few ops, but copies and DLPack).
TORCH_TO_WT.update({getattr(torch, n): w for n, w in (("uint16", "u16"), ("uint64", "u64")) if hasattr(torch, n)})


class WtAttr(C.Structure):
    _fields_ = [
        ("name", C.c_char_p), ("kind", C.c_int32), ("i", C.c_int64), ("f", C.c_double), ("s", C.c_char_p),
        ("ints", C.POINTER(C.c_int64)), ("floats", C.POINTER(C.c_double)), ("len", C.c_int64),
    ]


WT_ATTR_INT = 1

checks = 0


def fail(msg):
    print(f"dlpack_roundtrip: FAIL: {msg}", file=sys.stderr)
    sys.stdout.flush()
    os._exit(1)


def check(cond, msg):
    global checks
    if not cond:
        fail(msg)
    checks += 1


def equal(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    check(got.shape == want.shape and np.array_equal(got, want), f"{what}: got {got!r}, want {want!r}")


# ---- the library ----------------------------------------------------------------


def load(path):
    lib = C.CDLL(path)
    i64p, i32, sz = C.POINTER(C.c_int64), C.c_int32, C.c_size_t
    sigs = {
        "wt_tensor_from_data": [C.c_void_p, sz, i32, i64p, i32, C.c_char_p, i64p],
        "wt_tensor_to_host": [C.c_int64, C.c_void_p, sz],
        "wt_tensor_free": [C.c_int64],
        "wt_tensor_dtype": [C.c_int64, C.POINTER(i32)],
        "wt_tensor_shape": [C.c_int64, i64p, i32],
        "wt_tensor_ndim": [C.c_int64, C.POINTER(i32)],
        "wt_op": [C.c_char_p, i64p, i32, C.POINTER(WtAttr), i32, i64p, i32, C.POINTER(i32)],
        "wt_to_dlpack_versioned": [C.c_int64, C.POINTER(C.POINTER(DLManagedTensorVersioned))],
        "wt_to_dlpack": [C.c_int64, C.POINTER(C.POINTER(DLManagedTensor))],
        "wt_from_dlpack_versioned": [C.c_void_p, i64p],
        "wt_from_dlpack": [C.c_void_p, i64p],
        "wt_live_dlpack_exports": [i64p],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, C.c_int32
    lib.wt_last_error.restype = C.c_char_p
    return lib


def call(lib, name, *args):
    st = getattr(lib, name)(*args)
    if st != WT_OK:
        fail(f"{name} returned {st}: {lib.wt_last_error().decode()}")


def from_numpy(lib, a):
    a = np.ascontiguousarray(a)
    shape = (C.c_int64 * max(a.ndim, 1))(*a.shape)
    h = C.c_int64()
    call(lib, "wt_tensor_from_data", a.ctypes.data_as(C.c_void_p), a.nbytes, WT[NP_TO_WT[a.dtype.type]],
         shape, a.ndim, b"cpu", C.byref(h))
    return h.value


def to_numpy(lib, h, dtype):
    nd = C.c_int32()
    call(lib, "wt_tensor_ndim", h, C.byref(nd))
    shape = (C.c_int64 * max(nd.value, 1))()
    call(lib, "wt_tensor_shape", h, shape, nd.value)
    out = np.empty(tuple(shape[: nd.value]), dtype=dtype)
    call(lib, "wt_tensor_to_host", h, out.ctypes.data_as(C.c_void_p), out.nbytes)
    return out


def op(lib, name, h, **attrs):
    arr = (WtAttr * max(len(attrs), 1))()
    keep = []
    for i, (k, v) in enumerate(attrs.items()):
        keep.append(k.encode())
        arr[i] = WtAttr(name=keep[-1], kind=WT_ATTR_INT, i=v)
    ins, outs, n = (C.c_int64 * 1)(h), (C.c_int64 * 1)(), C.c_int32()
    call(lib, "wt_op", name.encode(), ins, 1, arr, len(attrs), outs, 1, C.byref(n))
    return outs[0]


def live_exports(lib):
    n = C.c_int64()
    call(lib, "wt_live_dlpack_exports", C.byref(n))
    return n.value


# ---- webtensor as producer ---------------------------------------------------------

pyapi = C.pythonapi
pyapi.PyCapsule_New.restype = C.py_object
pyapi.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
pyapi.PyCapsule_IsValid.restype = C.c_int
pyapi.PyCapsule_IsValid.argtypes = [C.c_void_p, C.c_char_p]
pyapi.PyCapsule_GetPointer.restype = C.c_void_p
pyapi.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
pyapi.PyCapsule_SetName.restype = C.c_int
pyapi.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
pyapi.PyCapsule_GetName.restype = C.c_char_p
pyapi.PyCapsule_GetName.argtypes = [C.py_object]

CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)


@CAPSULE_DESTRUCTOR
def capsule_destructor(cap):
    # The protocol: a capsule nobody consumed (still under its first name)
    # must free its tensor; a consumer renames it to used_* and owns it.
    for name, struct in ((NAME_V, DLManagedTensorVersioned), (NAME_L, DLManagedTensor)):
        if pyapi.PyCapsule_IsValid(cap, name):
            ptr = C.c_void_p(C.pythonapi.PyCapsule_GetPointer(C.cast(cap, C.py_object), name))
            m = C.cast(ptr, C.POINTER(struct)).contents
            if m.deleter:
                m.deleter(ptr)


class Exported:
    """A webtensor handle as a DLPack producer (what the Python SDK will do)."""

    def __init__(self, lib, h, legacy=False):
        self.lib, self.h, self.legacy = lib, h, legacy

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("copy=True is not supported by this test producer")
        if self.legacy or max_version is None or max_version[0] < 1:
            out = C.POINTER(DLManagedTensor)()
            call(self.lib, "wt_to_dlpack", self.h, C.byref(out))
            return pyapi.PyCapsule_New(C.cast(out, C.c_void_p), NAME_L, C.cast(capsule_destructor, C.c_void_p))
        out = C.POINTER(DLManagedTensorVersioned)()
        call(self.lib, "wt_to_dlpack_versioned", self.h, C.byref(out))
        m = out.contents
        check((m.version.major, m.version.minor) == (1, 1), f"export version {m.version.major}.{m.version.minor}")
        return pyapi.PyCapsule_New(C.cast(out, C.c_void_p), NAME_V, C.cast(capsule_destructor, C.c_void_p))

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def test_export(lib):
    base = live_exports(lib)
    for dt in NP_TO_WT:
        a = (np.arange(6).reshape(2, 3) % 2).astype(dt) if dt is np.bool_ else np.arange(-2, 4).astype(dt).reshape(2, 3)
        h = from_numpy(lib, a)
        for legacy in (False, True):
            equal(np.from_dlpack(Exported(lib, h, legacy)), a, f"np.from_dlpack of {a.dtype} (legacy={legacy})")
            equal(torch.from_dlpack(Exported(lib, h, legacy)).numpy(), a, f"torch.from_dlpack of {a.dtype}")
        call(lib, "wt_tensor_free", h)
    gc.collect()
    check(live_exports(lib) == base, f"{live_exports(lib) - base} exports not released by NumPy/PyTorch")

    # Shared memory both ways, and the data outlives the handle.
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    h = from_numpy(lib, a)
    n = np.from_dlpack(Exported(lib, h))
    t = torch.from_dlpack(Exported(lib, h))
    check(n.flags.writeable, "np.from_dlpack of a writable export gave a read-only array")
    n[1, 2] = 100
    t[0, 0] = -1
    want = a.copy()
    want[1, 2], want[0, 0] = 100, -1
    equal(to_numpy(lib, h, np.float32), want, "writes through NumPy and PyTorch, read with wt_tensor_to_host")
    equal(t.numpy(), want, "PyTorch sees NumPy's write")
    call(lib, "wt_tensor_free", h)
    gc.collect()
    check(live_exports(lib) == base + 2, "exports released while NumPy/PyTorch still hold them")
    equal(n, want, "NumPy's view after the handle was freed")
    del n, t
    gc.collect()
    check(live_exports(lib) == base, "exports not released after NumPy/PyTorch dropped them")

    # Views: strides and byte_offset must be honoured by the consumers.
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    h = from_numpy(lib, a)
    views = {
        "transposed": (op(lib, "transpose", h), a.T),
        "row slice (byte_offset)": (op(lib, "slice", h, axis=0, start=1, stop=3), a[1:3]),
        "step slice": (op(lib, "slice", h, axis=1, start=1, step=2), a[:, 1::2]),
    }
    for name, (hv, want) in views.items():
        equal(np.from_dlpack(Exported(lib, hv)), want, f"np.from_dlpack of a {name} view")
        equal(torch.from_dlpack(Exported(lib, hv)).numpy(), want, f"torch.from_dlpack of a {name} view")
        n = np.from_dlpack(Exported(lib, hv))
        n[...] += 1000
        equal(to_numpy(lib, hv, np.float32), want + 1000, f"write through NumPy into a {name} view")
        n[...] -= 1000
        call(lib, "wt_tensor_free", hv)
        del n
    call(lib, "wt_tensor_free", h)

    # bfloat16 has no NumPy dtype: through PyTorch only.
    tb = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    raw = tb.view(torch.int16).numpy()
    shape, h = (C.c_int64 * 1)(3), C.c_int64()
    call(lib, "wt_tensor_from_data", raw.ctypes.data_as(C.c_void_p), 6, WT["bf16"], shape, 1, b"cpu", C.byref(h))
    got = torch.from_dlpack(Exported(lib, h.value))
    check(got.dtype == torch.bfloat16 and torch.equal(got, tb), f"bf16 export: {got}")
    call(lib, "wt_tensor_free", h.value)
    del got
    gc.collect()
    check(live_exports(lib) == base, "exports left after the export tests")


# ---- webtensor as consumer -----------------------------------------------------------


def import_capsule(lib, cap):
    """Imports a producer's capsule, renaming it so the producer won't free it."""
    name = pyapi.PyCapsule_GetName(cap)
    versioned = name == NAME_V
    check(name in (NAME_V, NAME_L), f"capsule named {name!r}")
    ptr = pyapi.PyCapsule_GetPointer(cap, name)
    h = C.c_int64()
    call(lib, "wt_from_dlpack_versioned" if versioned else "wt_from_dlpack", ptr, C.byref(h))
    check(pyapi.PyCapsule_SetName(cap, USED_V if versioned else USED_L) == 0, "PyCapsule_SetName failed")
    return h.value


def export_flags(lib, h):
    out = C.POINTER(DLManagedTensorVersioned)()
    call(lib, "wt_to_dlpack_versioned", h, C.byref(out))
    m = out.contents
    flags = m.flags
    m.deleter(C.cast(out, C.c_void_p))
    return flags


def test_import(lib):
    # PyTorch, versioned and legacy, shared memory.
    for versioned in (True, False):
        tt = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        cap = tt.__dlpack__(max_version=(1, 1)) if versioned else tt.__dlpack__()
        h = import_capsule(lib, cap)
        del cap
        equal(to_numpy(lib, h, np.float32), tt.numpy(), f"import from PyTorch (versioned={versioned})")
        tt[1, 1] = 55
        equal(to_numpy(lib, h, np.float32)[1, 1], np.float32(55), "PyTorch's write seen through webtensor")
        dt = C.c_int32()
        call(lib, "wt_tensor_dtype", h, C.byref(dt))
        check(dt.value == WT["f32"], f"imported dtype {dt.value}")
        call(lib, "wt_tensor_free", h)

    for tdt, wt in TORCH_TO_WT.items():
        tt = (torch.arange(6) % 2).to(tdt) if tdt == torch.bool else torch.arange(-3, 3).to(tdt)
        h = import_capsule(lib, tt.__dlpack__(max_version=(1, 1)))
        dt = C.c_int32()
        call(lib, "wt_tensor_dtype", h, C.byref(dt))
        check(dt.value == WT[wt], f"torch {tdt} imported as dtype {dt.value}, want {WT[wt]}")
        if tdt == torch.bfloat16:
            got = to_numpy(lib, h, np.int16)
            equal(got, tt.view(torch.int16).numpy(), "bf16 import bits")
        else:
            equal(to_numpy(lib, h, tt.numpy().dtype), tt.numpy(), f"torch {tdt} import")
        call(lib, "wt_tensor_free", h)

    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    for name, tv in {"transposed": base.t(), "step slice": base[:, ::2], "offset": base[1:, 2:]}.items():
        h = import_capsule(lib, tv.__dlpack__(max_version=(1, 1)))
        equal(to_numpy(lib, h, np.float32), tv.numpy(), f"PyTorch {name} view")
        tv.add_(100)
        equal(to_numpy(lib, h, np.float32), tv.numpy(), f"PyTorch {name} view after a write")
        call(lib, "wt_tensor_free", h)

    # NumPy, with strides (transposed, stepped, negative) and read-only.
    a = np.arange(30, dtype=np.float64).reshape(5, 6)
    views = {"transposed": a.T, "step slice": a[::2, 1::2], "reversed": a[::-1, ::-2], "offset": a[2:, 3:]}
    for name, v in views.items():
        try:
            cap = v.__dlpack__(max_version=(1, 1))
        except BufferError as e:  # a NumPy that refuses this layout is not our failure
            print(f"dlpack_roundtrip: note: NumPy does not export a {name} view: {e}")
            continue
        h = import_capsule(lib, cap)
        equal(to_numpy(lib, h, np.float64), v, f"NumPy {name} view")
        v[0, 0] = -7 - checks
        equal(to_numpy(lib, h, np.float64), v, f"NumPy {name} view after a write")
        call(lib, "wt_tensor_free", h)

    ro = np.arange(4, dtype=np.int32)
    ro.flags.writeable = False
    h = import_capsule(lib, ro.__dlpack__(max_version=(1, 1)))
    equal(to_numpy(lib, h, np.int32), ro, "read-only NumPy import")
    check(export_flags(lib, h) & FLAG_READ_ONLY, "a read-only import lost READ_ONLY on re-export")
    check(not np.from_dlpack(Exported(lib, h)).flags.writeable, "NumPy got a writable view of a read-only tensor")
    call(lib, "wt_tensor_free", h)

    # PyTorch -> webtensor -> NumPy: one buffer all the way.
    tt = torch.zeros(2, 3, dtype=torch.float32)
    h = import_capsule(lib, tt.__dlpack__(max_version=(1, 1)))
    n = np.from_dlpack(Exported(lib, h))
    tt[1, 2] = 9
    check(n[1, 2] == 9, "PyTorch's write not seen by NumPy through webtensor")
    call(lib, "wt_tensor_free", h)
    del n
    gc.collect()


def main():
    if len(sys.argv) != 2:
        fail("usage: dlpack_roundtrip.py path/to/libwebtensor.so")
    lib = load(sys.argv[1])
    for s, size in ((DLTensor, 48), (DLManagedTensor, 64), (DLManagedTensorVersioned, 80)):
        check(C.sizeof(s) == size, f"ctypes sizeof({s.__name__}) = {C.sizeof(s)}, want {size}")
    test_export(lib)
    test_import(lib)
    print(f"dlpack_roundtrip: {checks} checks passed (numpy {np.__version__}, torch {torch.__version__})")
    sys.stdout.flush()
    # Imported NumPy arrays are released by a Go GC cleanup that takes the
    # GIL; leave without finalising the interpreter under it.
    os._exit(0)


if __name__ == "__main__":
    main()
