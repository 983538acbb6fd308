"""Ops by name and WebAssembly plugins: `wt.call` runs any registry op,
`wt.load_plugin` loads a plugin module (see plugins-wasm/ABI.md) whose ops
then run like built-in ones, on every device, with autograd."""

from __future__ import annotations

import functools
import json
import os

from . import _lib
from ._tensor import Tensor, run_op

_specs: dict[str, dict] = {}


def _spec(op: str) -> dict:
    if op not in _specs:
        from . import manifest

        _specs.clear()
        _specs.update({o["name"]: o for o in manifest()["ops"]})
    try:
        return _specs[op]
    except KeyError:
        raise ValueError(f"no op {op!r} in the registry (load its plugin first?)") from None


def call(op: str, *inputs, **attrs) -> Tensor | list[Tensor]:
    """Run the registry op `op` on `inputs` with keyword attributes; one
    output comes back as a Tensor, several as a list.

        y = wt.call("softmax", x, axis=0)
    """
    kinds = {a["name"]: a["kind"] for a in _spec(op).get("attrs", [])}
    unknown = sorted(set(attrs) - set(kinds))
    if unknown:
        raise TypeError(f"{op}: unknown attribute(s) {unknown}; it takes {sorted(kinds)}")
    outs = run_op(op, inputs, [(n, kinds[n], v) for n, v in attrs.items()])
    return outs[0] if len(outs) == 1 else outs


class Plugin:
    """A loaded plugin: `plugin.ops` lists its op names and each op is an
    attribute, `plugin.soft_clip(x, limit=2.0)`."""

    def __init__(self, name: str):
        self.name = name
        self.ops: list[str] = json.loads(_lib.read_string("wt_plugin_ops", name.encode()))

    def __getattr__(self, short: str):
        full = f"{self.name}.{short}"
        if full not in self.ops:
            raise AttributeError(f"plugin {self.name} has no op {short!r} (it has {self.ops})")
        return functools.partial(call, full)

    def __repr__(self) -> str:
        return f"Plugin({self.name!r}, ops={self.ops})"


def load_plugin(path: str | os.PathLike) -> Plugin:
    """Load a WebAssembly plugin from a .wasm file and register its ops."""
    name = _lib.read_string("wt_plugin_load", os.fsencode(path))
    _specs.clear()
    return Plugin(name)
