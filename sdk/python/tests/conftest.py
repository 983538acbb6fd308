"""Shared fixtures: every test module imports the installed webtensor (or the
source tree with $WEBTENSOR_LIBRARY set)."""

import gc

import pytest

import webtensor as wt


@pytest.fixture
def no_leaks():
    """Fails the test when it leaves native tensors alive."""
    gc.collect()
    before = wt.live_tensors()
    yield
    gc.collect()
    assert wt.live_tensors() == before, f"{wt.live_tensors() - before} tensors leaked"
