"""State dicts in the library (wt_state_*, abi/state.go): named tensors and
metadata, what checkpoints and optimiser states are made of. The library
writes, reads and validates safetensors files and loads values into a
module's tensors; this module only moves Python values in and out."""

from __future__ import annotations

import ctypes as C
from collections import OrderedDict
from typing import Any

from . import _lib
from ._objects import Handle
from ._tensor import Tensor, _attr


class State(Handle):
    """One wt_state handle, freed with the object (or by close())."""

    _free = "wt_state_free"
    _what = "state"

    def __init__(self, handle: int = 0):
        if not handle:
            h = C.c_int64()
            _lib.call("wt_state_new", C.byref(h))
            handle = h.value
        super().__init__(handle)

    @classmethod
    def of(cls, items, metadata: dict[str, str] | None = None) -> State:
        """A state of (name, Tensor) pairs and metadata."""
        s = cls()
        for name, t in items:
            if not isinstance(name, str):
                raise ValueError(f"invalid tensor name {name!r}")
            if not isinstance(t, Tensor):
                raise TypeError(f"{name} is a {type(t).__name__}, not a webtensor Tensor")
            _lib.call("wt_state_put", s._h, name.encode(), t._live())
        for k, v in (metadata or {}).items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"metadata must map str to str, got {k!r}: {v!r}")
            _lib.call("wt_state_set_metadata", s._h, k.encode(), v.encode())
        return s

    def items(self) -> OrderedDict[str, Tensor]:
        """The entries, in order, as new Tensors."""
        n = C.c_int32()
        _lib.call("wt_state_count", self._h, C.byref(n))
        out: OrderedDict[str, Tensor] = OrderedDict()
        for i in range(n.value):
            h = C.c_int64()
            _lib.call("wt_state_get", self._h, i, C.byref(h))
            out[_lib.read_string("wt_state_name", self._h, i)] = Tensor._wrap(h.value)
        return out

    def metadata(self) -> dict[str, str]:
        n = C.c_int32()
        _lib.call("wt_state_metadata_count", self._h, C.byref(n))
        return {_lib.read_string("wt_state_metadata_key", self._h, i): _lib.read_string("wt_state_metadata_value",
                                                                                         self._h, i)
                for i in range(n.value)}



def settings(values: dict[str, Any]) -> tuple[Any, int, list]:
    """Keyword settings (an optimiser's, a schedule's) as a wt_attr array:
    bools, numbers, and lists of floats (betas) or ints (milestones). Returns
    the array, its length and what it points into (keep it until the call)."""
    keep: list = []
    arr = []
    for name, v in values.items():
        if isinstance(v, bool):
            kind = "bool"
        elif isinstance(v, (list, tuple)):
            kind = "ints" if all(isinstance(x, int) and not isinstance(x, bool) for x in v) else "floats"
        elif isinstance(v, (int, float)):
            kind = "float"
        else:
            raise TypeError(f"setting {name}: {type(v).__name__} is not a number, a bool or a list")
        arr.append(_attr(name, kind, v, keep))
    return (_lib.Attr * max(len(arr), 1))(*arr), len(arr), keep
