"""Reference results for the complex category (core/ops_complex.go).

make_vectors passes complex inputs as complex tensors and stores complex
outputs as their real pairs; view_as_real and view_as_complex return the
other form themselves.
"""

import torch


def _pairs(z):
    return torch.view_as_real(z) if z.is_complex() else z


REFS = {
    "view_as_real": lambda ins, attrs: torch.view_as_real(ins[0]),
    "view_as_complex": lambda ins, attrs: _pairs(torch.view_as_complex(ins[0].contiguous())),
    "real": lambda ins, attrs: torch.real(ins[0]),
    "imag": lambda ins, attrs: torch.imag(ins[0]),
    "complex": lambda ins, attrs: _pairs(torch.complex(*torch.broadcast_tensors(ins[0], ins[1]))),
    "conj": lambda ins, attrs: _pairs(torch.conj(ins[0]).resolve_conj()),
    "angle": lambda ins, attrs: torch.angle(ins[0]),
}
