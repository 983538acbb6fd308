"""Reference results for the complex category (core/ops_complex.go).

Complex tensors cross the vector files as their real pairs [..., 2]
(torch.view_as_real), the layout webtensor stores them in.
"""

import torch


def _c(x):
    return torch.view_as_complex(x.contiguous()) if not x.is_complex() else x


def _pairs(z):
    return torch.view_as_real(z) if z.is_complex() else z


REFS = {
    "view_as_real": lambda ins, attrs: _pairs(_c(ins[0])),
    "view_as_complex": lambda ins, attrs: _pairs(torch.view_as_complex(ins[0].contiguous())),
    "real": lambda ins, attrs: torch.real(_c(ins[0])),
    "imag": lambda ins, attrs: torch.imag(_c(ins[0])),
    "complex": lambda ins, attrs: _pairs(torch.complex(*torch.broadcast_tensors(ins[0], ins[1]))),
    "conj": lambda ins, attrs: _pairs(torch.conj(_c(ins[0])).resolve_conj()),
    "angle": lambda ins, attrs: torch.angle(_c(ins[0])),
}
