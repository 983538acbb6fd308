"""Checkpoints: wt.save / wt.load in the safetensors format.

The library writes and reads the files (wt_state_save, wt_state_load): the
bytes every SDK, Go's nn.Save and safetensors.torch.save_file write (names
sorted, a compact header padded to 8 bytes, metadata {"format": "pt"}),
written beside the path, synced and renamed into place, checked on load by
the one validator every SDK uses (a malformed file is a ValueError naming it
and the problem; the file system's errors are OSErrors).
"""

from __future__ import annotations

import ctypes as C
import os
from collections import OrderedDict
from typing import Any

from . import _lib
from ._state import State
from ._tensor import Tensor


def save(state_dict: Any, path: str | os.PathLike, metadata: dict[str, str] | None = None) -> None:
    """Write a state dict (name -> Tensor; a Module saves its state_dict()) to
    path as safetensors. A failed save never replaces a good file."""
    if hasattr(state_dict, "state_dict") and callable(state_dict.state_dict):
        state_dict = state_dict.state_dict()
    meta = {"format": "pt"} if metadata is None else dict(metadata)
    try:
        s = State.of(state_dict.items(), meta)
    except (TypeError, ValueError) as e:
        raise type(e)(f"save: {e}") from None
    with s:
        _lib.call("wt_state_save", s._h, os.fsencode(path))


def _loaded(path: str | os.PathLike, device: str | None, metadata_only: int) -> State:
    h = C.c_int64()
    st = _lib.lib.wt_state_load(os.fsencode(path), device.encode() if device else None, metadata_only, C.byref(h))
    if st == _lib.ERR_INVALID:
        # One error type for every malformed file, whatever words its message holds.
        raise ValueError(_lib.lib.wt_last_error().decode(errors="replace"))
    _lib.check(st)
    return State(h.value)


def load(path: str | os.PathLike, device: str | None = None) -> OrderedDict[str, Tensor]:
    """Read a safetensors file (from wt.save, Go's nn.Save or safetensors.torch)
    into an ordered dict name -> Tensor (file order) on device (default: the
    default device). Module.load_state_dict takes the result."""
    with _loaded(path, device, 0) as s:
        return s.items()


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The __metadata__ of a safetensors file (reading only its header)."""
    with _loaded(path, None, 1) as s:
        return s.metadata()
