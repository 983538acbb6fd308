"""Checkpoints: wt.save / wt.load in the safetensors format.

The files are what the Go nn package writes (nn.Save: names sorted, compact
JSON header padded with spaces to 8 bytes, metadata {"format": "pt"}) and what
safetensors.torch.save_file writes, so a state dict saved here loads with
safetensors.torch.load_file + torch's load_state_dict, in Go with nn.Load, and
the other way round. Pure Python: no NumPy or safetensors package needed.
"""

from __future__ import annotations

import ctypes as C
import json
import os
import struct
import tempfile
from collections import OrderedDict
from typing import Any

from . import _lib
from ._dtype import BY_NAME
from ._tensor import Tensor, _from_bytes

_TO_ST = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32", "u32": "U32",
          "i16": "I16", "i8": "I8", "u8": "U8", "bool": "BOOL"}
_FROM_ST = {v: BY_NAME[k] for k, v in _TO_ST.items()}
_MAX_HEADER = 100 << 20


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
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=os.path.dirname(path) or ".")
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


def load(path: str | os.PathLike, device: str | None = None) -> OrderedDict[str, Tensor]:
    """Read a safetensors file (from wt.save, Go's nn.Save or safetensors.torch)
    into an ordered dict name -> Tensor (file order) on device (default: the
    default device). Module.load_state_dict takes the result."""
    with open(path, "rb") as f:
        buf = bytearray(f.read())
    if len(buf) < 8:
        raise ValueError(f"load {path}: {len(buf)} bytes, too short for safetensors")
    (hl,) = struct.unpack_from("<Q", buf, 0)
    if hl > _MAX_HEADER or hl > len(buf) - 8:
        raise ValueError(f"load {path}: header length {hl} exceeds the file: truncated or not safetensors")
    try:
        header = json.loads(bytes(buf[8 : 8 + hl]))
    except ValueError as e:
        raise ValueError(f"load {path}: the header is not valid JSON: {e}") from None
    base, size = 8 + hl, len(buf) - 8 - hl
    entries = []
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dt = _FROM_ST.get(e.get("dtype"))
        if dt is None:
            raise ValueError(f"load {path}: tensor {name!r}: unsupported dtype {e.get('dtype')!r}")
        shape = [int(s) for s in e["shape"]]
        lo, hi = (int(o) for o in e["data_offsets"])
        n = 1
        for s in shape:
            if s < 0:
                raise ValueError(f"load {path}: tensor {name!r}: bad shape {shape}")
            n *= s
        if lo < 0 or hi < lo or hi > size or hi - lo != n * dt.itemsize:
            raise ValueError(f"load {path}: tensor {name!r}: data offsets [{lo}, {hi}] do not fit shape "
                             f"{shape} of {dt.name} within {size} data bytes")
        entries.append((lo, hi, name, dt, shape))
    entries.sort()
    out: OrderedDict[str, Tensor] = OrderedDict()
    end = 0
    for lo, hi, name, dt, shape in entries:
        if lo < end:
            raise ValueError(f"load {path}: tensor {name!r} overlaps another tensor's data")
        end = hi
        nbytes = hi - lo
        ptr = (C.c_char * max(nbytes, 1)).from_buffer(buf, base + lo) if nbytes else None
        out[name] = _from_bytes(ptr, nbytes, dt, shape, device)
    return out


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The __metadata__ of a safetensors file."""
    with open(path, "rb") as f:
        (hl,) = struct.unpack("<Q", f.read(8))
        if hl > _MAX_HEADER:
            raise ValueError(f"load {path}: header length {hl} too large")
        return dict(json.loads(f.read(hl)).get("__metadata__", {}))
