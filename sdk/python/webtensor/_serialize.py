"""Checkpoints: wt.save / wt.load in the safetensors format.

The files are what the Go nn package writes (nn.Save: names sorted, compact
JSON header padded with spaces to 8 bytes, metadata {"format": "pt"}) and what
safetensors.torch.save_file writes, so a state dict saved here loads with
safetensors.torch.load_file + torch's load_state_dict, in Go with nn.Load, and
the other way round. No NumPy or safetensors package needed.

Loading reads the file's layout from the library (wt_safetensors_header, Go's
one validator of safetensors headers), so a malformed file is refused as in
every other SDK: a ValueError naming the file and the problem.
"""

from __future__ import annotations

import ctypes as C
import json
import os
import struct
import tempfile
import time
from collections import OrderedDict
from typing import Any

from . import _lib
from ._dtype import BY_NAME
from ._tensor import Tensor, _from_bytes

_TO_ST = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32", "u32": "U32",
          "i16": "I16", "i8": "I8", "u8": "U8", "bool": "BOOL"}
_MAX_HEADER = 100 << 20
# A temporary without its writer's PID in its name (an older version's) is
# stale once untouched this long (core/safetensors/save.go).
_STALE_AFTER = 3600.0


def _tensor_bytes(t: Tensor) -> bytes:
    n = t.numel() * t.dtype.itemsize
    buf = C.create_string_buffer(max(n, 1))
    _lib.call("wt_tensor_to_host", t._live(), buf, n)  # row-major, whatever the strides or device
    return buf.raw[:n]


def save(state_dict: Any, path: str | os.PathLike, metadata: dict[str, str] | None = None) -> None:
    """Write a state dict (name -> Tensor; a Module saves its state_dict()) to
    path as safetensors. The file is written beside path, synced and renamed
    into place, so a failed save never replaces a good file."""
    if hasattr(state_dict, "state_dict") and callable(state_dict.state_dict):
        state_dict = state_dict.state_dict()
    header: dict[str, Any] = {}
    meta = {"format": "pt"} if metadata is None else dict(metadata)
    for k, v in meta.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"save: metadata must map str to str, got {k!r}: {v!r}")
    if meta:
        header["__metadata__"] = dict(sorted(meta.items()))
    blobs = []
    offset = 0
    for name in sorted(state_dict):
        t = state_dict[name]
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"save: invalid tensor name {name!r}")
        if not isinstance(t, Tensor):
            raise TypeError(f"save: {name} is a {type(t).__name__}, not a webtensor Tensor")
        data = _tensor_bytes(t)
        header[name] = {"dtype": _TO_ST[t.dtype.name], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    # Go's encoding/json: top-level keys sorted, entry fields in declaration order, compact.
    ordered = {k: header[k] for k in sorted(header)}
    hj = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False).encode()
    hj += b" " * (-(8 + len(hj)) % 8)
    path = os.fspath(path)
    _remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(path)}{os.getpid()}-", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(hj)))
            f.write(hj)
            for b in blobs:
                f.write(b)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _temp_prefix(path: str) -> str:
    """What every SDK names a save's temporary beside path, before the writer's PID."""
    return "." + os.path.basename(path) + ".tmp-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, under another user
    return True


def _remove_stale_temps(path: str) -> list[str]:
    """Removes the temporaries of earlier saves to path whose writer has exited
    (a save killed mid-write left one, up to the checkpoint's size, forever), or,
    for names without a PID, untouched for an hour; a save in progress in a live
    process is left alone. Best effort, as Go's safetensors.RemoveStaleTemps."""
    folder, prefix = os.path.dirname(path) or ".", _temp_prefix(path)
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(prefix):
            continue
        full = os.path.join(folder, name)
        pid_text, dash, _ = name[len(prefix):].partition("-")
        try:
            if not os.path.isfile(full) or os.path.islink(full):
                continue
            if dash and pid_text.isdigit() and int(pid_text) > 0:
                stale = not _pid_alive(int(pid_text))
            else:
                stale = time.time() - os.path.getmtime(full) > _STALE_AFTER
            if stale:
                os.unlink(full)
                removed.append(name)
        except (OSError, ValueError, OverflowError):
            continue
    return removed


def _header(buf: Any, nbytes: int, file_size: int, path: str) -> dict[str, Any]:
    """The layout of a safetensors file from the library's validator: buf holds
    the file's first nbytes bytes. Malformed: ValueError naming path."""
    ptr = (C.c_char * max(nbytes, 1)).from_buffer(buf) if nbytes else None
    name = path.encode(errors="surrogateescape")
    needed = C.c_size_t(0)
    cap = max(256, 2 * nbytes + 256) if nbytes < (1 << 20) else 1 << 20
    while True:
        out = C.create_string_buffer(cap)
        st = _lib.lib.wt_safetensors_header(ptr, nbytes, file_size, name, out, cap, C.byref(needed))
        if st == _lib.ERR_BUFFER_TOO_SMALL and needed.value > cap:
            cap = needed.value
            continue
        if st == _lib.ERR_INVALID:
            # One error type for every malformed file, whatever words its message holds.
            raise ValueError(_lib.lib.wt_last_error().decode(errors="replace"))
        _lib.check(st)
        return json.loads(out.value)


def load(path: str | os.PathLike, device: str | None = None) -> OrderedDict[str, Tensor]:
    """Read a safetensors file (from wt.save, Go's nn.Save or safetensors.torch)
    into an ordered dict name -> Tensor (file order) on device (default: the
    default device). Module.load_state_dict takes the result. A malformed file
    is a ValueError naming it and the problem."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        buf = bytearray(f.read())
    info = _header(buf, len(buf), len(buf), path)
    base = info["data_start"]
    out: OrderedDict[str, Tensor] = OrderedDict()
    for t in info["tensors"]:
        lo, hi = t["offsets"]
        nbytes = hi - lo
        ptr = (C.c_char * nbytes).from_buffer(buf, base + lo) if nbytes else None
        out[t["name"]] = _from_bytes(ptr, nbytes, BY_NAME[t["dtype"]], t["shape"], device)
    return out


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The __metadata__ of a safetensors file (reading only its header)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = bytearray(f.read(8))
        if len(head) == 8:
            (hl,) = struct.unpack("<Q", head)
            if hl <= min(_MAX_HEADER, size - 8):
                head += f.read(hl)
    return dict(_header(head, len(head), size, path)["metadata"])
