"""Reference functions for the logical ops: the connectives, logical_not,
isnan and isinf (core/ops_logical.go), isfinite and signbit
(core/ops_logical_float.go).
"""

import torch

from ._util import _plain


REFS = {
    "logical_and": _plain(torch.logical_and),
    "logical_or": _plain(torch.logical_or),
    "logical_xor": _plain(torch.logical_xor),
    "logical_not": _plain(torch.logical_not),
    "isnan": _plain(torch.isnan),
    "isinf": _plain(torch.isinf),
    "isfinite": _plain(torch.isfinite),
    "signbit": _plain(torch.signbit),
}
