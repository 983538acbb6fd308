"""DLPack exchange (the Python array API protocol) over the C ABI.

Export: Tensor.__dlpack__ returns a PyCapsule named "dltensor_versioned" (or
"dltensor" for consumers that ask for no version); its destructor calls the
deleter only when no consumer renamed the capsule to "used_*".

Import: wt.from_dlpack(obj) takes obj.__dlpack__(), and the library then owns
the producer's managed tensor. The library runs the producer's deleter from a
Go cleanup thread, possibly while the interpreter is shutting down, when
NumPy's or PyTorch's deleter (which takes the GIL) must not run. So the
library gets a wrapper struct whose deleter is ours: it calls the producer's
deleter while Python is alive, and an atexit hook disarms every wrapper still
outstanding (their memory is released with the process).
"""

from __future__ import annotations

import atexit
import ctypes as C
import threading

from . import _lib
from ._lib import DLManagedTensor, DLManagedTensorVersioned, call, lib
from ._tensor import Tensor

KDL_CPU, KDL_CUDA = 1, 2
NAME_V, USED_V = b"dltensor_versioned", b"used_dltensor_versioned"
NAME_L, USED_L = b"dltensor", b"used_dltensor"

_api = C.pythonapi
_api.PyCapsule_New.restype = C.py_object
_api.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
_api.PyCapsule_GetPointer.restype = C.c_void_p
_api.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
_api.PyCapsule_SetName.restype = C.c_int
_api.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
_api.PyCapsule_GetName.restype = C.c_char_p
_api.PyCapsule_GetName.argtypes = [C.py_object]


def _capsule_destructor() -> C.c_void_p:
    """The library's C destructor for our capsules. CPython may destroy a
    capsule while the consumer's exception is pending (NumPy rejecting a
    CUDA or bfloat16 tensor does), when no Python code can run, so the
    destructor is C that sets the exception aside; it calls these four
    CPython functions of this interpreter."""
    fns = [_api.PyCapsule_IsValid, _api.PyCapsule_GetPointer, _api.PyErr_Fetch, _api.PyErr_Restore]
    table = (C.c_void_p * 4)(*(C.cast(f, C.c_void_p) for f in fns))
    out = C.c_void_p()
    call("wt_python_capsule_destructor", table, C.byref(out))
    return out


_DESTRUCTOR = _capsule_destructor()


def dlpack_device(t: Tensor) -> tuple[int, int]:
    """(device_type, device_id): CUDA tensors are kDLCUDA device memory; every
    other tensor is kDLCPU (the C ABI copies WebGPU tensors to host memory)."""
    dev = t.device
    if dev.startswith("cuda"):
        return (KDL_CUDA, int(dev.partition(":")[2] or 0))
    return (KDL_CPU, 0)


def to_capsule(t: Tensor, stream=None, max_version=None, dl_device=None, copy=None):
    here = dlpack_device(t)
    if stream is not None and stream != -1 and here[0] != KDL_CUDA:
        raise BufferError(f"__dlpack__: stream {stream!r} given for a CPU export")
    # A CUDA export is made once the device's queued work is done, so the
    # consumer's stream (whatever it is) may read it at once.
    src = t.contiguous().to(t.dtype) if copy else t
    if dl_device is not None and tuple(dl_device) != here:
        if tuple(dl_device) != (KDL_CPU, 0):
            raise BufferError(f"__dlpack__: cannot export a {t.device} tensor to device {tuple(dl_device)}; "
                              f"it can go to {here} or (1, 0) (CPU)")
        src = t.to("cpu")
        copy = True
    try:
        if max_version is not None and max_version[0] >= 1:
            out = C.POINTER(DLManagedTensorVersioned)()
            call("wt_to_dlpack_versioned", src._live(), C.byref(out))
            if copy:
                out.contents.flags |= _lib.FLAG_IS_COPIED
            return _api.PyCapsule_New(C.cast(out, C.c_void_p), NAME_V, _DESTRUCTOR)
        out_l = C.POINTER(DLManagedTensor)()
        call("wt_to_dlpack", src._live(), C.byref(out_l))
        return _api.PyCapsule_New(C.cast(out_l, C.c_void_p), NAME_L, _DESTRUCTOR)
    finally:
        if src is not t:
            src.close()


