"""wt.compile: capture a function's ops into a graph (the C ABI's
wt_trace_begin / wt_trace_end, core/ir in Go) and replay it.

The first call with a given input signature (shapes, dtypes, devices) runs
the function eagerly while the library records its ops; the graph is then
simplified (constants folded, common subexpressions merged, dead ops
dropped) and, on a device that can, elementwise chains are fused into single
kernels. Later calls with the same signature replay the graph without
running Python. Control flow is taken as it went on the first call, as
torch.jit.trace does: a function whose ops depend on the values (not just
the shapes) of its inputs must not be compiled. Tensors the function uses
that are not arguments (weights) are captured as they are: pass anything
that changes between calls as an argument.
"""

from __future__ import annotations

import ctypes as C
import functools
from collections.abc import Callable
from typing import Any

from . import _lib
from ._tensor import Tensor


class Graph:
    """A captured graph; `str(graph)` prints it, one op per line."""

    def __init__(self, handle: int, structure):
        self._h, self._structure = handle, structure

    def run(self, *inputs: Tensor):
        hs = _lib.i64_array(t._live() for t in inputs)
        cap = 8
        while True:
            outs = (C.c_int64 * cap)()
            n = C.c_int32(0)
            st = _lib.lib.wt_graph_run(self._h, hs, len(inputs), outs, cap, C.byref(n))
            if st == _lib.ERR_BUFFER_TOO_SMALL and n.value > cap:
                cap = n.value
                continue
            _lib.check(st)
            return _unflatten(self._structure, [Tensor._wrap(outs[i]) for i in range(n.value)])

    def __str__(self) -> str:
        return _lib.read_string("wt_graph_text", self._h)

    def __del__(self):
        h, self._h = getattr(self, "_h", 0), 0
        if h and _lib is not None:
            try:
                _lib.lib.wt_graph_free(h)
            except Exception:  # the interpreter is shutting down
                pass


def _flatten(out) -> tuple[list[Tensor], Any]:
    """Tensors of a result (a tensor, or a tuple/list of them) and its shape."""
    if isinstance(out, Tensor):
        return [out], None
    if isinstance(out, (tuple, list)) and all(isinstance(t, Tensor) for t in out):
        return list(out), (type(out), len(out))
    raise TypeError(f"compile: the function must return a Tensor or a tuple/list of Tensors, got {type(out).__name__}")


def _unflatten(structure, tensors: list[Tensor]):
    if structure is None:
        return tensors[0]
    kind, _ = structure
    return kind(tensors)


def _signature(args) -> tuple:
    return tuple((tuple(a.shape), a.dtype.name, str(a.device)) for a in args)


def trace(fn: Callable, *example_inputs: Tensor) -> tuple[Graph, Any]:
    """Run fn(*example_inputs) once, recording its ops; returns (graph, fn's eager result)."""
    for i, a in enumerate(example_inputs):
        if not isinstance(a, Tensor):
            raise TypeError(f"compile: argument {i} is a {type(a).__name__}; compiled functions take Tensors only")
    hs = _lib.i64_array(a._live() for a in example_inputs)
    _lib.call("wt_trace_begin", hs, len(example_inputs))
    try:
        out = fn(*example_inputs)
        tensors, structure = _flatten(out)
    except BaseException:
        _lib.lib.wt_trace_abort()
        raise
    g = C.c_int64(0)
    _lib.call("wt_trace_end", _lib.i64_array(t._live() for t in tensors), len(tensors), C.byref(g))
    return Graph(g.value, structure), out


def compile(fn: Callable) -> Callable:  # noqa: A001 (the name users know from torch.compile)
    """Return fn compiled: one graph per input signature, captured on its first call."""
    graphs: dict[tuple, Graph] = {}

    @functools.wraps(fn)
    def compiled(*args: Tensor):
        key = _signature(args) if all(isinstance(a, Tensor) for a in args) else None
        if key is not None and key in graphs:
            return graphs[key].run(*args)
        graph, out = trace(fn, *args)
        graphs[key] = graph
        return out

    compiled.graphs = graphs  # type: ignore[attr-defined]
    return compiled
