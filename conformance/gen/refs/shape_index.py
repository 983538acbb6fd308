"""References for shape copies, views, indexing and sorting, computed with PyTorch.

Attributes arrive only when a sample sets them, so every function applies the
OpDef's defaults itself. Index tensors are passed to torch as int64.
"""

import math

import torch
import torch.nn.functional as F

DTYPES = {
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
    "i64": torch.int64, "i32": torch.int32, "u32": torch.uint32, "i16": torch.int16,
    "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool,
}


def _get(a, name, default):
    v = a.get(name)
    return default if v is None else v


def _slice_index(x_dim, a):
    idx = [slice(None)] * x_dim
    idx[_get(a, "axis", 0)] = slice(_get(a, "start", 0), a.get("stop"), _get(a, "step", 1))
    return tuple(idx)


# Views of the lead's core/ops_view.go, and the two copies core relies on.

def _squeeze(ins, a):
    axes = a.get("axes")
    return ins[0].squeeze() if axes is None else ins[0].squeeze(tuple(axes))


VIEWS = {
    "reshape": lambda ins, a: ins[0].reshape(a["shape"]),
    "flatten": lambda ins, a: torch.flatten(ins[0], _get(a, "start_dim", 0), _get(a, "end_dim", -1)),
    "expand": lambda ins, a: ins[0].expand(*a["shape"]),
    "permute": lambda ins, a: ins[0].permute(*a["dims"]),
    "transpose": lambda ins, a: ins[0].transpose(_get(a, "dim0", -2), _get(a, "dim1", -1)),
    "squeeze": _squeeze,
    "unsqueeze": lambda ins, a: ins[0].unsqueeze(a["axis"]),
    "contiguous": lambda ins, a: ins[0].contiguous(),
    "cast": lambda ins, a: _cast(ins[0], DTYPES[a["dtype"]]),
}


def _cast(x, dt):
    """x.to(dt), except floats to integers follow webtensor's rule (core.FloatToInt):
    NaN becomes 0 and other values truncate toward zero and saturate at the target's
    range. PyTorch and NumPy leave NaN and out-of-range conversions undefined (they
    inherit the machine's C cast: x86 gives INT_MIN, then wraps to the width), so
    for those values the reference states the rule; inside the range it must agree
    with torch."""
    if not x.is_floating_point() or dt.is_floating_point or dt == torch.bool:
        return x.to(dt)
    info = torch.iinfo(dt)
    vals = [0 if math.isnan(v) else info.min if v <= info.min else info.max if v >= info.max else math.trunc(v)
            for v in x.double().flatten().tolist()]
    out = torch.tensor(vals, dtype=dt).reshape(x.shape)
    inside = ~x.isnan() & (x > float(info.min) - 1) & (x < float(info.max) + 1)
    assert torch.equal(out[inside], x[inside].to(dt)), "the rule agrees with torch inside the range"
    return out


# Joins, splits and other copies.

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


SHAPE = {
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
}


# Indexing.

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


INDEX = {
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
}


# Sorting: stable everywhere, so ties come out in index order.

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


SORT = {
    "sort": _sort,
    "argsort": _argsort,
    "topk": _topk,
    "unique": _unique,
}

def _fresh(fn):
    # Views and no-op casts would share memory with the inputs, which the
    # vector file writer rejects: hand back copies.
    def ref(ins, a):
        r = fn(ins, a)
        if isinstance(r, (tuple, list)):
            return tuple(o.clone() for o in r)
        return r.clone()
    return ref


REFS = {name: _fresh(fn) for name, fn in {**VIEWS, **SHAPE, **INDEX, **SORT}.items()}
