"""References for cast and contiguous (core/ops_types.go).
"""

import math

import torch

from ._util import _TORCH_DTYPES, _fresh_all


def _cast(x, dt):
    """x.to(dt), except floats to integers follow webtensor's rule (numerics.FloatToInt):
    NaN becomes 0 and other values truncate toward zero and saturate at the target's
    range. PyTorch and NumPy leave NaN and out-of-range conversions undefined (they
    inherit the machine's C cast: x86 gives INT_MIN, then wraps to the width), so
    for those values the reference states the rule; inside the range it must agree
    with torch."""
    if not x.is_floating_point() or dt.is_floating_point or dt == torch.bool:
        return x.to(dt)
    info = torch.iinfo(dt)
    vals = [0 if math.isnan(v) else info.min if v <= info.min else info.max if v >= info.max else math.trunc(v)
            for v in x.double().flatten().tolist()]
    out = torch.tensor(vals, dtype=dt).reshape(x.shape)
    inside = ~x.isnan() & (x > float(info.min) - 1) & (x < float(info.max) + 1)
    assert torch.equal(out[inside], x[inside].to(dt)), "the rule agrees with torch inside the range"
    return out


REFS = _fresh_all({
    "contiguous": lambda ins, a: ins[0].contiguous(),
    "cast": lambda ins, a: _cast(ins[0], _TORCH_DTYPES[a["dtype"]]),
})
