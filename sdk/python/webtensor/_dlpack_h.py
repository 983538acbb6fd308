"""ctypes mirrors of capi/include/dlpack.h's structs and flags.

A module of its own, importing nothing of the package, so that the C ABI's
DLPack test (capi/test/dlpack_roundtrip.py) loads this very file by path
instead of keeping a second copy of the layouts that could drift from the
SDK's.
"""

from __future__ import annotations

import ctypes as C


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [
        ("data", C.c_void_p),
        ("device", DLDevice),
        ("ndim", C.c_int32),
        ("dtype", DLDataType),
        ("shape", C.POINTER(C.c_int64)),
        ("strides", C.POINTER(C.c_int64)),
        ("byte_offset", C.c_uint64),
    ]


DELETER = C.CFUNCTYPE(None, C.c_void_p)


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", DELETER)]


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", C.c_void_p),
        ("deleter", DELETER),
        ("flags", C.c_uint64),
        ("dl_tensor", DLTensor),
    ]


FLAG_READ_ONLY, FLAG_IS_COPIED = 1, 2
