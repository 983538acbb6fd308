"""Shared fixtures: every test module imports the installed webtensor (or the
source tree with $WEBTENSOR_LIBRARY set)."""

import gc

import pytest

import webtensor as wt

try:
    # torch.optim imports torch._dynamo, whose Triton probe (torch.utils._triton.has_triton,
    # which loads the CUDA driver) segfaults once the WebGPU backend has started the Vulkan
    # loader (wt.devices()). Importing it first, before any test module asks for devices,
    # runs the probe while it is still safe; it is cached afterwards.
    import torch._dynamo  # noqa: F401
except ImportError:
    pass


@pytest.fixture
def no_leaks():
    """Fails the test when it leaves native tensors alive."""
    gc.collect()
    before = wt.live_tensors()
    yield
    gc.collect()
    assert wt.live_tensors() == before, f"{wt.live_tensors() - before} tensors leaked"
