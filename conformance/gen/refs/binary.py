"""Reference functions for the binary arithmetic ops and where
(core/ops_binary*.go). Integer inputs of ops that give floats (div, atan2)
are taken as float64, so the reference is the exact result rounded once.
"""

import torch

from ._util import _float, _float_result, _native_dtypes, _plain


def div(ins, a):
    x, y = ins
    if not (x.is_floating_point() or x.is_complex()) and not (y.is_floating_point() or y.is_complex()):
        x, y = _float(x), _float(y)
    return torch.div(x, y)


def _u32_via_i64(fn):
    """fn for inputs PyTorch's uint32 lacks kernels for (shifts, not): run
    in int64, which holds every uint32, and keep the low 32 bits."""

    def ref(ins, a):
        if not any(x.dtype == torch.uint32 for x in ins):
            return fn(*ins)
        wide = fn(*[x.to(torch.int64) for x in ins])
        return (wide & 0xFFFFFFFF).to(torch.uint32)

    return ref


REFS = {
    "add": _plain(torch.add),
    "sub": _plain(torch.sub),
    "mul": _plain(torch.mul),
    "div": div,
    "floor_divide": _plain(torch.floor_divide),
    "remainder": _plain(torch.remainder),
    "pow": _plain(torch.pow),
    "maximum": _plain(torch.maximum),
    "minimum": _plain(torch.minimum),
    "atan2": _float_result(torch.atan2),
    "hypot": _float_result(torch.hypot),
    "copysign": _float_result(torch.copysign),
    "logaddexp": _float_result(torch.logaddexp),
    "where": _plain(torch.where),
    "nextafter": _native_dtypes(torch.nextafter),
    "bitwise_and": _plain(torch.bitwise_and),
    "bitwise_or": _plain(torch.bitwise_or),
    "bitwise_xor": _plain(torch.bitwise_xor),
    "bitwise_invert": _u32_via_i64(torch.bitwise_not),
    "bitwise_left_shift": _u32_via_i64(torch.bitwise_left_shift),
    "bitwise_right_shift": _u32_via_i64(torch.bitwise_right_shift),
}
