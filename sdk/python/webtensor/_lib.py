"""Loading the library, and error mapping.

Every function of capi/include/webtensor.h gets the argtypes and restype that
_abi (generated from the header) gives; the rest of the package calls them
through `call(name, *args)`, which raises the Python exception that fits the
status and the library's message.
"""

from __future__ import annotations

import ctypes as C
import errno
import os
import re
from pathlib import Path

# The DLPack structs (dlpack.h) live in _dlpack_h, shared with capi/test;
# re-exported here, where the rest of the package and its users find them.
from ._dlpack_h import (  # noqa: F401
    DELETER,
    FLAG_IS_COPIED,
    FLAG_READ_ONLY,
    DLDataType,
    DLDevice,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLPackVersion,
    DLTensor,
)

# The statuses, wt_attr and every function's ctypes signature are generated
# from the headers (_abi.py); re-exported here, where the package finds them.
from ._abi import (  # noqa: F401
    ABI_VERSION,
    ERR_BUFFER_TOO_SMALL,
    ERR_HANDLE,
    ERR_INTERNAL,
    ERR_INVALID,
    ERR_IO,
    ERR_OUT_OF_MEMORY,
    ERR_UNSUPPORTED,
    OK,
    SIGNATURES,
    Attr,
)

ATTR_INT, ATTR_FLOAT, ATTR_BOOL, ATTR_STRING, ATTR_INTS, ATTR_FLOATS, ATTR_DTYPE = range(1, 8)


class UnsupportedError(RuntimeError):
    """A valid request the library cannot serve (absent device, dtype, DLPack layout)."""


# ---- the library ----------------------------------------------------------------


def library_path() -> str:
    """$WEBTENSOR_LIBRARY when set, else the libwebtensor.so shipped in this package."""
    return os.environ.get("WEBTENSOR_LIBRARY") or str(Path(__file__).with_name("libwebtensor.so"))


def _python_sites() -> str:
    """This interpreter's site-packages folders, where pip's nvidia-* wheels
    (PyTorch's CUDA libraries: NVRTC, cuBLAS) live, for the CUDA backend's
    library search. It must be in the environment before the library loads:
    the Go runtime reads the environment once, when it starts."""
    import site
    import sys

    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: "")()
    if user:
        dirs.append(user)
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    return os.pathsep.join(dict.fromkeys(dirs))


def _load() -> C.CDLL:
    path = library_path()
    os.environ.setdefault("WEBTENSOR_PYTHON_SITE", _python_sites())
    try:
        lib = C.CDLL(path)
    except OSError as e:
        raise ImportError(f"webtensor: cannot load the native library {path}: {e}") from e
    for name, (argtypes, restype) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    abi = lib.wt_abi_version()
    if abi != ABI_VERSION:
        raise ImportError(f"webtensor: {path} has C ABI version {abi}, this package needs {ABI_VERSION}")
    return lib


lib = _load()

# ---- errors -------------------------------------------------------------------------

_TYPE_WORDS = re.compile(r"\b(dtype|dtypes|kind|floating-point tensors)\b")
_INDEX_WORDS = re.compile(r"out of range|out of bounds")
# The file system's words (Go's os errors) and the errno that makes OSError
# the matching subclass (FileNotFoundError, PermissionError, ...).
_IO_ERRNOS = {"no such file or directory": errno.ENOENT, "permission denied": errno.EACCES,
              "is a directory": errno.EISDIR, "not a directory": errno.ENOTDIR, "no space left": errno.ENOSPC}


def error_for(status: int, message: str) -> Exception:
    """The Python exception for a failed status and the library's message."""
    if status == ERR_INVALID:
        if _INDEX_WORDS.search(message):
            return IndexError(message)
        if _TYPE_WORDS.search(message):
            return TypeError(message)
        return ValueError(message)
    if status == ERR_UNSUPPORTED:
        return UnsupportedError(message)
    if status == ERR_OUT_OF_MEMORY:
        return MemoryError(message)
    if status == ERR_IO:
        code = next((n for words, n in _IO_ERRNOS.items() if words in message), errno.EIO)
        return OSError(code, message)
    name = lib.wt_status_string(status).decode()
    return RuntimeError(f"{message} ({name})" if status == ERR_INTERNAL else message)


def check(status: int) -> None:
    """Raise the exception for status unless it is WT_OK."""
    if status != OK:
        raise error_for(status, lib.wt_last_error().decode(errors="replace"))


def call(name: str, *args) -> None:
    check(getattr(lib, name)(*args))


def read_string(name: str, *args) -> str:
    """Call a function that fills a string buffer, growing the buffer as told."""
    fn = getattr(lib, name)
    needed = C.c_size_t(0)
    cap = 256
    while True:
        buf = C.create_string_buffer(cap)
        st = fn(*args, buf, cap, C.byref(needed))
        if st == ERR_BUFFER_TOO_SMALL and needed.value > cap:
            cap = needed.value
            continue
        check(st)
        return buf.value.decode()


def i64_array(values) -> C.Array:
    values = list(values)
    return (C.c_int64 * max(len(values), 1))(*values)


def version() -> str:
    return lib.wt_version().decode()


def live_tensors() -> int:
    n = C.c_int64()
    call("wt_live_tensors", C.byref(n))
    return n.value


def live_dlpack_exports() -> int:
    n = C.c_int64()
    call("wt_live_dlpack_exports", C.byref(n))
    return n.value
