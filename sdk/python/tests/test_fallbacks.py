"""wt.fallbacks(): op calls that ran on the CPU instead of their device, and
device kernels that did declared host-side work, counted per device and op."""

import os
from pathlib import Path

import numpy as np
import pytest

import webtensor as wt
from conftest import webgpu_or_none

os.environ.setdefault("NODEVICE_SELECT", "1")

ROOT = Path(__file__).resolve().parents[3]
GOSWISH = ROOT / "build" / "plugins" / "goswish.wasm"


def test_reset_reads_then_clears():
    wt.fallbacks(reset=True)
    assert wt.fallbacks() == []
    (wt.tensor(np.ones(3, np.float32)) * 2).numpy()  # the CPU does no fallbacks
    assert wt.fallbacks(reset=True) == []


@pytest.mark.skipif(not GOSWISH.exists(), reason="run `make plugins` to build build/plugins/goswish.wasm")
def test_cpu_fallbacks_and_host_work_on_webgpu(no_leaks):
    if webgpu_or_none() is None:
        pytest.skip("no WebGPU adapter here")
    p = wt.load_plugin(GOSWISH)
    wt.fallbacks(reset=True)
    with wt.scope():
        x = wt.tensor(np.arange(4, dtype=np.float32).reshape(2, 2), device="webgpu")
        y = p.swish(x)  # no WGSL in this plugin: it runs on the CPU behind the GPU
        assert y.device == "webgpu:0"
        z = wt.segment_sum(x, wt.tensor(np.array([1, 0]), device="webgpu"), num_segments=2)
        np.testing.assert_allclose(z.numpy(), [[2, 3], [0, 1]])
        wt.index_select(x, wt.tensor(np.array([1, 0]), device="webgpu"), axis=0).numpy()
    fb = {(f["op"], f["kind"]): f for f in wt.fallbacks(reset=True)}
    assert set(fb) == {("goswish.swish", "cpu"), ("segment_sum", "host")}, fb
    assert fb["goswish.swish", "cpu"]["count"] == 1 and fb["goswish.swish", "cpu"]["device"] == "webgpu:0"
    host = fb["segment_sum", "host"]
    assert host["count"] == 1 and "segment_ids" in host["reason"]
    assert wt.fallbacks() == []
