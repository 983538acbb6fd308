"""Reference functions for the comparisons (core/ops_compare.go).
"""

import torch

from ._util import _plain


REFS = {
    "eq": _plain(torch.eq),
    "ne": _plain(torch.ne),
    "lt": _plain(torch.lt),
    "le": _plain(torch.le),
    "gt": _plain(torch.gt),
    "ge": _plain(torch.ge),
}
