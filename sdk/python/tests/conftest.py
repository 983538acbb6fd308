"""Shared fixtures: every test module imports the installed webtensor (or the
source tree with $WEBTENSOR_LIBRARY set)."""

from __future__ import annotations

import gc

import pytest

import webtensor as wt


# core.NoDeviceText: the library's message for a device this machine has not
# at all (no adapter, no driver). Any other failure to open is a fault.
NO_DEVICE = "no such device on this machine"


def webgpu_or_none() -> str | None:
    """The WebGPU device ("webgpu:0") when it opens here, None when the
    machine has no adapter (the GPU tests skip); an adapter whose backend
    does not open raises, so the tests that ask fail instead of skipping."""
    found = [d for d in wt.devices() if d.startswith("webgpu")]
    if found:
        return found[0]
    try:
        wt.synchronize("webgpu")
    except wt.UnsupportedError as e:
        if NO_DEVICE in str(e):
            return None
        raise RuntimeError(f"a WebGPU adapter exists but the backend did not open: {e}") from e
    raise RuntimeError("webgpu opens but wt.devices() does not list it")


@pytest.fixture
def no_leaks():
    """Fails the test when it leaves native tensors alive."""
    gc.collect()
    before = wt.live_tensors()
    yield
    gc.collect()
    assert wt.live_tensors() == before, f"{wt.live_tensors() - before} tensors leaked"
