"""Optimizers, as torch.optim's: SGD, Adam and AdamW with torch's update
formulas and defaults, numerically the same as the Go nn package's.

    opt = wt.optim.AdamW(model.parameters(), lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()

A step computes every new value under no_grad first and only then installs
them (in place: the Parameter objects keep their identity, requires_grad and
gradient), so a failing op leaves every parameter as it was. Scalars are made
in each parameter's dtype and on its device, so it works on any device.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from . import _ops
from ._tensor import Tensor, no_grad, scope
from .nn.module import _adopt, _replace

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _Required()


class Optimizer:
    """Base class: param_groups (dicts with "params" and the settings), per-parameter
    state, zero_grad(), step() and a state_dict in torch's layout."""

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
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
            if not p.requires_grad:
                raise ValueError(f"parameter {i} does not require a gradient (set requires_grad first)")
            if id(p) in seen:
                raise ValueError(f"parameter {i} appears twice (some parameters appear in more than one group)")
            seen.add(id(p))
        group["params"] = params
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            group.setdefault(k, v)
        self._check(group)
        self.param_groups.append(group)

    def _check(self, group: dict[str, Any]) -> None:
        pass

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (webtensor has no zero-filled gradients: set_to_none is always true)."""
        for g in self.param_groups:
            for p in g["params"]:
                p.zero_grad()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient (the others are left alone)."""
        loss = None
        if closure is not None:
            loss = closure()
        updates: list[tuple[Tensor, Tensor, dict[str, Any]]] = []
        with no_grad(), scope():
            for group in self.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    value, new_state = self._update(p, g, group, self.state.get(p, {}))
                    if tuple(value.shape) != tuple(p.shape) or value.dtype.name != p.dtype.name:
                        raise RuntimeError(f"{type(self).__name__} step: the gradient of a parameter of shape "
                                           f"{list(p.shape)} has shape {list(g.shape)}")
                    updates.append((p, _adopt(value), {k: _adopt(v) if isinstance(v, Tensor) else v
                                                       for k, v in new_state.items()}))
        for p, value, new_state in updates:  # commit: nothing can fail past here
            old = self.state.get(p, {})
            _replace(p, value)
            self.state[p] = new_state
            for v in old.values():
                if isinstance(v, Tensor):
                    v.close()
        return loss

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]):
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}, as torch's."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if p in self.state:
                    state[index[id(p)]] = {k: v.detach() if isinstance(v, Tensor) else v
                                           for k, v in self.state[p].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
            len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups, strict=True)
        ):
            raise ValueError("loaded state dict has a different number of parameter groups or parameters")
        by_index: dict[int, Tensor] = {}
        for saved, group in zip(groups, self.param_groups, strict=True):
            for i, p in zip(saved["params"], group["params"], strict=True):
                by_index[i] = p
            group.update({k: v for k, v in saved.items() if k != "params"})
        new_state: dict[Tensor, dict[str, Any]] = {}
        for i, s in state_dict["state"].items():
            p = by_index[int(i)]
            new_state[p] = {k: (v.to(p.device) if v.device != p.device else v.detach()) if isinstance(v, Tensor)
                            else v for k, v in s.items()}
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines) + "\n)"


def _grad(p: Tensor, grad: Tensor, maximize: bool, weight_decay: float) -> Tensor:
    """The gradient an update uses: negated when maximising, plus wd·p (L2) when wd != 0."""
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + _mul(p, weight_decay)
    return g


def _mul(t: Tensor, v: float) -> Tensor:
    return t if v == 1 else t * v


class SGD(Optimizer):
    """torch.optim.SGD:

        g = grad + wd·p
        buf = g (first step) or momentum·buf + (1-dampening)·g
        g = g + momentum·buf (nesterov) or buf
        p = p - lr·g
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize})

    def _check(self, g):
        if g["lr"] < 0:
            raise ValueError(f"Invalid learning rate: {g['lr']}")
        if g["momentum"] < 0:
            raise ValueError(f"Invalid momentum value: {g['momentum']}")
        if g["weight_decay"] < 0:
            raise ValueError(f"Invalid weight_decay value: {g['weight_decay']}")
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _update(self, p, grad, group, state):
        g = _grad(p, grad, group["maximize"], group["weight_decay"])
        momentum = group["momentum"]
        new_state: dict[str, Any] = {}
        if momentum != 0:
            prev = state.get("momentum_buffer")
            buf = g if prev is None else _mul(prev, momentum) + _mul(g, 1 - group["dampening"])
            new_state["momentum_buffer"] = buf
            g = g + _mul(buf, momentum) if group["nesterov"] else buf
        return p - _mul(g, group["lr"]), new_state


class Adam(Optimizer):
    """torch.optim.Adam (AdamW: decoupled weight decay), torch's single-tensor equations:

        g = grad (+ wd·p for Adam) ; p = p·(1 - lr·wd) for AdamW
        m = lerp(m, g, 1-β1) ; v = β2·v + (1-β2)·g²
        v̂ = max(v̂, v) with amsgrad, else v
        p = p - lr/(1-β1ᵗ) · m / (√v̂/√(1-β2ᵗ) + eps)
    """

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize})

    def _check(self, g):
        b1, b2 = g["betas"]
        if g["lr"] < 0:
            raise ValueError(f"Invalid learning rate: {g['lr']}")
        if g["eps"] < 0:
            raise ValueError(f"Invalid epsilon value: {g['eps']}")
        if not 0 <= b1 < 1:
            raise ValueError(f"Invalid beta parameter at index 0: {b1}")
        if not 0 <= b2 < 1:
            raise ValueError(f"Invalid beta parameter at index 1: {b2}")
        if g["weight_decay"] < 0:
            raise ValueError(f"Invalid weight_decay value: {g['weight_decay']}")

    def _update(self, p, grad, group, state):
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        x: Tensor = p
        if self._decoupled:
            x = _mul(x, 1 - lr * wd)
            wd = 0.0
        g = _grad(p, grad, group["maximize"], wd)
        m, v, vmax = state.get("exp_avg"), state.get("exp_avg_sq"), state.get("max_exp_avg_sq")
        if m is None:
            m, v = _ops.zeros_like(x), _ops.zeros_like(x)
            if group["amsgrad"]:
                vmax = _ops.zeros_like(x)
        m = _lerp(m, g, 1 - b1)
        v = _mul(v, b2) + _mul(g * g, 1 - b2)
        step = state.get("step", 0) + 1
        step_size = lr / (1 - b1**step)
        bc2_sqrt = math.sqrt(1 - b2**step)
        new_state: dict[str, Any] = {"step": step, "exp_avg": m, "exp_avg_sq": v}
        second = v
        if group["amsgrad"]:
            vmax = _ops.maximum(vmax, v)
            second = new_state["max_exp_avg_sq"] = vmax
        denom = _ops.sqrt(second) / bc2_sqrt
        if eps != 0:
            denom = denom + eps
        return x - _mul(m / denom, step_size), new_state


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (default 1e-2)."""

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


def _lerp(start: Tensor, end: Tensor, w: float) -> Tensor:
    """torch's lerp, computed from the nearer end as its kernel does."""
    if w < 0.5:
        return start + _mul(end - start, w)
    return end - _mul(end - start, 1 - w)
