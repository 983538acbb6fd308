"""The WebGPU device through the Python SDK: the same API, values that match
the CPU, copies in and out (DLPack shares only CPU memory), clear errors."""

import os

import numpy as np
import pytest

import webtensor as wt

os.environ.setdefault("NODEVICE_SELECT", "1")

pytestmark = pytest.mark.skipif(
    not any(d.startswith("webgpu") for d in wt.devices()),
    reason="no WebGPU adapter here (install a Vulkan driver, e.g. mesa-vulkan-drivers)",
)


def test_ops_on_webgpu_match_cpu(no_leaks):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 7), dtype=np.float32)
    b = rng.standard_normal((7, 3), dtype=np.float32)
    with wt.scope():
        ga, gb = wt.tensor(a, device="webgpu"), wt.tensor(b, device="webgpu")
        assert ga.device.startswith("webgpu")
        out = ((ga @ gb).relu() - 0.5).softmax(axis=-1)
        want = np.exp(np.maximum(a @ b, 0) - 0.5)
        want /= want.sum(axis=-1, keepdims=True)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(out.to("cpu")), want, rtol=1e-5, atol=1e-6)


def test_autograd_on_webgpu(no_leaks):
    with wt.scope():
        x = wt.tensor(np.array([[1.0, -2.0], [3.0, 0.5]], dtype=np.float32), device="webgpu")
        x.requires_grad = True
        (x * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def test_f64_is_refused_with_a_hint():
    with pytest.raises(ValueError, match="cast to f32"):
        wt.tensor(np.ones(3), device="webgpu")
