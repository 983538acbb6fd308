"""The CUDA device from Python: tensors, DLPack with PyTorch's CUDA tensors
(both ways, zero-copy, with the stream exchange), memory statistics and
options. The tests that need a GPU skip, saying so, when no CUDA device
opens here; the one that checks the reason runs exactly then."""

from __future__ import annotations

import time

import numpy as np
import pytest

import webtensor as wt

HAVE_CUDA = wt.cuda.is_available()
need_cuda = pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device opens on this machine")


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@pytest.mark.skipif(HAVE_CUDA, reason="a CUDA device is present")
def test_absent_cuda_says_why():
    with pytest.raises(wt.UnsupportedError, match="cuda"):
        wt.zeros(2, device="cuda")
    assert not any(d.startswith("cuda") for d in wt.devices())


@need_cuda
def test_no_op_falls_back_to_the_cpu_on_cuda():
    # Every registry op has a CUDA kernel: a run of varied ops counts no
    # CPU fallback for the cuda device (host work, if any, is declared).
    wt.fallbacks(reset=True)
    x = wt.randn(16, 32, device="cuda")
    w = wt.randn(32, 8, device="cuda")
    y = wt.softmax(wt.matmul(x, w), axis=-1)
    vals, idx = y.sort(axis=-1)
    wt.synchronize("cuda")
    _ = (wt.sum(vals).item(), wt.cumsum(idx, axis=0).numpy(), wt.rfft(x, axis=-1).numpy())
    cpu = [f for f in wt.fallbacks() if f["device"].startswith("cuda") and f.get("kind", "cpu") == "cpu"]
    assert cpu == [], cpu


@need_cuda
def test_ops_match_numpy_on_cuda():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((48, 32)).astype(np.float32)
    x, y = wt.tensor(a, device="cuda"), wt.tensor(b, device="cuda")
    assert x.device == "cuda:0"
    np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    s = wt.softmax(x, axis=-1).numpy()
    e = np.exp(a - a.max(-1, keepdims=True))
    np.testing.assert_allclose(s, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.sum(axis=0).numpy(), a.sum(0), rtol=1e-5, atol=1e-5)


@need_cuda
def test_gradients_on_cuda_match_cpu():
    a = np.random.default_rng(4).standard_normal((8, 5)).astype(np.float32)
    grads = []
    for dev in ("cpu", "cuda"):
        w = wt.tensor(a, device=dev, requires_grad=True)
        (wt.gelu(w @ w.T).sum()).backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)


@need_cuda
def test_dlpack_with_torch_cuda_both_ways():
    torch = _torch_cuda()
    src = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4) * 2
    t = wt.from_dlpack(src)  # zero-copy: the same device memory
    assert t.device == "cuda:0"
    np.testing.assert_array_equal(t.numpy(), src.cpu().numpy())
    src.add_(1)  # a write by PyTorch after the import is seen (shared memory)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(t.numpy(), src.cpu().numpy())
    back = torch.from_dlpack(t * 3)
    assert back.is_cuda
    np.testing.assert_array_equal(back.cpu().numpy(), src.cpu().numpy() * 3)
    assert t.__dlpack_device__() == (2, 0)
    host = np.from_dlpack(t, device="cpu")  # asks __dlpack__ for a host copy
    np.testing.assert_array_equal(host, src.cpu().numpy())


@need_cuda
def test_memory_stats_and_empty_cache():
    wt.cuda.synchronize()
    before = wt.cuda.memory_allocated()
    x = wt.zeros(1 << 20, device="cuda")  # 4 MiB
    assert wt.cuda.memory_allocated() >= before + (4 << 20)
    x.close()
    # A closed tensor's storage is freed by a cleanup after a collection
    # (views, graphs or exports may still hold it); empty_cache collects.
    deadline = time.monotonic() + 5
    while wt.cuda.memory_allocated() != before and time.monotonic() < deadline:
        wt.cuda.empty_cache()
        time.sleep(0.01)
    assert wt.cuda.memory_allocated() == before
    wt.cuda.empty_cache()
    assert wt.cuda.memory_reserved() <= wt.cuda.memory_allocated() + (1 << 20)
    props = wt.cuda.get_device_properties()
    assert props["cuda"]["ComputeCapability"] and props["device_total_bytes"] > 0


@need_cuda
def test_tf32_is_off_by_default_and_switchable():
    assert wt.cuda.get_device_properties()["allow_tf32"] is False
    wt.cuda.set_allow_tf32(True)
    try:
        assert wt.cuda.get_device_properties()["allow_tf32"] is True
    finally:
        wt.cuda.set_allow_tf32(False)
