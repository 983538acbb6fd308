"""Reference functions for the binary arithmetic ops and where
(core/ops_binary*.go). Integer inputs of ops that give floats (div, atan2)
are taken as float64, so the reference is the exact result rounded once.
"""

import torch

from ._util import _float, _float_result, _plain


def div(ins, a):
    x, y = ins
    if not x.is_floating_point() and not y.is_floating_point():
        x, y = _float(x), _float(y)
    return torch.div(x, y)


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
}
