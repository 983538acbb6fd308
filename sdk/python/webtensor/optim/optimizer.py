"""The base of the optimizers (_optimizers.py, generated from internal/gen's
table, writes the five over it): parameter groups as torch's, each one
library optimiser whose settings are pushed whenever the group's dict
changes, and the state and state_dict in torch's layout."""

from __future__ import annotations

import ctypes as C
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from .. import _lib
from .._state import State, settings
from .._tensor import Tensor, tensor

__all__ = ["Optimizer", "required"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _Required()


class _Group:
    """The library optimiser of one parameter group: its handle, the
    parameter handles it was made over and the settings last pushed."""

    def __init__(self, kind: str, params: list[Tensor], values: dict[str, Any]):
        self.handles = [p._live() for p in params]
        arr, n, _keep = settings(values)
        ins = _lib.i64_array(self.handles)
        h = C.c_int64()
        _lib.call("wt_optimizer_new", kind.encode(), ins, len(self.handles), arr, n, C.byref(h))
        self.h, self.pushed = h.value, dict(values)
        self._free = weakref.finalize(self, _lib.lib.wt_optimizer_free, h.value)

    def push(self, values: dict[str, Any]) -> None:
        if values != self.pushed:
            arr, n, _keep = settings(values)
            _lib.call("wt_optimizer_set", self.h, arr, n)
            self.pushed = dict(values)

    def state(self) -> dict[int, dict[str, Any]]:
        """{local index: {"step": int, name: Tensor}}."""
        h = C.c_int64()
        _lib.call("wt_optimizer_state", self.h, C.byref(h))
        out: dict[int, dict[str, Any]] = {}
        with State(h.value) as s:
            for name, t in s.items().items():
                i, key = name.split(".", 1)
                out.setdefault(int(i), {})[key] = int(t.item()) if key == "step" else t
        return out

    def load(self, state: dict[int, dict[str, Any]]) -> None:
        items = []
        temps = []
        for i, entries in state.items():
            for key, v in entries.items():
                if not isinstance(v, Tensor):
                    v = tensor(int(v) if key == "step" else v, dtype="i64" if key == "step" else None)
                    temps.append(v)
                items.append((f"{i}.{key}", v))
        try:
            with State.of(items) as s:
                _lib.call("wt_optimizer_load_state", self.h, s._h)
        finally:
            for t in temps:
                t.close()


class Optimizer:
    """Base class: param_groups (dicts with "params" and the settings), per-parameter
    state, zero_grad(), step() and a state_dict in torch's layout."""

    _kind = ""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self._groups: list[_Group] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict[str, Any]) -> None:
        group = dict(group)
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but parameter {i} is {type(p).__name__}")
            if id(p) in seen:
                raise ValueError(f"parameter {i} appears twice (some parameters appear in more than one group)")
            seen.add(id(p))
        group["params"] = params
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            group.setdefault(k, v)
        self._groups.append(_Group(self._kind, params, self._settings(group)))
        self.param_groups.append(group)

    def _settings(self, group: dict[str, Any]) -> dict[str, Any]:
        """What the library takes of a group: the optimiser's settings, not the
        keys others add (a scheduler's initial_lr)."""
        return {k: group[k] for k in self.defaults}

    def _synced(self, i: int) -> _Group:
        """Group i's library optimiser, made afresh over the parameters' current
        handles (keeping its state) if one was replaced since (Module.to)."""
        g, params = self._groups[i], self.param_groups[i]["params"]
        if [p._live() for p in params] != g.handles:
            state = g.state()
            g = self._groups[i] = _Group(self._kind, params, self._settings(self.param_groups[i]))
            g.load(state)
        g.push(self._settings(self.param_groups[i]))
        return g

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (webtensor has no zero-filled gradients: set_to_none is always true)."""
        for i in range(len(self._groups)):
            _lib.call("wt_optimizer_zero_grad", self._synced(i).h)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient (the others are left alone)."""
        loss = None
        if closure is not None:
            loss = closure()
        for i in range(len(self._groups)):
            _lib.call("wt_optimizer_step", self._synced(i).h)
        return loss

    @property
    def state(self) -> dict[Tensor, dict[str, Any]]:
        """Each updated parameter's state under torch's names ("step", "exp_avg", ...)."""
        out: dict[Tensor, dict[str, Any]] = {}
        for i, group in enumerate(self.param_groups):
            for j, s in self._synced(i).state().items():
                out[group["params"][j]] = s
        return out

    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}, as torch's."""
        groups, state, base = [], {}, 0
        for i, g in enumerate(self.param_groups):
            groups.append({**{k: v for k, v in g.items() if k != "params"},
                           "params": list(range(base, base + len(g["params"])))})
            for j, s in self._synced(i).state().items():
                state[base + j] = s
            base += len(g["params"])
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
            len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups, strict=True)
        ):
            raise ValueError("loaded state dict has a different number of parameter groups or parameters")
        for i, (saved, group) in enumerate(zip(groups, self.param_groups, strict=True)):
            local = {int(j): k for k, j in enumerate(saved["params"])}
            state = {local[int(j)]: s for j, s in state_dict["state"].items() if int(j) in local}
            group.update({k: v for k, v in saved.items() if k != "params"})
            self._synced(i).load(state)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"
