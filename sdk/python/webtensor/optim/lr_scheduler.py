"""Learning-rate schedules, as torch.optim.lr_scheduler's: StepLR,
MultiStepLR, ExponentialLR, CosineAnnealingLR and LinearLR, with torch's
closed forms. The library computes each rate (wt_lr_schedule, a pure
function of the base rate and the step); a scheduler here keeps the step
count and writes the rate into its optimizer's param groups, as torch's do.

    sched = wt.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...); opt.step(); sched.step()
"""

from __future__ import annotations

import ctypes as C
from typing import Any

from .. import _lib
from .._state import settings

__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LinearLR", "MultiStepLR", "StepLR"]


class LRScheduler:
    """Base class: last_epoch (steps taken), base_lrs, step(), get_last_lr()."""

    _kind = ""

    def __init__(self, optimizer: Any, settings: dict[str, Any], last_epoch: int = -1):
        self.optimizer = optimizer
        self._settings = settings
        for g in optimizer.param_groups:
            if last_epoch == -1:
                g.setdefault("initial_lr", g["lr"])
            elif "initial_lr" not in g:
                raise KeyError("param 'initial_lr' is not specified in param_groups when resuming an optimizer")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _rate(self, base: float, step: int) -> float:
        arr, n, _keep = settings(self._settings)
        lr = C.c_double()
        _lib.call("wt_lr_schedule", self._kind.encode(), arr, n, float(base), step, C.byref(lr))
        return lr.value

    def step(self) -> None:
        """Advance one step (after the optimizer's) and set every group's rate."""
        self.last_epoch += 1
        self._last_lr = [self._rate(b, self.last_epoch) for b in self.base_lrs]
        for g, lr in zip(self.optimizer.param_groups, self._last_lr, strict=True):
            g["lr"] = lr

    def get_last_lr(self) -> list[float]:
        return list(self._last_lr)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """lr = base·gamma^⌊epoch/step_size⌋."""

    _kind = "step"

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        super().__init__(optimizer, {"step_size": int(step_size), "gamma": gamma}, last_epoch)


class MultiStepLR(LRScheduler):
    """lr = base·gamma^(milestones passed)."""

    _kind = "multistep"

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        super().__init__(optimizer, {"milestones": [int(m) for m in sorted(milestones)], "gamma": gamma}, last_epoch)


class ExponentialLR(LRScheduler):
    """lr = base·gamma^epoch."""

    _kind = "exponential"

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        super().__init__(optimizer, {"gamma": gamma}, last_epoch)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base - eta_min)·(1 + cos(π·epoch/T_max))/2."""

    _kind = "cosine"

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803 (torch's name)
        super().__init__(optimizer, {"t_max": int(T_max), "eta_min": eta_min}, last_epoch)


class LinearLR(LRScheduler):
    """lr = base·(start_factor + (end_factor - start_factor)·min(epoch, total_iters)/total_iters)."""

    _kind = "linear"

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0, total_iters: int = 5,
                 last_epoch: int = -1):
        super().__init__(optimizer, {"start_factor": start_factor, "end_factor": end_factor,
                                     "total_iters": int(total_iters)}, last_epoch)
