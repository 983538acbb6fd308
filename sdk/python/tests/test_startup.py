"""Starting the library, each in a fresh interpreter: nothing on stderr, and
PyTorch's Triton loads after the WebGPU backend has run (README,
Troubleshooting)."""

import importlib.util
import os
import subprocess
import sys

import pytest

# Variables that would quieten Mesa on their own: the child runs without them.
MESA_QUIETENERS = ("XDG_RUNTIME_DIR", "NODEVICE_SELECT", "MESA_VK_DEVICE_SELECT", "DRI_PRIME")

START = """
import webtensor as wt
devices = wt.devices()
for d in devices:
    x = wt.tensor([1.0, 2.0], device=d)
    assert (x * 2 + 1).tolist() == [3.0, 5.0], d
print("done", *devices)
"""

# Creating an optimizer imports torch._dynamo, which loads Triton's libtriton.so.
TORCH_AFTER_WEBGPU = START + """
import torch
opt = torch.optim.Adam([torch.zeros(2, requires_grad=True)])
import triton._C.libtriton  # what torch._dynamo loads when Triton is installed
print("optimizer")
"""


def run(code):
    env = {k: v for k, v in os.environ.items() if k not in MESA_QUIETENERS}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)


def test_start_prints_nothing_to_stderr():
    out = run(START)
    assert out.returncode == 0 and out.stdout.startswith("done"), out.stderr[-2000:]
    assert out.stderr == ""


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs PyTorch")
def test_torch_optimizer_after_webgpu():
    code = TORCH_AFTER_WEBGPU
    if importlib.util.find_spec("triton") is None:
        code = code.replace("import triton._C.libtriton", "pass")
    out = run(code)
    assert out.returncode == 0, f"exit status {out.returncode}: {out.stderr[-2000:]}"
    assert out.stdout.split("\n")[1] == "optimizer", out.stdout
