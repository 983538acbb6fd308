"""Reference functions for the linear algebra ops (core/ops_linalg*.go).
_einsum_scatter is checked against torch.autograd of the einsum it
differentiates.
"""

import torch

from ._util import grad_at


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


REFS = {
    "matmul": matmul,
    "outer": outer,
    "einsum": einsum,
    "_einsum_scatter": einsum_scatter,
}
