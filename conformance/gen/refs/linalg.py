"""Reference functions for the linear algebra ops (core/ops_linalg*.go).
_einsum_scatter is checked against torch.autograd of the einsum it
differentiates.

The factorisations follow core/ops_linalg_decomp.go's conventions, applied
to PyTorch's results: cholesky and eigh read the lower triangle (the input
goes through _sym_lower, so autograd credits the lower triangle only),
eigenvectors and left singular vectors are flipped so that each one's
largest-magnitude element is positive (_canon), and a full SVD's extra
columns are the pivoted Gram-Schmidt completion (_complete). These fix
what the standard leaves open; the subspaces, values and gradients are
PyTorch's.
"""

import math

import torch

from ._util import _fresh_all, _get, grad_at


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
    return grad_at(lambda t: torch.einsum(f"{s}->{k}", t), y, x)


def _sym_lower(a):
    """The symmetric matrix the kernels read: the lower triangle mirrored."""
    return a.tril() + a.tril(-1).mT


def _canon(u):
    """u with each column flipped so that its largest-magnitude element (the
    first of equal ones) is positive, and the signs used ((..., 1, k))."""
    idx = u.detach().abs().argmax(dim=-2, keepdim=True)
    s = torch.sign(torch.gather(u.detach(), -2, idx))
    s = torch.where(s == 0, torch.ones_like(s), s)
    return u * s, s


def _complete(u, cols):
    """u's orthonormal columns (..., rows, k) followed by cols - k more: each
    the unit vector with the largest residual against the columns so far
    (the first of equal ones), minus its projection on them, normalised."""
    rows, k = u.shape[-2], u.shape[-1]
    flat = u.detach().reshape(-1, rows, k)
    extra = torch.zeros(flat.shape[0], rows, cols - k, dtype=u.dtype)
    for b in range(flat.shape[0]):
        have = [flat[b, :, j] for j in range(k)]
        for c in range(cols - k):
            res = [1.0 - sum(float(h[i]) ** 2 for h in have) for i in range(rows)]
            p = max(range(rows), key=lambda i: (res[i], -i))
            v = torch.zeros(rows, dtype=u.dtype)
            v[p] = 1.0
            for h in have:
                v = v - h[p] * h
            v = v / v.norm()
            extra[b, :, c] = v
            have.append(v)
    return torch.cat([u, extra.reshape(*u.shape[:-2], rows, cols - k)], dim=-1)


def cholesky(ins, a):
    return torch.linalg.cholesky(_sym_lower(ins[0]), upper=bool(_get(a, "upper", False)))


def qr(ins, a):
    return torch.linalg.qr(ins[0], mode=_get(a, "mode", "reduced"))


def eigh(ins, a):
    lam, v = torch.linalg.eigh(_sym_lower(ins[0]))
    return lam, _canon(v)[0]


def svd(ins, a):
    x = ins[0]
    m, n = x.shape[-2], x.shape[-1]
    u, s, vh = torch.linalg.svd(x, full_matrices=False)
    u, sg = _canon(u)
    vh = vh * sg.mT
    if _get(a, "full_matrices", True):
        u = _complete(u, m)
        vh = _complete(vh.mT, n).mT
    return u, s, vh


def slogdet(ins, a):
    return tuple(torch.linalg.slogdet(ins[0]))


def solve_(ins, a):
    return torch.linalg.solve(ins[0], ins[1])


def solve(ins, a):
    x1, x2 = _promoted(ins)
    if x2.ndim == 1:
        return torch.linalg.solve(x1, x2.unsqueeze(-1)).squeeze(-1)
    return torch.linalg.solve(x1, x2)


def pinv(ins, a):
    return torch.linalg.pinv(ins[0], rtol=_get(a, "rtol"))


def matrix_rank(ins, a):
    return torch.linalg.matrix_rank(ins[0], rtol=_get(a, "rtol"))


NORM_ORDS = {"fro": "fro", "nuc": "nuc", "inf": math.inf, "-inf": -math.inf, "1": 1, "-1": -1, "2": 2, "-2": -2}


def matrix_norm(ins, a):
    o = _get(a, "ord", "fro")  # make_vectors reads the strings "inf" and "-inf" as floats
    o = o if isinstance(o, float) else NORM_ORDS[o]
    return torch.linalg.matrix_norm(ins[0], ord=o, keepdim=bool(_get(a, "keepdim", False)))


def diagonal(ins, a):
    return torch.diagonal(ins[0], _get(a, "offset", 0), -2, -1)


def matrix_trace(ins, a):
    return torch.diagonal(ins[0], _get(a, "offset", 0), -2, -1).sum(-1)


def tensordot(ins, a):
    x, y = _promoted(ins)
    dims = (a["axes_a"], a["axes_b"]) if a.get("axes_a") is not None else _get(a, "axes", 2)
    return torch.tensordot(x, y, dims=dims)


def vecdot(ins, a):
    x, y = _promoted(ins)
    return (x * y).sum(_get(a, "axis", -1)).to(x.dtype)


def cross(ins, a):
    x, y = _promoted(ins)
    x, y = torch.broadcast_tensors(x, y)
    return torch.linalg.cross(x, y, dim=_get(a, "axis", -1))


REFS = {
    "matmul": matmul,
    "outer": outer,
    "einsum": einsum,
    "_einsum_scatter": einsum_scatter,
    **_fresh_all({
        "cholesky": cholesky,
        "qr": qr,
        "eigh": eigh,
        "svd": svd,
        "slogdet": slogdet,
        "_solve": solve_,
        "solve": solve,
        "inv": lambda ins, a: torch.linalg.inv(ins[0]),
        "det": lambda ins, a: torch.linalg.det(ins[0]),
        "eigvalsh": lambda ins, a: torch.linalg.eigvalsh(_sym_lower(ins[0])),
        "svdvals": lambda ins, a: torch.linalg.svdvals(ins[0]),
        "pinv": pinv,
        "matrix_rank": matrix_rank,
        "matrix_power": lambda ins, a: torch.linalg.matrix_power(ins[0], a["n"]),
        "matrix_norm": matrix_norm,
        "diagonal": diagonal,
        "tril": lambda ins, a: torch.tril(ins[0], _get(a, "diagonal", 0)),
        "triu": lambda ins, a: torch.triu(ins[0], _get(a, "diagonal", 0)),
        "matrix_trace": matrix_trace,
        "tensordot": tensordot,
        "vecdot": vecdot,
        "cross": cross,
    }),
}
