"""wt.nn: layers against torch.nn with the same weights, initialisation against
the Go nn package (testdata/go_ref.safetensors), the Module API, state dicts
and safetensors checkpoints shared with torch and Go."""

import gc
import os
from pathlib import Path

import numpy as np
import pytest

import webtensor as wt
from conftest import webgpu_or_none
from webtensor import nn
from webtensor.nn import functional as F

os.environ.setdefault("NODEVICE_SELECT", "1")

torch = pytest.importorskip("torch")
GO_REF = Path(__file__).parent / "testdata" / "go_ref.safetensors"
WEBGPU = webgpu_or_none()
needs_webgpu = pytest.mark.skipif(
    WEBGPU is None, reason="no WebGPU adapter here (install a Vulkan driver, e.g. mesa-vulkan-drivers)"
)


def rng(seed=0):
    return np.random.default_rng(seed)


def to_torch(module: nn.Module, tmod):
    """Copy module's state into the torch module tmod (the names must match torch's)."""
    tmod.load_state_dict({k: torch.from_numpy(np.array(v.numpy())) for k, v in module.state_dict().items()})
    return tmod


def check_forward_backward(m, tm, *inputs, grad_inputs=(0,), atol=2e-5, out=lambda y: y):
    """m(*inputs) and its gradients (of sum(y·probe)) against torch's tm."""
    wx = [wt.tensor(a, requires_grad=(i in grad_inputs)) for i, a in enumerate(inputs)]
    tx = [torch.tensor(a, requires_grad=(i in grad_inputs)) for i, a in enumerate(inputs)]
    y, ty = out(m(*wx)), out(tm(*tx))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-5, atol=atol)
    probe = rng(99).standard_normal(ty.shape).astype(np.float32)
    (y * wt.tensor(probe)).sum().backward()
    (ty * torch.tensor(probe)).sum().backward()
    for name, p in m.named_parameters():
        tp = dict(tm.named_parameters())[name]
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=atol * 10, err_msg=name)
    for i in grad_inputs:
        np.testing.assert_allclose(wx[i].grad.numpy(), tx[i].grad.numpy(), rtol=1e-4, atol=atol * 10)


# ---- layers against torch -----------------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(no_leaks, bias):
    m = nn.Linear(4, 3, bias=bias)
    tm = to_torch(m, torch.nn.Linear(4, 3, bias=bias))
    check_forward_backward(m, tm, rng(1).standard_normal((2, 5, 4), dtype=np.float32))


@pytest.mark.parametrize("kw", [
    dict(kernel_size=3),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
    dict(kernel_size=3, padding="same", groups=3, bias=False),
])
def test_conv2d_matches_torch(no_leaks, kw):
    m = nn.Conv2d(3, 6, **kw)
    tm = to_torch(m, torch.nn.Conv2d(3, 6, **kw))
    check_forward_backward(m, tm, rng(2).standard_normal((2, 3, 7, 8), dtype=np.float32))


def test_conv1d_matches_torch(no_leaks):
    m = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2)
    tm = to_torch(m, torch.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2))
    check_forward_backward(m, tm, rng(3).standard_normal((2, 4, 9), dtype=np.float32))


@pytest.mark.parametrize("shape,kw", [((6,), {}), ((3, 4), {"eps": 1e-3}), ((4,), {"bias": False})])
def test_layernorm_matches_torch(no_leaks, shape, kw):
    m = nn.LayerNorm(shape, **kw)
    tm = torch.nn.LayerNorm(shape, **kw)
    with torch.no_grad():  # non-trivial affine parameters
        for p in tm.parameters():
            p.copy_(torch.randn_like(p))
    m.load_state_dict(tm.state_dict())
    check_forward_backward(m, tm, rng(4).standard_normal((2, *shape), dtype=np.float32))


def test_embedding_matches_torch(no_leaks):
    m = nn.Embedding(10, 4)
    tm = to_torch(m, torch.nn.Embedding(10, 4))
    idx = np.array([[1, 9, 0], [3, 3, 7]])
    check_forward_backward(m, tm, idx, grad_inputs=())
    grad = m.weight.grad.numpy()
    assert grad[3].any() and not grad[2].any(), "rows not looked up get no gradient"