# ---- import -----------------------------------------------------------------------

_outstanding: dict[int, tuple] = {}  # wrapper address -> (wrapper, producer pointer, versioned)
_lock = threading.Lock()


@_lib.DELETER
def _wrapper_deleter(addr):
    with _lock:
        entry = _outstanding.pop(addr, None)
    if entry is None:
        return
    _, ptr, versioned = entry
    struct = DLManagedTensorVersioned if versioned else DLManagedTensor
    m = C.cast(ptr, C.POINTER(struct)).contents
    if m.deleter:
        m.deleter(ptr)


@atexit.register
def _disarm() -> None:
    with _lock:
        for wrapper, _, _ in _outstanding.values():
            wrapper.deleter = _lib.DELETER()
        _outstanding.clear()


def from_capsule(cap) -> Tensor:
    name = _api.PyCapsule_GetName(cap)
    if name not in (NAME_V, NAME_L):
        raise ValueError(f"from_dlpack: capsule named {name!r}, want 'dltensor_versioned' or 'dltensor'")
    versioned = name == NAME_V
    ptr = _api.PyCapsule_GetPointer(cap, name)
    w = DLManagedTensorVersioned()
    if versioned:
        m = C.cast(ptr, C.POINTER(DLManagedTensorVersioned)).contents
        w.version, w.flags = m.version, m.flags
    else:
        m = C.cast(ptr, C.POINTER(DLManagedTensor)).contents
        w.version.major, w.version.minor = 1, 0
    w.dl_tensor = m.dl_tensor
    w.deleter = _wrapper_deleter
    addr = C.addressof(w)
    with _lock:
        _outstanding[addr] = (w, ptr, versioned)
    h = C.c_int64()
    st = lib.wt_from_dlpack_versioned(addr, C.byref(h))
    if st != _lib.OK:
        with _lock:
            _outstanding.pop(addr, None)
        _lib.check(st)  # the producer still owns its tensor: the capsule stays unconsumed
    _api.PyCapsule_SetName(cap, USED_V if versioned else USED_L)
    return Tensor._wrap(h.value)


def from_dlpack(x, *, device=None, copy=None) -> Tensor:
    """A tensor sharing memory with x (a NumPy array, a torch tensor, any __dlpack__ producer)."""
    if isinstance(x, Tensor):
        t = x.detach()
    elif hasattr(x, "__dlpack__"):
        kwargs = {}
        dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (KDL_CPU, 0)
        if int(dev[0]) == KDL_CUDA:
            # The producer makes its pending writes visible to the stream
            # our kernels run on.
            stream = C.c_uint64()
            call("wt_device_stream", f"cuda:{int(dev[1])}".encode(), C.byref(stream))
            kwargs["stream"] = stream.value
        try:
            cap = x.__dlpack__(max_version=(1, 1), **kwargs)
        except TypeError:  # a producer from before the versioned protocol
            cap = x.__dlpack__(**kwargs)
        t = from_capsule(cap)
    elif type(x).__name__ == "PyCapsule":
        t = from_capsule(x)
    else:
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__")
    if copy:
        # A new buffer: the cast to its own dtype copies (contiguous() of a
        # contiguous tensor is a view of the producer's memory).
        d = t.to(t.dtype)
        t.close()
        t = d
    if device is not None and device != t.device:
        moved = t.to(device)
        t.close()
        t = moved
    return t


def _dlpack_method(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return to_capsule(self, stream, max_version, dl_device, copy)


Tensor.__dlpack__ = _dlpack_method
Tensor.__dlpack_device__ = dlpack_device
