"""CUDA devices: whether one is here, what it is, its memory and options.

    import webtensor as wt
    if wt.cuda.is_available():
        x = wt.randn(1024, 1024, device="cuda")
        print(wt.cuda.get_device_properties()["cuda"]["Name"], wt.cuda.memory_allocated())

Everything here is read from the library (wt_device_info_json and friends):
the caching allocator, the driver and library versions live in Go.
"""

from __future__ import annotations

import ctypes as C
import json

from . import _lib


def _name(device) -> bytes:
    d = str(device)
    if not d.startswith("cuda"):
        raise ValueError(f"{d!r} is not a CUDA device (want 'cuda' or 'cuda:N')")
    return d.encode()


def is_available() -> bool:
    """Whether a CUDA device opens here."""
    from . import devices

    return any(d.startswith("cuda") for d in devices())


def device_count() -> int:
    from . import devices

    return sum(1 for d in devices() if d.startswith("cuda"))


def get_device_properties(device="cuda") -> dict:
    """The GPU and libraries ("cuda"), the allocator's counters ("memory"),
    the driver's free and total memory, and the fallback count."""
    return json.loads(_lib.read_string("wt_device_info_json", _name(device)))


def memory_stats(device="cuda") -> dict:
    """The caching allocator's counters: Allocated, Reserved, PeakAllocated, ..."""
    return get_device_properties(device)["memory"]


def memory_allocated(device="cuda") -> int:
    """Bytes held by tensors (in the allocator's size classes)."""
    return int(memory_stats(device)["Allocated"])


def memory_reserved(device="cuda") -> int:
    """Bytes taken from the driver: held by tensors or cached for reuse."""
    return int(memory_stats(device)["Reserved"])


def empty_cache(device="cuda") -> None:
    """Give cached, unused device memory back to the driver."""
    _lib.call("wt_device_empty_cache", _name(device))


def synchronize(device="cuda") -> None:
    """Wait for every op queued on the device (and raise a failed check)."""
    _lib.call("wt_device_sync", _name(device))


def set_allow_tf32(on: bool, device="cuda") -> None:
    """Let f32 matrix products use TF32 tensor cores (off by default)."""
    _lib.call("wt_device_set_option", _name(device), b"allow_tf32", 1 if on else 0)


def current_stream(device="cuda") -> int:
    """The CUstream the device's work is queued on, as an integer."""
    s = C.c_uint64()
    _lib.call("wt_device_stream", _name(device), C.byref(s))
    return s.value
