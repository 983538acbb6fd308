"""The lifetime of a library object behind a handle (a tokenizer, a model, a
pipeline): freed by close(), a with block or the garbage collector, with the
library's free function. Shared by wt.multimodal, wt.diffuse, wt.onnx,
state dicts and native datasets."""

from __future__ import annotations

import ctypes as C
import os
from typing import Any

from . import _lib
from ._tensor import Tensor, tensor


class Handle:
    """A handle the library made; subclasses name its free function and kind."""

    _free = ""  # the wt_*_free function
    _what = "object"  # names the kind in "used after close()"

    def __init__(self, handle: int):
        self._h = handle

    def _live(self) -> int:
        if not self._h:
            raise ValueError(f"{self._what} used after close()")
        return self._h

    def close(self) -> None:
        """Frees the object; tensors it returned stay valid. Closing twice is harmless."""
        h, self._h = self._h, 0
        if h:
            _lib.call(self._free, h)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        h = getattr(self, "_h", 0)
        if h and _lib.lib is not None:
            try:
                getattr(_lib.lib, self._free)(h)
            except Exception:  # interpreter shutdown: the library may be gone
                pass


def load(fn: str, path: str | os.PathLike, *args: Any) -> int:
    """Calls a wt_*_load taking a path (then args), returning the handle."""
    h = C.c_int64()
    _lib.call(fn, os.fsencode(path), *args, C.byref(h))
    return h.value


def device_arg(device: str | None) -> bytes | None:
    return device.encode() if device else None


def texts_arg(texts: str | list[str] | tuple[str, ...]) -> tuple[C.Array, int]:
    """texts as the C array of UTF-8 strings the library takes, and its length."""
    if isinstance(texts, str):
        texts = [texts]
    items = list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is a {type(t).__name__}, not a str")
    arr = (C.c_char_p * max(len(items), 1))(*(t.encode() for t in items))
    return arr, len(items)


def new_tensor(fn: str, *args: Any) -> Tensor:
    """Calls fn with args and an out handle; wraps the tensor it made."""
    out = C.c_int64()
    _lib.call(fn, *args, C.byref(out))
    return Tensor._wrap(out.value)


class Inputs:
    """Tensors for values given as Tensors or as anything wt.tensor takes
    (NumPy arrays, lists); the ones made here are freed on exit."""

    def __init__(self) -> None:
        self._made: list[Tensor] = []

    def handle(self, v: Any, dtype=None) -> int:
        if not isinstance(v, Tensor):
            v = tensor(v, dtype)
            self._made.append(v)
        return v._live()

    def __enter__(self) -> Inputs:
        return self

    def __exit__(self, *exc) -> None:
        for t in self._made:
            t.close()
