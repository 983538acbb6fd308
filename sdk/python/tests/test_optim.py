"""wt.optim: SGD, Adam and AdamW against torch.optim with the same weights and
gradients, against the Go nn package (testdata/go_ref.safetensors), training,
in-place parameter updates, state and devices."""

import os
from pathlib import Path

import numpy as np
import pytest

import webtensor as wt
from conftest import OPTIM_X as X
from conftest import OPTIM_Y as Y
from conftest import check_steps_match_torch, webgpu_or_none
from conftest import optim_models as models
from webtensor import nn
from webtensor.nn import functional as F

os.environ.setdefault("NODEVICE_SELECT", "1")

torch = pytest.importorskip("torch")
GO_REF = Path(__file__).parent / "testdata" / "go_ref.safetensors"
WEBGPU = webgpu_or_none()

CASES = {
    "sgd": (wt.optim.SGD, torch.optim.SGD, dict(lr=0.1)),
    "sgd_momentum_wd": (wt.optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    "sgd_nesterov": (wt.optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    "sgd_dampening_maximize": (wt.optim.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.1,
                                                                   maximize=True)),
    "adam": (wt.optim.Adam, torch.optim.Adam, dict(lr=0.01)),
    "adam_wd_amsgrad": (wt.optim.Adam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    "adamw": (wt.optim.AdamW, torch.optim.AdamW, dict(lr=0.01)),
    "adamw_betas_maximize": (wt.optim.AdamW, torch.optim.AdamW, dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6,
                                                                     weight_decay=0.1, maximize=True)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_steps_match_torch(case, no_leaks):
    check_steps_match_torch(*CASES[case], state_atol=1e-7)


def test_steps_match_go_nn_exactly(no_leaks):
    ref = wt.load(GO_REF)  # written by testdata/gen_go_ref with the Go optimizers
    make = {
        "sgd": lambda p: wt.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
        "sgd_dampening": lambda p: wt.optim.SGD(p, lr=0.05, momentum=0.5, dampening=0.1),
        "adam": lambda p: wt.optim.Adam(p, lr=0.01, weight_decay=0.01, amsgrad=True),
        "adamw": lambda p: wt.optim.AdamW(p, lr=0.01),
    }
    x, y = wt.tensor(X), wt.tensor(Y)
    for name, mk in make.items():
        m, _ = models(11)
        opt = mk(m.parameters())
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            losses.append(loss.item())
            loss.backward()
            opt.step()
        np.testing.assert_array_equal(np.float32(losses), ref[f"{name}.losses"].numpy(), err_msg=name)
        for k, v in m.state_dict().items():
            np.testing.assert_array_equal(v.numpy(), ref[f"{name}.{k}"].numpy(), err_msg=f"{name}.{k}")


def blobs(n=64, seed=0):
    r = np.random.default_rng(seed)
    centers = np.array([[2, 0], [-2, 1], [0, -2]], np.float32)
    y = r.integers(0, 3, n)
    return (centers[y] + r.standard_normal((n, 2)).astype(np.float32) * 0.5), y


@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW"])
def test_training_for_20_steps_lowers_the_loss(opt_name, no_leaks):
    wt.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
    kw = {"lr": 0.1, "momentum": 0.9} if opt_name == "SGD" else {"lr": 0.05}
    opt = getattr(wt.optim, opt_name)(model.parameters(), **kw)
    xs, ys = blobs()
    x, y = wt.tensor(xs), wt.tensor(ys)
    losses = []
    for _ in range(20):
        with wt.scope():  # a training loop's temporaries freed each step; the model and optimizer state stay
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses
    acc = (model(x).argmax(axis=1).numpy() == ys).mean()
    assert acc > 0.9


def test_parameters_update_in_place_and_keep_their_gradient(no_leaks):
    lin = nn.Linear(3, 2)
    w = lin.weight
    opt = wt.optim.SGD(lin.parameters(), lr=0.5)
    before = w.numpy().copy()
    lin(wt.ones(4, 3)).sum().backward()
    g = w.grad.numpy().copy()
    opt.step()
    assert lin.weight is w and w.requires_grad and isinstance(w, nn.Parameter)
    np.testing.assert_allclose(w.numpy(), before - 0.5 * g, rtol=1e-6)
    np.testing.assert_array_equal(w.grad.numpy(), g)  # as torch, step() leaves p.grad alone
    lin(wt.ones(4, 3)).sum().backward()  # and it keeps accumulating
    np.testing.assert_allclose(w.grad.numpy(), 2 * g, rtol=1e-6)
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no gradients: nothing moves
    np.testing.assert_allclose(w.numpy(), before - 0.5 * g, rtol=1e-6)


def test_param_groups_and_frozen_parameters(no_leaks):
    m, _ = models()
    opt = wt.optim.SGD([{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.0}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.0]
    last = m[2].weight.numpy().copy()
    first = m[0].weight.numpy().copy()
    F.cross_entropy(m(wt.tensor(X)), wt.tensor(Y)).backward()
    opt.step()
    np.testing.assert_array_equal(m[2].weight.numpy(), last)
    assert not np.array_equal(m[0].weight.numpy(), first)
    opt.param_groups[1]["lr"] = 0.1  # schedules change lr like this
    opt.step()
    assert not np.array_equal(m[2].weight.numpy(), last)


def test_invalid_settings_are_refused():
    p = [nn.Parameter(wt.ones(2))]
    with pytest.raises(ValueError, match="learning rate"):
        wt.optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        wt.optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta"):
        wt.optim.Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty"):
        wt.optim.AdamW([])
    with pytest.raises(ValueError, match="twice"):
        wt.optim.Adam(p + p)
    with pytest.raises(ValueError, match="gradient"):
        wt.optim.SGD([wt.ones(2)])


def test_defaults_are_torchs():
    p = [nn.Parameter(wt.ones(2))]
    tp = [torch.nn.Parameter(torch.ones(2))]
    for ours, theirs in ((wt.optim.SGD, torch.optim.SGD), (wt.optim.Adam, torch.optim.Adam),
                         (wt.optim.AdamW, torch.optim.AdamW)):
        mine, ref = ours(p).defaults, theirs(tp).defaults
        for k, v in mine.items():
            assert ref[k] == v, (ours.__name__, k)


def test_optimizer_state_dict_round_trip(no_leaks):
    m, _ = models()
    opt = wt.optim.Adam(m.parameters(), lr=0.01)
    x, y = wt.tensor(X), wt.tensor(Y)
    for _ in range(2):
        opt.zero_grad()
        F.cross_entropy(m(x), y).backward()
        opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1, 2, 3] and sd["state"][0]["step"] == 2
    m2, _ = models()
    m2.load_state_dict(m.state_dict())
    opt2 = wt.optim.Adam(m2.parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.01
    for mod, o in ((m, opt), (m2, opt2)):
        o.zero_grad()
        F.cross_entropy(mod(x), y).backward()
        o.step()
    for a, b in zip(m.parameters(), m2.parameters(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.skipif(WEBGPU is None, reason="no WebGPU adapter here (install a Vulkan driver, e.g. mesa-vulkan-drivers)")
@pytest.mark.parametrize("case", ["sgd_nesterov", "adam_wd_amsgrad", "adamw"])
def test_steps_on_webgpu_match_cpu(case, no_leaks):
    ours, _, kw = CASES[case]
    results = []
    for device in ("cpu", WEBGPU):
        m, _ = models(device=device)
        opt = ours(m.parameters(), **kw)
        x, y = wt.tensor(X, device=device), wt.tensor(Y, device=device)
        for _ in range(3):
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
        assert all(p.device == device for p in m.parameters())
        assert all(v.device == device for s in opt.state.values() for v in s.values() if isinstance(v, wt.Tensor))
        results.append([p.numpy() for p in m.parameters()])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
