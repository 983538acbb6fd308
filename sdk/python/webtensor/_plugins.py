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


# Modules loaded by set_tuning_policy, by path: loading one twice is an error.
_policy_modules: dict[str, Plugin] = {}


def default_policy_path() -> str:
    """The kernel-variant tuning policy the package ships
    (plugins-wasm/policies/kernel-variant, built into the wheel)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "policy-kernel-variant.wasm")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} is missing: this package was built without the default tuning policy "
            "(build it with `make plugins` and pass build/plugins/policy-kernel-variant.wasm)"
        )
    return path


def set_tuning_policy(plugin: Plugin | str | os.PathLike | None = "default", policy: str | None = None) -> None:
    """Make the WebGPU tuner ask a tuning policy which kernel variant to try
    for each new workload; the proposal is still timed and kept only when it
    is faster, and `wt.device_tuning()` shows every decision with its reason.

    `plugin` is a loaded Plugin, the path of a policy module, "default" (the
    policy the package ships) or None (time every variant, the default);
    `policy` names one of the module's policies when it has several.

        wt.set_tuning_policy("default")
    """
    if plugin is None:
        _lib.call("wt_tuning_policy_set", None, None)
        return
    if not isinstance(plugin, Plugin):
        path = default_policy_path() if plugin == "default" else os.fspath(plugin)
        path = os.path.abspath(path)
        if path not in _policy_modules:
            _policy_modules[path] = load_plugin(path)
        plugin = _policy_modules[path]
    _lib.call("wt_tuning_policy_set", plugin.name.encode(), policy.encode() if policy else None)


def device_tuning(device: str = "webgpu") -> dict:
    """The kernel-variant decisions of `device`: "op|class" to the variant
    kept, its timings in ns and, when a policy was asked, its proposal and
    reason. {} for a device that tunes nothing (the CPU)."""
    return json.loads(_lib.read_string("wt_device_tuning_json", device.encode()))
