"""The lifetime of a library object behind a handle (a tokenizer, a model, a
pipeline): freed by close(), a with block or the garbage collector, with the
library's free function. Shared by wt.multimodal, wt.diffuse, wt.onnx,
state dicts and native datasets. Also call(), the library's methods by name
(wt_call, docs/calls.md), which wt.multimodal, wt.diffuse, wt.onnx and
wt.auto are written in."""

from __future__ import annotations

import ctypes as C
import json
import math
from typing import Any

from . import _lib
from ._tensor import Tensor, tensor


def _json_value(v: Any) -> Any:
    """v as JSON holds it: JSON has no NaN or infinity, so those go as the
    strings the library reads; a NumPy scalar (an index from argmax) as the
    Python number it holds."""
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if type(v).__module__ == "numpy" and getattr(v, "shape", None) == ():
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


_encode = json.JSONEncoder(allow_nan=False).encode  # json.dumps builds an encoder a call when given allow_nan


def call(target: str, obj: int = 0, /, data: bytes | None = None, **args: Any) -> Any:
    """Runs the library's method target ("kind.method", docs/calls.md) on the
    object handle obj (0 for a load or a plain function) with args by name
    (None: the library's default) and data, the bytes a loader reads; returns
    the result's JSON decoded (tensors and objects as handles the caller owns).
    No args, no JSON written for the library to parse (loader.next's batches)."""
    doc = None
    if args:
        doc = _encode({k: _json_value(v) for k, v in args.items() if v is not None}).encode()
    out = C.c_int64()
    _lib.check(_lib.lib.wt_call(target.encode(), obj, doc, data, len(data) if data is not None else 0, C.byref(out)))
    try:
        return json.loads(_lib.read_string("wt_call_result_json", out.value))
    finally:
        _lib.lib.wt_call_result_free(out.value)


class Handle:
    """A handle the library made; subclasses name its kind for call() (its
    free is "kind.free") or, for state dicts (wt_call has no targets of
    theirs), their wt_*_free function."""

    _kind = ""  # the kind's name in call()'s targets
    _free = ""  # the wt_*_free function, for a class without a _kind
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
            self._release(h)

    def _release(self, h: int) -> None:
        if self._kind:
            call(f"{self._kind}.free", h)
        else:
            _lib.call(self._free, h)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        h = getattr(self, "_h", 0)
        if h and _lib.lib is not None:
            try:
                self._release(h)
            except Exception:  # interpreter shutdown: the library (or json) may be gone
                pass


def text_list(texts: str | list[str] | tuple[str, ...]) -> list[str]:
    """texts (one str or an iterable of them) as a list; an item that is not
    a str is a TypeError here, as Python's own string functions raise."""
    items = [texts] if isinstance(texts, str) else list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is a {type(t).__name__}, not a str")
    return items


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

    def optional(self, v: Any, dtype=None) -> int | None:
        """handle(v), or None (for call(): the library's default) for None."""
        return None if v is None else self.handle(v, dtype)

    def __enter__(self) -> Inputs:
        return self

    def __exit__(self, *exc) -> None:
        for t in self._made:
            t.close()
