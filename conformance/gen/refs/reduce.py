"""Reference functions for the reductions and scans (core/ops_reduce*.go).

Every reference is a PyTorch call. The internal gradient helpers
(_prod_grad, _extreme_grad, _norm_grad, _cumprod_grad) are checked against
torch.autograd applied to the public op they differentiate. Attributes left
out of a sample arrive absent, so defaults are applied here.
"""

import torch

from ._util import grad_at


def _dims(x, a):
    """The reduced dims as a list; absent "axes" means every dim."""
    axes = a.get("axes")
    if axes is None:
        return list(range(x.ndim))
    return [d % x.ndim for d in axes]


def _keep(a):
    return bool(a.get("keepdim", False))


def _reduce(fn, x, a):
    """fn(x, dims, keepdim) for reductions that take a dim list; a rank-0
    input or an empty dim list reduces nothing."""
    dims = _dims(x, a)
    if not dims:
        return x.clone()
    return fn(x, dims, _keep(a))


def _flat_prod(x, dims, keepdim):
    """torch.prod over several dims: move them last, flatten, reduce once
    (so its backward is torch's exact product-of-others)."""
    rest = [d for d in range(x.ndim) if d not in dims]
    y = x.permute(rest + dims).reshape([x.shape[d] for d in rest] + [-1]).prod(-1)
    if keepdim:
        y = y.reshape([1 if d in dims else x.shape[d] for d in range(x.ndim)])
    return y


def sum_(ins, a):
    return _reduce(lambda x, d, k: torch.sum(x, dim=d, keepdim=k), ins[0], a)


def mean(ins, a):
    return _reduce(lambda x, d, k: torch.mean(x, dim=d, keepdim=k), ins[0], a)


def prod(ins, a):
    x = ins[0]
    if not x.is_floating_point():
        x = x.to(torch.int64)
    return _reduce(_flat_prod, x, a)


def amax(ins, a):
    return _reduce(lambda x, d, k: torch.amax(x, dim=d, keepdim=k), ins[0], a)


def amin(ins, a):
    return _reduce(lambda x, d, k: torch.amin(x, dim=d, keepdim=k), ins[0], a)


def _arg(fn):
    def ref(ins, a):
        x = ins[0]
        if a.get("axis") is None:
            return fn(x, keepdim=_keep(a))
        return fn(x, dim=a["axis"], keepdim=_keep(a))
    return ref


def var(ins, a):
    return _reduce(lambda x, d, k: torch.var(x, dim=d, correction=a.get("correction", 1), keepdim=k), ins[0], a)


def std(ins, a):
    return _reduce(lambda x, d, k: torch.std(x, dim=d, correction=a.get("correction", 1), keepdim=k), ins[0], a)


def logsumexp(ins, a):
    return _reduce(lambda x, d, k: torch.logsumexp(x, dim=d, keepdim=k), ins[0], a)


def norm(ins, a):
    x = ins[0]
    dims = None if a.get("axes") is None else _dims(x, a)
    return torch.linalg.vector_norm(x, ord=a.get("ord", 2.0), dim=dims, keepdim=_keep(a))


def cumsum(ins, a):
    return torch.cumsum(ins[0], dim=a["axis"])


def cumprod(ins, a):
    return torch.cumprod(ins[0], dim=a["axis"])


def any_(ins, a):
    return _reduce(lambda x, d, k: torch.any(x, dim=tuple(d), keepdim=k), ins[0], a)


def all_(ins, a):
    return _reduce(lambda x, d, k: torch.all(x, dim=tuple(d), keepdim=k), ins[0], a)


def prod_grad(ins, a):
    x = ins[0]
    return grad_at(lambda t: _flat_prod(t, _dims(t, a), False), x)


def extreme_grad(ins, a):
    x, v = ins
    dims = _dims(x, a)
    fn = torch.amax if torch.equal(torch.amax(x, dim=dims, keepdim=True), v) else torch.amin
    return grad_at(lambda t: fn(t, dim=dims, keepdim=True), x)


def norm_grad(ins, a):
    x, _, g = ins
    dims = None if a.get("axes") is None else _dims(x, a)
    return grad_at(lambda t: torch.linalg.vector_norm(t, ord=a.get("ord", 2.0), dim=dims, keepdim=True), x, g)


def cumprod_grad(ins, a):
    x, g = ins
    return grad_at(lambda t: torch.cumprod(t, dim=a["axis"]), x, g)


REFS = {
    "sum": sum_,
    "mean": mean,
    "prod": prod,
    "max": amax,
    "min": amin,
    "argmax": _arg(torch.argmax),
    "argmin": _arg(torch.argmin),
    "var": var,
    "std": std,
    "logsumexp": logsumexp,
    "norm": norm,
    "cumsum": cumsum,
    "cumprod": cumprod,
    "any": any_,
    "all": all_,
    "_prod_grad": prod_grad,
    "_extreme_grad": extreme_grad,
    "_norm_grad": norm_grad,
    "_cumprod_grad": cumprod_grad,
}
