"""ONNX models: the library's importer (the Go package onnx, through the C
ABI's wt_onnx_*), as a callable.

    import webtensor as wt
    model = wt.onnx.load("model.onnx")           # or the file's bytes
    out = model(input_ids=ids, attention_mask=mask)
    out["last_hidden_state"].numpy()

Every check and every error is the library's (an unsupported operator names
its node); this module only turns keyword arguments into the names and
handles wt_onnx_run takes and zips the outputs with their names.
"""

from __future__ import annotations

import ctypes as C
import json
import os
from typing import Any, NamedTuple

from . import _lib
from ._objects import Handle
from ._tensor import Tensor, tensor


class ValueInfo(NamedTuple):
    """A declared input or output. A dim is an int, a symbolic name (ONNX's
    dim_param) or None (undeclared); shape is None when the rank is not
    declared, dtype "" when the type is not."""

    name: str
    dtype: str
    shape: tuple[int | str | None, ...] | None


def _values(entries: list[dict[str, Any]]) -> tuple[ValueInfo, ...]:
    return tuple(ValueInfo(e["name"], e["dtype"], None if e["shape"] is None else tuple(e["shape"]))
                 for e in entries)


class Model(Handle):
    """An imported ONNX model (a wt_onnx handle), freed by close(), a with
    block or the garbage collector. Tensors it returned stay valid after."""

    _free = "wt_onnx_free"
    _what = "onnx model"

    def __init__(self, handle: int):
        super().__init__(handle)
        info = json.loads(_lib.read_string("wt_onnx_info_json", handle))
        self.inputs = _values(info["inputs"])
        self.outputs = _values(info["outputs"])
        self.opset: int = info["opset"]
        self.device: str = info["device"]

    @property
    def input_names(self) -> list[str]:
        """The inputs a caller supplies (initializers excluded), in order."""
        return [v.name for v in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [v.name for v in self.outputs]

    def __call__(self, *args, **kwargs) -> dict[str, Tensor]:
        """Runs the model: positional arguments are the inputs in order,
        keywords name them (an initializer the graph lists as an input may be
        named too, to override it). Values that are not Tensors (NumPy
        arrays, lists) become tensors first, with wt.tensor's dtype rules.
        Returns the outputs by name, in the model's order."""
        h = self._live()
        if len(args) > len(self.inputs):
            raise TypeError(f"the model takes {len(self.inputs)} inputs ({', '.join(self.input_names)}), "
                            f"got {len(args)} positional")
        named = dict(zip(self.input_names, args, strict=False))  # fewer positional than inputs: the rest by name
        for k, v in kwargs.items():
            if k in named:
                raise TypeError(f"input {k!r} is given both by position and by name")
            named[k] = v
        made = []
        handles = []
        for v in named.values():
            if not isinstance(v, Tensor):
                v = tensor(v)
                made.append(v)
            handles.append(v._live())
        names = (C.c_char_p * max(len(named), 1))(*(n.encode() for n in named))
        cap = max(len(self.outputs), 1)
        outs = (C.c_int64 * cap)()
        n = C.c_int32(0)
        try:
            _lib.call("wt_onnx_run", h, names, _lib.i64_array(handles), len(handles), outs, cap,
                      C.byref(n))
        finally:
            for t in made:
                t.close()
        return {o.name: Tensor._wrap(outs[i]) for i, o in enumerate(self.outputs)}

    def __repr__(self) -> str:
        return f"onnx.Model(inputs={self.input_names}, outputs={self.output_names}, opset={self.opset}, " \
               f"device={self.device!r})"



def load(source: str | os.PathLike | bytes | bytearray | memoryview, device: str | None = None) -> Model:
    """Imports an ONNX model from a file path (external data files are read
    from its folder) or its bytes, with its weights on device (default: the
    default device). A malformed model or an unsupported operator raises
    ValueError naming the node; a missing file, FileNotFoundError."""
    dev = device.encode() if device else None
    h = C.c_int64()
    if isinstance(source, (str, os.PathLike)):
        _lib.call("wt_onnx_load", os.fsencode(source), dev, C.byref(h))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
        _lib.call("wt_onnx_load_bytes", raw, len(raw), dev, C.byref(h))
    else:
        raise TypeError(f"onnx.load takes a path or the model's bytes, got {type(source).__name__}")
    return Model(h.value)
