"""Autograd from several Python threads at once: grad mode and no_grad belong to the
thread (issue 26: backward switched recording off for the whole process)."""

import os
import threading

import numpy as np
import pytest

import webtensor as wt
from conftest import webgpu_or_none

os.environ.setdefault("NODEVICE_SELECT", "1")


def _run(workers, fn):
    errors = []

    def guarded(i):
        try:
            fn(i)
        except Exception as e:  # reported below, with the thread
            errors.append(f"thread {i}: {e!r}")

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


_DEVICES = ["cpu"] + [
    pytest.param("webgpu", marks=pytest.mark.skipif(
        webgpu_or_none() is None, reason="no WebGPU adapter here"))
]


@pytest.mark.parametrize("device", _DEVICES)
def test_threads_backward_get_the_single_threaded_gradients(device):
    iters = 1000 if device == "cpu" else 100  # a software GPU is slow
    w = wt.ones(64, 64, requires_grad=True, device=device)
    (w * w + w).sum().backward()
    want = w.grad.numpy().copy()
    np.testing.assert_array_equal(want, np.full((64, 64), 3.0, dtype=np.float32))
    wrong = []

    def train(_):
        for _ in range(iters):
            w = wt.ones(64, 64, requires_grad=True, device=device)
            (w * w + w).sum().backward()
            if not np.array_equal(w.grad.numpy(), want):
                wrong.append(1)

    assert _run(4, train) == []
    assert not wrong, f"{len(wrong)} of {4 * iters} gradients differ from the single-threaded one"


def test_no_grad_belongs_to_its_thread():
    w = wt.ones(3, requires_grad=True)
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def in_scope(_):
        with wt.no_grad():
            entered.set()
            checked.wait(10)
            seen["inside"] = (w * w).requires_grad

    t = threading.Thread(target=in_scope, args=(0,))
    t.start()
    assert entered.wait(10)
    seen["outside"] = (w * w).requires_grad
    checked.set()
    t.join()
    assert seen == {"inside": False, "outside": True}


def test_no_grad_exit_on_another_thread_is_an_error():
    scope = wt.no_grad()
    scope.__enter__()
    errors = _run(1, lambda _: scope.__exit__(None, None, None))
    scope.__exit__(None, None, None)
    assert len(errors) == 1 and "without a matching enter on this thread" in errors[0]


def test_set_num_threads_like_torch():
    """wt.set_num_threads sets the CPU backend's kernel threads; the bits of
    a result do not depend on it."""
    before = wt.get_num_threads()
    assert before >= 1
    x = wt.tensor(np.sin(np.arange(1 << 16, dtype=np.float32)))
    want = wt.exp(x).sum().item()
    try:
        wt.set_num_threads(1)
        assert wt.get_num_threads() == 1
        assert wt.exp(x).sum().item() == want
        with pytest.raises(TypeError):
            wt.set_num_threads(1.5)
        with pytest.raises(ValueError, match="at most 65536"):
            wt.set_num_threads(1 << 20)
    finally:
        wt.set_num_threads(0)
    assert wt.get_num_threads() == before
