"""Checkpoint interop with the reference safetensors implementation.

usage: interop.py IN OUT
Loads IN with safetensors.numpy.load_file and prints, as JSON, its metadata
and every tensor's dtype, shape and values; then writes OUT with
safetensors.numpy.save_file, holding the same tensors with floating-point
values doubled and integer values plus one.
"""
import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

src, dst = sys.argv[1], sys.argv[2]
tensors = load_file(src)
with safe_open(src, framework="np") as f:
    metadata = f.metadata()
report = {
    "metadata": metadata,
    "tensors": {
        name: {"dtype": str(a.dtype), "shape": list(a.shape), "values": a.astype(np.float64).ravel().tolist()}
        for name, a in tensors.items()
    },
}
print(json.dumps(report))
changed = {}
for name, a in tensors.items():
    changed[name] = np.asarray(a * 2 if np.issubdtype(a.dtype, np.floating) else a + 1, dtype=a.dtype)
save_file(changed, dst, metadata={"written_by": "safetensors.numpy"})
