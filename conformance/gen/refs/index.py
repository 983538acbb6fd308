"""References for gathers, scatters, index_select and masked ops
(core/ops_index*.go), computed with PyTorch. Index tensors are passed to
torch as int64.
"""

import torch
import torch.nn.functional as F

from ._util import _fresh_all, _get


def _index_region(src, idx):
    # torch ignores src beyond index's shape, but its backward cannot handle
    # such a src: pass only the part that is read.
    return src[tuple(slice(0, n) for n in idx.shape)]


def _scatter_like(fn):
    def ref(ins, a):
        x, idx, src = ins
        return fn(x, _get(a, "axis", 0), idx.long(), _index_region(src, idx))
    return ref


def _scatter_reduce(ins, a):
    x, idx, src = ins
    return torch.scatter_reduce(x, _get(a, "axis", 0), idx.long(), _index_region(src, idx), a["reduce"],
                                include_self=_get(a, "include_self", True))


def _scatter_extremum_grad(ins, a):
    # torch's scatter_reduce backward for amax/amin (FunctionsManual.cpp):
    # the gradient is shared evenly among the values equal to the result.
    g, x, idx, src, out = ins
    axis, idx = _get(a, "axis", 0), idx.long()
    region = tuple(slice(0, n) for n in idx.shape)
    self_is = (x == out).to(x.dtype)
    src_is = (src[region] == out.gather(axis, idx)).to(x.dtype)
    share = g / self_is.scatter_add(axis, idx, src_is)
    grad_x = self_is * share
    if not _get(a, "include_self", True):
        grad_x = grad_x.scatter(axis, idx, 0.0)
    grad_src = torch.zeros_like(src)
    grad_src[region] = src_is * share.gather(axis, idx)
    return grad_x, grad_src


def _index_add(ins, a):
    x, idx, src = ins
    alpha = _get(a, "alpha", 1.0)
    if not x.is_floating_point():
        alpha = int(alpha)
    return torch.index_add(x, _get(a, "axis", 0), idx.long(), src, alpha=alpha)


def _one_hot(ins, a):
    return F.one_hot(ins[0].long(), _get(a, "num_classes", -1))


def _masked_select_grad(ins, a):
    g, mask = ins
    return torch.zeros(a["shape"], dtype=g.dtype).masked_scatter(mask, g)


REFS = _fresh_all({
    "gather": lambda ins, a: torch.gather(ins[0], _get(a, "axis", 0), ins[1].long()),
    "scatter": _scatter_like(torch.scatter),
    "scatter_add": _scatter_like(torch.scatter_add),
    "scatter_reduce": _scatter_reduce,
    "_scatter_extremum_grad": _scatter_extremum_grad,
    "take_along_axis": lambda ins, a: torch.take_along_dim(ins[0], ins[1].long(), dim=_get(a, "axis", -1)),
    "_wrap_index": lambda ins, a: torch.where(ins[0].long() < 0, ins[0].long() + a["size"], ins[0].long()),
    "index_select": lambda ins, a: torch.index_select(ins[0], _get(a, "axis", 0), ins[1].long()),
    "index_add": _index_add,
    "embedding": lambda ins, a: F.embedding(ins[1].long(), ins[0]),
    "one_hot": _one_hot,
    "masked_fill": lambda ins, a: torch.masked_fill(ins[0], ins[1], a["value"]),
    "masked_select": lambda ins, a: torch.masked_select(ins[0], ins[1]),
    "_masked_select_grad": _masked_select_grad,
    "nonzero": lambda ins, a: torch.nonzero(ins[0]),
})
