"""Whole-process behaviour, each in a fresh interpreter: shutdown with live
DLPack imports, and importing without NumPy."""

import subprocess
import sys

SHUTDOWN = """
import gc, numpy as np, torch, webtensor as wt
keep = [wt.from_dlpack(np.arange(100.0)) for _ in range(50)]
views = [wt.slice(t, start=1) for t in keep]
more = [wt.from_dlpack(torch.ones(10)) for _ in range(20)]
for _ in range(200):
    wt.from_dlpack(np.ones(1000)) * 2  # dropped at once; Go cleanups run the deleters later
gc.collect()
print("done")
"""

NO_NUMPY = """
import sys
sys.modules["numpy"] = None  # makes `import numpy` fail
import webtensor as wt
x = wt.tensor([[1.0, 2.0], [3.0, 4.0]])
assert (x @ x).tolist() == [[7.0, 10.0], [15.0, 22.0]], (x @ x).tolist()
assert wt.tensor([1, 2]).dtype == wt.i64 and wt.tensor([True]).dtype == wt.bool
assert wt.softmax(wt.zeros(2)).tolist() == [0.5, 0.5]
print("done")
"""


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_exit_with_live_dlpack_imports_is_clean():
    for _ in range(3):
        out = run(SHUTDOWN)
        assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-2000:]


def test_works_without_numpy():
    out = run(NO_NUMPY)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-2000:]


NO_NUMPY_SHAPES = """
import sys
sys.modules["numpy"] = None
import webtensor as wt
assert wt.zeros(3, 0).tolist() == [[], [], []]
assert wt.tensor(1.5).item() == 1.5 and wt.tensor(1.5).tolist() == 1.5
assert wt.ones(2, 2, dtype="bf16").tolist() == [[1.0, 1.0], [1.0, 1.0]]
assert "tensor([[True" in repr(wt.ones(1, 2) > 0)
print("done")
"""


def test_lists_without_numpy():
    out = run(NO_NUMPY_SHAPES)
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr[-2000:]
