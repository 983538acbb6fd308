"""ONNX models: the library's importer (the Go package onnx, through the C
ABI's wt_call: the onnx.* targets that docs/calls.md lists), as a callable.

    import webtensor as wt
    model = wt.onnx.load("model.onnx")           # or the file's bytes
    out = model(input_ids=ids, attention_mask=mask)
    out["last_hidden_state"].numpy()

ONNX sequences are lists of tensors and an empty optional is None, both
ways: model(parts=[a, b], maybe=None) and out["pieces"] == [t0, t1, ...].

Every check and every error is the library's (an unsupported operator names
its node); this module only turns keyword arguments into the flat tensors
and the layout onnx.run_values takes, and its outputs back.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ._objects import Handle, call
from ._tensor import Tensor, tensor

# A value a model takes or returns: a tensor, a sequence (a list of
# tensors) or an optional (its value, or None when empty).
Value = Tensor | list[Tensor] | None

_SEQUENCE_KINDS = ("sequence", "optional_sequence")


class ValueInfo(NamedTuple):
    """A declared input or output. kind is "tensor", "sequence",
    "optional_tensor", "optional_sequence" or "strings" (ONNX STRING tensors,
    which only Go runs); dtype and shape describe the
    tensors inside. A dim is an int, a symbolic name (ONNX's dim_param) or
    None (undeclared); shape is None when the rank is not declared, dtype ""
    when the type is not."""

    name: str
    dtype: str
    shape: tuple[int | str | None, ...] | None
    kind: str = "tensor"


def _values(entries: list[dict[str, Any]]) -> tuple[ValueInfo, ...]:
    return tuple(ValueInfo(e["name"], e["dtype"], None if e["shape"] is None else tuple(e["shape"]), e["kind"])
                 for e in entries)


class Model(Handle):
    """An imported ONNX model (an onnx handle), freed by close(), a with
    block or the garbage collector. Tensors it returned stay valid after."""

    _kind, _what = "onnx", "onnx model"

    def __init__(self, handle: int):
        super().__init__(handle)
        info = call("onnx.info", handle)
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

    def __call__(self, *args, **kwargs) -> dict[str, Value]:
        """Runs the model: positional arguments are the inputs in order,
        keywords name them (an initializer the graph lists as an input may be
        named too, to override it). A sequence input takes a list or tuple of
        tensors, an optional one None when empty. Values that are not Tensors
        (NumPy arrays, lists) become tensors first, with wt.tensor's dtype
        rules. Returns the outputs by name, in the model's order: a tensor, a
        list of tensors for a sequence, None for an empty optional."""
        h = self._live()
        if len(args) > len(self.inputs):
            raise TypeError(f"the model takes {len(self.inputs)} inputs ({', '.join(self.input_names)}), "
                            f"got {len(args)} positional")
        named = dict(zip(self.input_names, args, strict=False))  # fewer positional than inputs: the rest by name
        for k, v in kwargs.items():
            if k in named:
                raise TypeError(f"input {k!r} is given both by position and by name")
            named[k] = v
        sequences = {v.name for v in self.inputs if v.kind in _SEQUENCE_KINDS}
        made: list[Tensor] = []
        flat: list[int] = []

        def index(v) -> int:
            if not isinstance(v, Tensor):
                v = tensor(v)
                made.append(v)
            flat.append(v._live())
            return len(flat) - 1

        layout: dict[str, Any] = {}
        try:
            for name, v in named.items():
                if v is None:
                    layout[name] = None
                elif name in sequences and isinstance(v, (list, tuple)):
                    layout[name] = [index(t) for t in v]
                else:
                    layout[name] = index(v)
            out = call("onnx.run_values", h, tensors=flat, layout=layout)
        finally:
            for t in made:
                t.close()
        tensors = [Tensor._wrap(t) for t in out["tensors"]]
        return {name: _unflatten(v, tensors) for name, v in out["layout"].items()}

    def __repr__(self) -> str:
        return f"onnx.Model(inputs={self.input_names}, outputs={self.output_names}, opset={self.opset}, " \
               f"device={self.device!r})"


def _unflatten(layout, tensors: list[Tensor]) -> Value:
    """An output's value from its layout: an index, a list of them or None."""
    if layout is None:
        return None
    if isinstance(layout, list):
        return [tensors[i] for i in layout]
    return tensors[layout]


def load(source: str | os.PathLike | bytes | bytearray | memoryview, device: str | None = None) -> Model:
    """Imports an ONNX model from a file path (external data files are read
    from its folder) or its bytes, with its weights on device (default: the
    default device). A malformed model or an unsupported operator raises
    ValueError naming the node; a missing file, FileNotFoundError."""
    if isinstance(source, (str, os.PathLike)):
        return Model(call("onnx.load", path=os.fsdecode(source), device=device))
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Model(call("onnx.load", data=bytes(source), device=device))
    raise TypeError(f"onnx.load takes a path or the model's bytes, got {type(source).__name__}")
