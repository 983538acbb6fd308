"""Optimizers, as torch.optim's: SGD, Adam, AdamW, RMSprop and Adagrad, with
torch's defaults and update formulas; the library runs them (Go's nn
optimisers through wt_optimizer_*), so every SDK computes the same bits.

    opt = wt.optim.AdamW(model.parameters(), lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()

Each parameter group is one library optimiser; its settings are the group's
dict, pushed to the library when they change (so `group["lr"] = 0.01`, as
schedulers do, works). A step updates every parameter in place - the
Parameter objects keep their identity, requires_grad and gradient - in one
fused kernel per parameter where the device fuses, and a failed step
changes nothing. lr_scheduler holds the learning-rate schedules.
"""

from __future__ import annotations

import ctypes as C
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from .. import _lib
from .._state import State, settings
from .._tensor import Tensor, tensor
from . import lr_scheduler as lr_scheduler

__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "Optimizer", "RMSprop", "lr_scheduler"]


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


class SGD(Optimizer):
    """torch.optim.SGD: buf = momentum·buf + (1-dampening)·g; p -= lr·(g + momentum·buf if nesterov else buf)."""

    _kind = "sgd"

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize})


class Adam(Optimizer):
    """torch.optim.Adam: m = lerp(m, g, 1-β1); v = β2·v + (1-β2)·g²; p -= lr/(1-β1ᵗ)·m/(√v̂/√(1-β2ᵗ) + eps)."""

    _kind = "adam"

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize})


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (default 1e-2)."""

    _kind = "adamw"

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class RMSprop(Optimizer):
    """torch.optim.RMSprop: v = α·v + (1-α)·g²; p -= lr·g/(√v + eps), centered and with momentum as torch's."""

    _kind = "rmsprop"

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0.0,
                 momentum: float = 0.0, centered: bool = False, *, maximize: bool = False):
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                                  "momentum": momentum, "centered": centered, "maximize": maximize})


class Adagrad(Optimizer):
    """torch.optim.Adagrad: sum += g²; p -= lr/(1 + (t-1)·lr_decay)·g/(√sum + eps)."""

    _kind = "adagrad"

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False):
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value, "eps": eps,
                                  "maximize": maximize})
