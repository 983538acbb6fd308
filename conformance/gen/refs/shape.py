"""References for views, joins, splits, slices and other shape copies
(core/ops_shape*.go), computed with PyTorch.

Attributes arrive only when a sample sets them, so every function applies the
OpDef's defaults itself.
"""

import torch
import torch.nn.functional as F

from ._util import _fresh_all, _get


def _slice_index(x_dim, a):
    idx = [slice(None)] * x_dim
    idx[_get(a, "axis", 0)] = slice(_get(a, "start", 0), a.get("stop"), _get(a, "step", 1))
    return tuple(idx)


def _squeeze(ins, a):
    axes = a.get("axes")
    return ins[0].squeeze() if axes is None else ins[0].squeeze(tuple(axes))


def _split(ins, a):
    x, axis = ins[0], _get(a, "axis", 0)
    if a.get("sizes") is not None:
        return torch.split(x, a["sizes"], dim=axis)
    return torch.tensor_split(x, a["sections"], dim=axis)


def _slice_grad(ins, a):
    g = ins[0]
    out = torch.zeros(a["shape"], dtype=g.dtype)
    return out.slice_scatter(
        g, dim=_get(a, "axis", 0), start=_get(a, "start", 0), end=a.get("stop"), step=_get(a, "step", 1)
    )


def _pad(ins, a):
    x, pads, mode = ins[0], a["pads"], _get(a, "mode", "constant")
    if mode == "constant":
        return F.pad(x, pads, value=_get(a, "value", 0.0))
    # torch pads the trailing len(pads)/2 dims of a (batch, channel, *dims)
    # tensor in these modes: fold every other dim into the batch.
    k = len(pads) // 2
    if k == 0:
        return x.clone()
    lead, tail = x.shape[: x.dim() - k], x.shape[x.dim() - k:]
    y = F.pad(x.reshape(-1, 1, *tail), pads, mode=mode)
    return y.reshape(*lead, *y.shape[2:])


def _pad_grad(ins, a):
    g = ins[0]
    x = torch.zeros(a["shape"], dtype=g.dtype, requires_grad=True)
    y = _pad([x], {"pads": a["pads"], "mode": a.get("mode")})
    (gx,) = torch.autograd.grad(y, x, g, create_graph=True)
    return gx


def _flip(ins, a):
    axes = a.get("axes")
    return torch.flip(ins[0], list(range(ins[0].dim())) if axes is None else axes)


def _roll(ins, a):
    if a.get("axes") is None:
        return torch.roll(ins[0], a["shifts"][0])
    return torch.roll(ins[0], a["shifts"], a["axes"])


REFS = _fresh_all({
    "reshape": lambda ins, a: ins[0].reshape(a["shape"]),
    "flatten": lambda ins, a: torch.flatten(ins[0], _get(a, "start_dim", 0), _get(a, "end_dim", -1)),
    "expand": lambda ins, a: ins[0].expand(*a["shape"]),
    "permute": lambda ins, a: ins[0].permute(*a["dims"]),
    "transpose": lambda ins, a: ins[0].transpose(_get(a, "dim0", -2), _get(a, "dim1", -1)),
    "squeeze": _squeeze,
    "unsqueeze": lambda ins, a: ins[0].unsqueeze(a["axis"]),
    "concat": lambda ins, a: torch.cat(ins, dim=_get(a, "axis", 0)),
    "stack": lambda ins, a: torch.stack(ins, dim=_get(a, "axis", 0)),
    "split": _split,
    "chunk": lambda ins, a: torch.chunk(ins[0], a["chunks"], dim=_get(a, "axis", 0)),
    "slice": lambda ins, a: ins[0][_slice_index(ins[0].dim(), a)],
    "_slice_grad": _slice_grad,
    "pad": _pad,
    "_pad_grad": _pad_grad,
    "flip": _flip,
    "roll": _roll,
    "tile": lambda ins, a: torch.tile(ins[0], tuple(a["reps"])),
    "repeat_interleave": lambda ins, a: torch.repeat_interleave(ins[0], a["repeats"], dim=a.get("axis")),
})