@pytest.mark.parametrize("make,tmake", [
    (nn.ReLU, torch.nn.ReLU),
    (nn.GELU, torch.nn.GELU),
    (lambda: nn.GELU("tanh"), lambda: torch.nn.GELU("tanh")),
    (nn.SiLU, torch.nn.SiLU),
    (nn.Tanh, torch.nn.Tanh),
    (nn.Sigmoid, torch.nn.Sigmoid),
    (lambda: nn.Softmax(dim=0), lambda: torch.nn.Softmax(dim=0)),
    (nn.Flatten, torch.nn.Flatten),
])
def test_activations_match_torch(no_leaks, make, tmake):
    check_forward_backward(make(), tmake(), rng(5).standard_normal((3, 4, 2), dtype=np.float32))


def test_batchnorm_matches_torch_in_train_and_eval(no_leaks):
    for momentum in (0.1, None):
        m, tm = nn.BatchNorm2d(3, momentum=momentum), torch.nn.BatchNorm2d(3, momentum=momentum)
        m.load_state_dict(tm.state_dict())
        for i in range(3):
            x = (rng(10 + i).standard_normal((4, 3, 2, 2)) + 1.5).astype(np.float32)
            if i == 2:
                m.eval(), tm.eval()
            np.testing.assert_allclose(m(wt.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(), atol=1e-5)
        for k, v in tm.state_dict().items():
            np.testing.assert_allclose(m.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_dropout_trains_and_evaluates(no_leaks):
    d = nn.Dropout(0.25)
    wt.manual_seed(3)
    y = d(wt.ones(2000)).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (y == 0).mean() < 0.3
    d.eval()
    np.testing.assert_array_equal(d(wt.ones(5)).numpy(), np.ones(5))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def mha_pair(batch_first=False, bias=True, e=8, h=2):
    m = nn.MultiheadAttention(e, h, bias=bias, batch_first=batch_first)
    tm = torch.nn.MultiheadAttention(e, h, bias=bias, batch_first=batch_first)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn_like(p) * 0.5)
    m.load_state_dict(tm.state_dict())
    return m, tm


def test_multihead_attention_matches_torch(no_leaks):
    m, tm = mha_pair()
    r = rng(6)
    q, k, v = (r.standard_normal(s, dtype=np.float32) for s in ((5, 2, 8), (6, 2, 8), (6, 2, 8)))
    wq, wk, wv = wt.tensor(q), wt.tensor(k), wt.tensor(v)
    tq, tk, tv = torch.tensor(q), torch.tensor(k), torch.tensor(v)
    out, weights = m(wq, wk, wv)
    tout, tweights = tm(tq, tk, tv)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=2e-5)
    np.testing.assert_allclose(weights.numpy(), tweights.detach().numpy(), atol=2e-5)
    fused, none = m(wq, wk, wv, need_weights=False)
    assert none is None
    np.testing.assert_allclose(fused.numpy(), tout.detach().numpy(), atol=2e-5)
    _, per_head = m(wq, wk, wv, average_attn_weights=False)
    assert per_head.shape == (2, 2, 5, 6)


def test_multihead_attention_masks_and_grads_match_torch(no_leaks):
    m, tm = mha_pair()
    r = rng(7)
    q, k, v = (r.standard_normal(s, dtype=np.float32) for s in ((5, 2, 8), (6, 2, 8), (6, 2, 8)))
    attn_mask = np.zeros((5, 6), dtype=bool)
    attn_mask[0, 2] = attn_mask[3, 5] = True
    kpm = np.zeros((2, 6), dtype=bool)
    kpm[1, 4:] = True

    def run(mod, lib):
        return lambda q, k, v: mod(q, k, v, attn_mask=lib.tensor(attn_mask), key_padding_mask=lib.tensor(kpm),
                                   need_weights=False)[0]

    wx = [wt.tensor(a, requires_grad=True) for a in (q, k, v)]
    tx = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    y, ty = run(m, wt)(*wx), run(tm, torch)(*tx)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), atol=2e-5)
    probe = r.standard_normal(ty.shape).astype(np.float32)
    (y * wt.tensor(probe)).sum().backward()
    (ty * torch.tensor(probe)).sum().backward()
    tparams = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[name].grad.numpy(), atol=2e-4, err_msg=name)
    for a, b in zip(wx, tx, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=2e-4)


