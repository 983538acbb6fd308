"""Training through the library (abi/optim.go, abi/train.go): RMSprop and
Adagrad against torch.optim step by step, the lr_scheduler schedules against
torch's, gradient clipping against torch.nn.utils, an optimizer that
outlives a Module.to, and state dicts through the one checker."""

import os

import numpy as np
import pytest

import webtensor as wt
from conftest import OPTIM_X as X
from conftest import OPTIM_Y as Y
from conftest import check_steps_match_torch
from conftest import optim_models as models
from webtensor import nn
from webtensor.nn import functional as F

os.environ.setdefault("NODEVICE_SELECT", "1")

torch = pytest.importorskip("torch")

CASES = {
    "rmsprop": (wt.optim.RMSprop, torch.optim.RMSprop, dict(lr=0.01)),
    "rmsprop_centered_momentum": (wt.optim.RMSprop, torch.optim.RMSprop,
                                  dict(lr=0.01, alpha=0.9, momentum=0.9, centered=True, weight_decay=0.1)),
    "adagrad": (wt.optim.Adagrad, torch.optim.Adagrad, dict(lr=0.1)),
    "adagrad_decay_maximize": (wt.optim.Adagrad, torch.optim.Adagrad,
                               dict(lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.5,
                                    maximize=True)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_steps_match_torch(case, no_leaks):
    check_steps_match_torch(*CASES[case], state_atol=1e-5)


def test_defaults_are_torchs():
    p = [nn.Parameter(wt.ones(2))]
    tp = [torch.nn.Parameter(torch.ones(2))]
    for ours, theirs in ((wt.optim.RMSprop, torch.optim.RMSprop), (wt.optim.Adagrad, torch.optim.Adagrad)):
        for k, v in ours(p).defaults.items():
            assert theirs(tp).defaults[k] == v, (ours.__name__, k)


SCHEDULES = {
    "StepLR": (dict(step_size=3, gamma=0.5), 10),
    "MultiStepLR": (dict(milestones=[2, 5], gamma=0.5), 8),
    "ExponentialLR": (dict(gamma=0.9), 6),
    "CosineAnnealingLR": (dict(T_max=10, eta_min=0.001), 14),
    "LinearLR": (dict(start_factor=0.5, end_factor=0.1, total_iters=4), 7),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_match_torch(name, no_leaks):
    kw, n = SCHEDULES[name]
    p = nn.Parameter(wt.zeros(1))
    tp = torch.nn.Parameter(torch.zeros(1))
    opt, topt = wt.optim.SGD([p], lr=0.1), torch.optim.SGD([tp], lr=0.1)
    sched = getattr(wt.optim.lr_scheduler, name)(opt, **kw)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kw)
    for _ in range(n):
        assert sched.get_last_lr()[0] == pytest.approx(tsched.get_last_lr()[0], rel=1e-12, abs=1e-15)
        assert opt.param_groups[0]["lr"] == sched.get_last_lr()[0]
        opt.step()
        topt.step()
        sched.step()
        tsched.step()
    assert sched.last_epoch == n


def test_a_schedule_drives_the_update(no_leaks):
    p = nn.Parameter(wt.tensor([1.0]))
    opt = wt.optim.SGD([p], lr=1.0)
    sched = wt.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for want in (0.0, -0.5, -0.75):
        opt.zero_grad()
        (p * 1.0).sum().backward()
        opt.step()
        sched.step()
        assert p.item() == pytest.approx(want)
    with pytest.raises(ValueError, match="step size"):
        wt.optim.lr_scheduler.StepLR(opt, step_size=0)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type, no_leaks):
    g1 = np.array([3, -4, 1.5], np.float32)
    g2 = np.array([[0.5, 2], [-1, 0.25]], np.float32)
    a, b = nn.Parameter(wt.zeros(3)), nn.Parameter(wt.zeros(2, 2))
    ta, tb = torch.nn.Parameter(torch.zeros(3)), torch.nn.Parameter(torch.zeros(2, 2))
    (a * wt.tensor(g1)).sum().backward()
    (b * wt.tensor(g2)).sum().backward()
    ta.grad, tb.grad = torch.tensor(g1), torch.tensor(g2)
    total = nn.utils.clip_grad_norm_([a, b], 1.0, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_([ta, tb], 1.0, norm_type=norm_type)
    assert isinstance(total, wt.Tensor) and total.shape == ()
    np.testing.assert_allclose(total.numpy(), ttotal.numpy(), rtol=1e-6)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
    nn.utils.clip_grad_value_(a, 0.5)
    torch.nn.utils.clip_grad_value_(ta, 0.5)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    with pytest.raises(ValueError, match="max norm"):
        nn.utils.clip_grad_norm_([a], -1.0)


def test_optimizer_follows_a_module_moved_after_it_was_made(no_leaks):
    """Module.to gives the parameters new handles; the next step makes the
    library optimiser afresh over them, with the state it had."""
    m, _ = models()
    opt = wt.optim.Adam(m.parameters(), lr=0.01)
    x, y = wt.tensor(X), wt.tensor(Y)
    F.cross_entropy(m(x), y).backward()
    opt.step()
    m.double()
    m.float()
    opt.zero_grad()
    F.cross_entropy(m(x), y).backward()
    opt.step()
    assert all(s["step"] == 2 for s in opt.state.values())


def test_bad_settings_say_what_is_wrong():
    p = [nn.Parameter(wt.ones(2))]
    with pytest.raises(ValueError, match="RMSprop: invalid alpha: -1"):
        wt.optim.RMSprop(p, alpha=-1)
    with pytest.raises(ValueError, match="Adagrad: invalid lr decay: -0.5"):
        wt.optim.Adagrad(p, lr_decay=-0.5)
    opt = wt.optim.SGD(p, lr=0.1)
    opt.param_groups[0]["lr"] = -1.0
    with pytest.raises(ValueError, match="SGD: invalid learning rate: -1"):
        opt.step()
