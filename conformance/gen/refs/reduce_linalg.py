"""Reference functions for the reductions and linear algebra ops
(core/ops_reduce.go, ops_reduce_more.go, ops_linalg.go, ops_einsum.go).

Every reference is a PyTorch call. The internal gradient helpers
(_prod_grad, _extreme_grad, _norm_grad, _cumprod_grad, _einsum_scatter) are
checked against torch.autograd applied to the public op they differentiate.
Attributes left out of a sample arrive absent, so defaults are applied here.
"""

import torch


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


def _grad_of(f, x, upstream=None):
    """The gradient of f at x for the upstream gradient (ones by default)."""
    leaf = x.detach().clone().requires_grad_(True)
    y = f(leaf)
    up = torch.ones_like(y) if upstream is None else upstream.expand_as(y)
    # create_graph keeps the result differentiable in the upstream gradient
    # (_einsum_scatter is checked forward and backward through it).
    (g,) = torch.autograd.grad(y, leaf, grad_outputs=up, create_graph=True)
    return g


def prod_grad(ins, a):
    x = ins[0]
    return _grad_of(lambda t: _flat_prod(t, _dims(t, a), False), x)


def extreme_grad(ins, a):
    x, v = ins
    dims = _dims(x, a)
    fn = torch.amax if torch.equal(torch.amax(x, dim=dims, keepdim=True), v) else torch.amin
    return _grad_of(lambda t: fn(t, dim=dims, keepdim=True), x)


def norm_grad(ins, a):
    x, _, g = ins
    dims = None if a.get("axes") is None else _dims(x, a)
    return _grad_of(lambda t: torch.linalg.vector_norm(t, ord=a.get("ord", 2.0), dim=dims, keepdim=True), x, g)


def cumprod_grad(ins, a):
    x, g = ins
    return _grad_of(lambda t: torch.cumprod(t, dim=a["axis"]), x, g)


def _promoted(ins):
    """The operands cast to their common dtype, as Go's Promote does (torch's
    matmul and einsum insist on equal dtypes)."""
    dt = ins[0].dtype
    for t in ins[1:]:
        dt = torch.promote_types(dt, t.dtype)
    return [t.to(dt) for t in ins]


def matmul(ins, a):
    return torch.matmul(*_promoted(ins))


def outer(ins, a):
    return torch.outer(*_promoted(ins))


def einsum(ins, a):
    return torch.einsum(a["equation"], *_promoted(ins))


def einsum_scatter(ins, a):
    """The adjoint of einsum("S->K"): the gradient of <einsum(S->K, y), x>
    with respect to y."""
    k, s = a["equation"].split("->")
    (x,) = ins
    y = torch.zeros(a["shape"], dtype=x.dtype)
    return _grad_of(lambda t: torch.einsum(f"{s}->{k}", t), y, x)


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
    "matmul": matmul,
    "outer": outer,
    "einsum": einsum,
    "_einsum_scatter": einsum_scatter,
}
