"""Shared fixtures: every test module imports the installed webtensor (or the
source tree with $WEBTENSOR_LIBRARY set)."""

from __future__ import annotations

import gc

import numpy as np
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


@pytest.fixture(params=["cpu", "webgpu"])
def api_device(request):
    """The array API property suites (test_props_*.py) run each property on
    the CPU and on WebGPU, skipped only where the machine has no adapter."""
    if request.param == "cpu":
        return "cpu"
    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine")
    return dev


@pytest.fixture
def no_leaks():
    """Fails the test when it leaves native tensors alive."""
    gc.collect()
    before = wt.live_tensors()
    yield
    gc.collect()
    assert wt.live_tensors() == before, f"{wt.live_tensors() - before} tensors leaked"


# ---- the optimizer tests' model and batch (test_optim.py, test_training.py) ----
# One copy, so that every optimizer is checked against torch the same way.

OPTIM_X = np.array([0.5, -1, 2, 0, 1, 1, -0.5, 0.25, -2, 0.3, 0.7, 1.5], np.float32).reshape(3, 4)
OPTIM_Y = np.array([2, 0, 1])


def optim_models(seed=11, device=None):
    """A small MLP seeded with `seed` (moved to `device` when given) and the
    torch MLP holding the same weights. The caller has importorskip'd torch."""
    import torch

    from webtensor import nn

    wt.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    if device:
        m.to(device)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    tm.load_state_dict({k: torch.from_numpy(np.array(v.numpy())) for k, v in m.state_dict().items()})
    return m, tm


def check_steps_match_torch(ours, theirs, kw, state_atol):
    """Four steps of optimizer `ours` and torch's `theirs` with settings `kw`
    on the same model and batch: the parameters after each step, then the
    state under torch's names (within `state_atol`), must agree."""
    import torch

    from webtensor.nn import functional as F

    m, tm = optim_models()
    opt, topt = ours(m.parameters(), **kw), theirs(tm.parameters(), **kw, foreach=False)
    x, y = wt.tensor(OPTIM_X), wt.tensor(OPTIM_Y)
    tx, ty = torch.tensor(OPTIM_X), torch.tensor(OPTIM_Y)
    for _ in range(4):
        opt.zero_grad()
        topt.zero_grad()
        F.cross_entropy(m(x), y).backward()
        torch.nn.functional.cross_entropy(tm(tx), ty).backward()
        opt.step()
        topt.step()
        for (name, p), tp in zip(m.named_parameters(), tm.parameters(), strict=True):
            np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    for p, tp in zip(m.parameters(), tm.parameters(), strict=True):
        for k, v in topt.state[tp].items():
            if k == "step":
                assert opt.state[p][k] == int(v)
            else:
                np.testing.assert_allclose(opt.state[p][k].numpy(), v.numpy(), rtol=1e-5, atol=state_atol, err_msg=k)