def test_multihead_self_attention_batch_first_causal_matches_torch(no_leaks):
    m, tm = mha_pair(batch_first=True, bias=False, h=4)
    x = rng(8).standard_normal((2, 5, 8), dtype=np.float32)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5)
    want = tm(*(torch.tensor(x),) * 3, attn_mask=causal, need_weights=False)[0].detach().numpy()
    wx = wt.tensor(x)
    got, _ = m(wx, wx, wx, need_weights=False, is_causal=True)
    np.testing.assert_allclose(got.numpy(), want, atol=2e-5)
    got, w = m(wx, wx, wx, attn_mask=wt.tensor(causal.numpy()))
    np.testing.assert_allclose(got.numpy(), want, atol=2e-5)
    assert np.all(np.triu(w.numpy()[0], 1) == 0)
    unbatched, _ = m(wx[0], wx[0], wx[0], need_weights=False, is_causal=True)
    np.testing.assert_allclose(unbatched.numpy(), want[0], atol=2e-5)


def test_sequential_model_matches_torch(no_leaks):
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Dropout(0.5), nn.Linear(8, 3)).eval()
    tm = to_torch(m, torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                                         torch.nn.Dropout(0.5), torch.nn.Linear(8, 3))).eval()
    check_forward_backward(m, tm, rng(9).standard_normal((6, 4), dtype=np.float32))


def test_functional_losses_match_torch(no_leaks):
    r = rng(12)
    logits, target = r.standard_normal((5, 3), dtype=np.float32), np.array([0, 2, 1, 1, 0])
    got = F.cross_entropy(wt.tensor(logits), wt.tensor(target), label_smoothing=0.1).item()
    want = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(target), label_smoothing=0.1)
    assert got == pytest.approx(want.item(), rel=1e-6)
    assert nn.CrossEntropyLoss()(wt.tensor(logits), wt.tensor(target)).item() == pytest.approx(
        torch.nn.CrossEntropyLoss()(torch.tensor(logits), torch.tensor(target)).item(), rel=1e-6)
    a, b = r.standard_normal((4, 2), dtype=np.float32), r.standard_normal((4, 2), dtype=np.float32)
    assert nn.MSELoss()(wt.tensor(a), wt.tensor(b)).item() == pytest.approx(((a - b) ** 2).mean(), rel=1e-6)
    np.testing.assert_allclose(F.softmax(wt.tensor(a), dim=0).numpy(),
                               torch.softmax(torch.tensor(a), 0).numpy(), rtol=1e-6)


# ---- initialisation: the Go package's weights for the same seed ------------------------------


def test_initialisation_matches_go_nn_draw_for_draw(no_leaks):
    ref = wt.load(GO_REF)
    wt.manual_seed(7)  # gen_go_ref: core.ManualSeed(7), then the same modules in the same order
    mods = {"linear": nn.Linear(4, 8), "conv": nn.Conv2d(3, 4, 3, padding=1), "ln": nn.LayerNorm(6),
            "emb": nn.Embedding(10, 4), "mha": nn.MultiheadAttention(8, 2), "linear2": nn.Linear(5, 3, bias=False)}
    for name, m in mods.items():
        sd = m.state_dict()
        assert sorted(sd) == sorted(k[len(f"init.{name}."):] for k in ref if k.startswith(f"init.{name}."))
        for k, v in sd.items():
            np.testing.assert_array_equal(v.numpy(), ref[f"init.{name}.{k}"].numpy(), err_msg=f"{name}.{k}")


def test_initialisers_have_torchs_distributions(no_leaks):
    wt.manual_seed(3)
    w = nn.Linear(400, 300).weight.numpy()
    bound = 1 / np.sqrt(400)
    assert -bound <= w.min() < -0.99 * bound and 0.99 * bound < w.max() <= bound
    p = nn.Parameter(wt.zeros(200, 300))
    std = nn.init.kaiming_normal_(p, nonlinearity="relu").numpy().std()
    assert std == pytest.approx(np.sqrt(2 / 300), rel=0.02)
    a = np.sqrt(6 / 500)
    x = nn.init.xavier_uniform_(p).numpy()
    assert x.min() >= -a and x.max() <= a and x.std() == pytest.approx(a / np.sqrt(3), rel=0.02)
    assert p.requires_grad, "an initialiser keeps the parameter trainable"
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(np.sqrt(2 / 1.04))
    np.testing.assert_array_equal(nn.init.constant_(p, 0.5).numpy(), np.full((200, 300), 0.5, np.float32))


