"""References for sorting (core/ops_sort.go): stable everywhere, so ties come
out in index order.
"""

import torch

from ._util import _fresh_all, _get


def _sort(ins, a):
    r = torch.sort(ins[0], dim=_get(a, "axis", -1), descending=_get(a, "descending", False), stable=True)
    return r.values, r.indices


def _argsort(ins, a):
    return torch.argsort(ins[0], dim=_get(a, "axis", -1), descending=_get(a, "descending", False), stable=True)


def _topk(ins, a):
    x, axis = ins[0], _get(a, "axis", -1)
    values, indices = torch.topk(x, a["k"], dim=axis, largest=_get(a, "largest", True), sorted=True)
    if not _get(a, "sorted", True) and x.dim() > 0:
        order = torch.argsort(indices, dim=axis)
        values, indices = values.gather(axis, order), indices.gather(axis, order)
    return values, indices


def _unique(ins, a):
    flat = ins[0].reshape(-1)
    values, inverse, counts = torch.unique(flat, sorted=True, return_inverse=True, return_counts=True)
    if not _get(a, "sorted", True):
        # Order of first occurrence: sort the groups by their first position.
        first = torch.full((values.numel(),), flat.numel(), dtype=torch.long)
        first = first.scatter_reduce(0, inverse, torch.arange(flat.numel()), "amin")
        order = torch.argsort(first)
        rank = torch.argsort(order)
        values, counts, inverse = values[order], counts[order], rank[inverse]
    out = [values]
    if _get(a, "return_inverse", False):
        out.append(inverse.reshape(ins[0].shape))
    if _get(a, "return_counts", False):
        out.append(counts)
    return tuple(out)


REFS = _fresh_all({
    "sort": _sort,
    "argsort": _argsort,
    "topk": _topk,
    "unique": _unique,
})
