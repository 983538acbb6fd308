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

from . import lr_scheduler as lr_scheduler
from ._optimizers import SGD, Adagrad, Adam, AdamW, RMSprop
from .optimizer import Optimizer
from .optimizer import required as required

__all__ = ["SGD", "Adam", "AdamW", "Adagrad", "Optimizer", "RMSprop", "lr_scheduler"]