# ---- the Module API ---------------------------------------------------------------------------


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)
        self.scale = nn.Parameter(wt.ones(2))
        self.register_buffer("offset", wt.zeros(2))
        self.register_buffer("scratch", wt.zeros(1), persistent=False)

    def forward(self, x):
        return self.head(self.body(x)) * self.scale + self.offset


def test_module_registration_names_and_modes(no_leaks):
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["scale", "body.0.weight", "body.0.bias", "head.weight",
                                                      "head.bias"]
    assert list(net.state_dict()) == ["scale", "offset", "body.0.weight", "body.0.bias", "head.weight", "head.bias"]
    assert [n for n, _ in net.named_buffers()] == ["offset", "scratch"]
    assert [n for n, _ in net.named_children()] == ["body", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "head"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert net.eval() is net and not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    shared = nn.Sequential(net.head, net.head)
    assert len(list(shared.parameters())) == 2 and list(shared.state_dict()) == ["0.weight", "0.bias",
                                                                                 "1.weight", "1.bias"]
    assert "Linear(in_features=3, out_features=4, bias=True)" in repr(net)
    assert net(wt.ones(5, 3)).shape == (5, 2)

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(wt.ones(1))

    with pytest.raises(AttributeError, match="super"):
        Forgot()
    with pytest.raises(TypeError, match="Parameter or None"):
        net.scale = wt.ones(2)
    with pytest.raises(AttributeError):
        _ = net.missing


def test_zero_grad_and_requires_grad(no_leaks):
    net = Net()
    net(wt.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_parameter_wraps_any_array(no_leaks):
    for data in ([1.0, 2.0], np.array([1.0, 2.0], np.float32), torch.tensor([1.0, 2.0]), wt.tensor([1.0, 2.0])):
        p = nn.Parameter(data)
        assert p.requires_grad and p.tolist() == [1.0, 2.0] and isinstance(p, wt.Tensor)
    frozen = nn.Parameter(wt.ones(2), requires_grad=False)
    assert not frozen.requires_grad
    assert repr(p).startswith("Parameter containing:")


def test_state_dict_round_trip(no_leaks):
    wt.manual_seed(1)
    a = Net()
    wt.manual_seed(2)
    b = Net()
    x = wt.tensor(rng(1).standard_normal((4, 3), dtype=np.float32))
    assert not np.allclose(a(x).numpy(), b(x).numpy())
    params = list(b.parameters())
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    assert all(p is q for p, q in zip(params, b.parameters(), strict=True)), "loading keeps the Parameter objects"
    assert all(p.requires_grad for p in b.parameters())


def test_load_state_dict_reports_every_mismatch_and_changes_nothing(no_leaks):
    net = Net()
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    bad = dict(net.state_dict())
    bad["head.weight"] = wt.zeros(3, 4)
    bad["scale"] = wt.zeros(2, dtype=wt.f64)
    del bad["head.bias"]
    bad["extra"] = wt.zeros(1)
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(bad)
    msg = str(e.value)
    for want in ("head.weight: shape [3, 4]", "scale: dtype f64", "missing from state dict: head.bias",
                 "not in module: extra"):
        assert want in msg
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    del bad["head.weight"], bad["scale"]
    res = net.load_state_dict(bad, strict=False)
    assert res.missing_keys == ["scale", "head.weight", "head.bias"] and res.unexpected_keys == ["extra"]


def test_module_to_dtype_and_back(no_leaks):
    net = Net()
    x = wt.ones(2, 3)
    want = net(x).numpy()
    net.to(wt.f64)
    assert all(p.dtype == wt.f64 and p.requires_grad for p in net.parameters())
    np.testing.assert_allclose(net(x.to(wt.f64)).numpy(), want, rtol=1e-6)
    net.float()
    np.testing.assert_allclose(net(x).numpy(), want, rtol=1e-6)


# ---- checkpoints ---------------------------------------------------------------------------------


def torch_net():
    tnet = torch.nn.Module()
    tnet.body = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    tnet.head = torch.nn.Linear(4, 2)
    tnet.scale = torch.nn.Parameter(torch.ones(2))
    tnet.register_buffer("offset", torch.zeros(2))
    return tnet


def test_checkpoint_loads_in_torch(tmp_path, no_leaks):
    st = pytest.importorskip("safetensors.torch")
    from safetensors import safe_open

    net = Net()
    path = tmp_path / "net.safetensors"
    wt.save(net.state_dict(), path)
    tnet = torch_net()
    tnet.load_state_dict(st.load_file(str(path)))  # strict: same names, shapes, dtypes
    with safe_open(str(path), framework="pt") as f:
        assert f.metadata() == {"format": "pt"}
    x = rng(2).standard_normal((3, 3), dtype=np.float32)
    want = tnet.head(tnet.body(torch.tensor(x))) * tnet.scale + tnet.offset
    np.testing.assert_allclose(net(wt.tensor(x)).numpy(), want.detach().numpy(), rtol=1e-6)


def test_torch_checkpoint_loads_here(tmp_path, no_leaks):
    st = pytest.importorskip("safetensors.torch")
    tnet = torch_net()
    with torch.no_grad():
        tnet.offset.fill_(0.25)
    sd = {k: v.contiguous() for k, v in tnet.state_dict().items()}
    sd["counter"] = torch.tensor(7, dtype=torch.int64)
    sd["half"] = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    path = tmp_path / "torch.safetensors"
    st.save_file(sd, str(path))
    loaded = wt.load(path)
    assert loaded["counter"].dtype == wt.i64 and loaded["counter"].shape == () and loaded["counter"].item() == 7
    assert loaded["half"].dtype == wt.bf16 and loaded["half"].to(wt.f32).tolist() == [[0, 1, 2], [3, 4, 5]]
    net = Net()
    net.load_state_dict({k: v for k, v in loaded.items() if k not in ("counter", "half")})
    x = rng(3).standard_normal((3, 3), dtype=np.float32)
    want = tnet.head(tnet.body(torch.tensor(x))) * tnet.scale + tnet.offset
    np.testing.assert_allclose(net(wt.tensor(x)).numpy(), want.detach().numpy(), rtol=1e-6)
    net.load_state_dict(tnet.state_dict())  # torch tensors directly, too


def test_checkpoint_bytes_match_go_nn_save(tmp_path, no_leaks):
    # go_ref.safetensors was written by Go's safetensors.WriteFile (as nn.Save does):
    # the same tensors saved here give the same bytes.
    path = tmp_path / "again.safetensors"
    wt.save(wt.load(GO_REF), path)
    assert path.read_bytes() == GO_REF.read_bytes()


def test_save_module_directly_and_load_to_device(tmp_path, no_leaks):
    net = Net()
    wt.save(net, tmp_path / "m.safetensors", metadata={"epoch": "3"})
    from webtensor._serialize import load_metadata

    assert load_metadata(tmp_path / "m.safetensors") == {"epoch": "3"}
    sd = wt.load(tmp_path / "m.safetensors", device="cpu")
    assert list(sd) == sorted(net.state_dict())  # file order: names sorted, as Go and safetensors write
    with pytest.raises(ValueError, match="truncated or not safetensors"):
        (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
        wt.load(tmp_path / "bad.safetensors")


def test_modules_survive_a_scope(no_leaks):
    with wt.scope():
        net = Net()
    assert net(wt.ones(1, 3)).shape == (1, 2)
    del net
    gc.collect()


# ---- WebGPU ---------------------------------------------------------------------------------------


@needs_webgpu
def test_model_on_webgpu_matches_cpu(no_leaks):
    wt.manual_seed(5)
    cpu = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    wt.manual_seed(5)
    gpu = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3)).to(WEBGPU)
    assert all(p.device == WEBGPU and p.requires_grad for p in gpu.parameters())
    x = rng(4).standard_normal((5, 4), dtype=np.float32)
    y = gpu(wt.tensor(x, device=WEBGPU))
    assert y.device == WEBGPU
    np.testing.assert_allclose(y.numpy(), cpu(wt.tensor(x)).numpy(), rtol=1e-5, atol=1e-5)
    y.sum().backward()
    assert gpu[0].weight.grad.device == WEBGPU
    gpu.to("cpu")
    assert gpu[0].weight.device == "cpu" and gpu[0].weight.grad.device == "cpu", "to() moves gradients too"
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    q = rng(5).standard_normal((2, 3, 8), dtype=np.float32)
    want = mha(wt.tensor(q), wt.tensor(q), wt.tensor(q), need_weights=False)[0].numpy()
    mha.to(WEBGPU)
    gq = wt.tensor(q, device=WEBGPU)
    np.testing.assert_allclose(mha(gq, gq, gq, need_weights=False)[0].numpy(), want, rtol=1e-5, atol=1e-5)
