"""complex64 and complex128 (issue 24): construction from Python and NumPy,
arithmetic and the elementwise functions against NumPy, reductions and
matmul, layout ops, the array API's dtype functions, DLPack and NumPy
interop, PyTorch's gradients, safetensors, and the same calls on WebGPU
(complex64 only: WGSL has no f64) when this machine has an adapter.
"""

import numpy as np
import pytest
import torch

import webtensor as wt
from conftest import webgpu_or_none

R = np.random.default_rng(64)


def crand(*shape, dtype=np.complex128):
    return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)


def tol(dtype):
    return 1e-12 if np.dtype(dtype) == np.complex128 else 3e-5


def close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol(dtype), atol=tol(dtype))


def devices():
    gpu = webgpu_or_none()
    return ["cpu"] + ([gpu] if gpu else [])


def dtypes_on(device):
    return [np.complex64] if device.startswith("webgpu") else [np.complex64, np.complex128]


CASES = [(d, t) for d in devices() for t in dtypes_on(d)]
IDS = [f"{d}-{np.dtype(t).name}" for d, t in CASES]


def test_dtypes_and_construction():
    assert wt.complex64 is wt.c64 and wt.complex128 is wt.c128
    assert wt.tensor(1 + 2j).dtype == wt.c64  # Python complex numbers become c64, as floats f32
    assert wt.tensor(np.array([1j])).dtype == wt.c128
    assert wt.tensor([1.0, 2.0], dtype=wt.complex64).tolist() == [1 + 0j, 2 + 0j]
    z = wt.tensor(np.array([[1 + 2j, 3 - 4j]], dtype=np.complex64))
    assert z.shape == (1, 2) and z.item if z.numel() > 1 else True
    assert complex(wt.tensor(3 - 1j)) == 3 - 1j
    assert wt.zeros((2,), dtype=wt.c128).numpy().dtype == np.complex128
    assert wt.ones((2,), dtype="complex64").tolist() == [1 + 0j, 1 + 0j]
    np.testing.assert_array_equal(wt.full((2,), 2.5, dtype=wt.c64).numpy(), np.full(2, 2.5, np.complex64))


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
def test_arithmetic_matches_numpy(device, dtype):
    a, b = crand(3, 4, dtype=dtype), crand(4, dtype=dtype)
    x, y = wt.tensor(a, device=device), wt.tensor(b, device=device)
    close((x + y).numpy(), a + b, dtype)
    close((x - y).numpy(), a - b, dtype)
    close((x * y).numpy(), a * b, dtype)
    close((x / y).numpy(), a / b, dtype)
    close((-x).numpy(), -a, dtype)
    close((x * 2.5).numpy(), a * 2.5, dtype)
    close((x + 1j).numpy(), a + 1j, dtype)
    close((x**y).numpy(), a**b, dtype)
    r = R.standard_normal(4).astype(np.float32)
    close((x * wt.tensor(r, device=device)).numpy(), a * r, dtype)
    assert (x == x).numpy().all() and not (x != x).numpy().any()


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "expm1", "log1p", "log2", "log10",
         "square", "reciprocal", "conj"]
INVERSE = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
           "atanh": np.arctanh}


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
def test_elementwise_functions_match_numpy(device, dtype):
    a = crand(16, dtype=dtype)
    x = wt.tensor(a, device=device)
    for name in UNARY:
        close(getattr(wt, name)(x).numpy(), getattr(np, name)(a), dtype)
    for name, ref in INVERSE.items():
        close(getattr(wt, name)(x).numpy(), ref(a), dtype)
    close(abs(x).numpy(), np.abs(a), dtype)
    close(wt.angle(x).numpy(), np.angle(a), dtype)
    close(wt.real(x).numpy(), a.real, dtype)
    close(x.imag.numpy(), a.imag, dtype)
    close(wt.sign(x).numpy(), a / np.abs(a), dtype)


def test_branch_cuts_follow_numpy():
    """Values on the cuts, with signed zeros: NumPy follows C99."""
    a = np.array([2 + 0j, 2 - 0j, -2 + 0j, complex(-2, -0.0), 1.25j, -1.25j, complex(0.0, -1.25), complex(-0.0, 1.25)])
    x = wt.tensor(a)
    for name, ref in {**INVERSE, "sqrt": np.sqrt, "log": np.log}.items():
        close(getattr(wt, name)(x).numpy(), ref(a), np.complex128)


def test_special_values():
    a = np.array([complex(np.nan, 1), complex(1, np.inf), complex(0, 0), complex(-np.inf, 0)])
    x = wt.tensor(a)
    np.testing.assert_array_equal(wt.isnan(x).numpy(), np.isnan(a))
    np.testing.assert_array_equal(wt.isinf(x).numpy(), np.isinf(a))
    np.testing.assert_array_equal(wt.isfinite(x).numpy(), np.isfinite(a))


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
def test_reductions_matmul_and_layout(device, dtype):
    a, b = crand(2, 3, 4, dtype=dtype), crand(4, 5, dtype=dtype)
    x, y = wt.tensor(a, device=device), wt.tensor(b, device=device)
    close(wt.sum(x).numpy(), a.sum(), dtype)
    close(wt.sum(x, axis=-1).numpy(), a.sum(-1), dtype)
    close(wt.mean(x, axis=(0, 2)).numpy(), a.mean((0, 2)), dtype)
    close((x @ y).numpy(), a @ b, dtype)
    close(wt.vecdot(x, x).numpy(), np.vecdot(a, a), dtype)  # conjugates the first argument
    close(wt.concat([x, x], axis=-1).numpy(), np.concatenate([a, a], -1), dtype)
    close(wt.stack([x, x], axis=-1).numpy(), np.stack([a, a], -1), dtype)
    close(wt.flip(x, axis=1).numpy(), np.flip(a, 1), dtype)
    close(wt.roll(x, 2).numpy(), np.roll(a, 2), dtype)
    close(wt.permute_dims(x, (2, 0, 1)).numpy(), a.transpose(2, 0, 1), dtype)
    close(x[1, ::2, 1:].numpy(), a[1, ::2, 1:], dtype)
    close(x.reshape((6, 4)).numpy(), a.reshape(6, 4), dtype)
    m = a.real > 0
    close(wt.where(wt.tensor(m, device=device), x, 0).numpy(), np.where(m, a, 0), dtype)
    close(wt.take(x.reshape(-1), wt.tensor([0, 5, 7], device=device)).numpy(), a.reshape(-1)[[0, 5, 7]], dtype)


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
def test_gradients_match_torch(device, dtype):
    a = crand(5, dtype=dtype)
    x = wt.tensor(a, device=device, requires_grad=True)
    loss = wt.sum(wt.abs(wt.exp(x) * wt.conj(x) + x * x) ** 2)
    loss.backward()
    t = torch.tensor(a, requires_grad=True)
    (torch.abs(torch.exp(t) * torch.conj(t) + t * t) ** 2).sum().backward()
    close(x.grad.numpy(), t.grad.numpy(), dtype)


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
def test_products_and_their_gradients_match_torch(device, dtype):
    a = crand(3, 5, dtype=dtype)
    a[1, 2] = 0  # the product rule, not a division by the factors
    x = wt.tensor(a, device=device, requires_grad=True)
    close(wt.prod(x, axis=1).numpy(), np.prod(a, axis=1), dtype)
    close(wt.prod(x).numpy(), np.prod(a), dtype)
    close(wt.cumulative_prod(x, axis=1).numpy(), np.cumprod(a, axis=1), dtype)
    p = wt.prod(x, axis=1)
    loss = wt.sum(wt.real(p * p) + wt.imag(p)) + wt.sum(wt.real(wt.cumulative_prod(x, axis=0) * wt.conj(x)))
    loss.backward()
    t = torch.tensor(a, requires_grad=True)
    tp = torch.prod(t, dim=1)
    tl = (torch.real(tp * tp) + torch.imag(tp)).sum() + torch.real(torch.cumprod(t, dim=0) * torch.conj(t)).sum()
    tl.backward()
    close(x.grad.numpy(), t.grad.numpy(), dtype)


def test_casts_and_refusals():
    x = wt.tensor(np.array([1 + 1j], dtype=np.complex64))
    assert x.astype(wt.c128).dtype == wt.c128
    assert wt.astype(wt.tensor([1, 2]), wt.c64).tolist() == [1 + 0j, 2 + 0j]
    with pytest.raises(TypeError, match="imaginary part"):
        x.astype(wt.f32)
    with pytest.raises(TypeError, match="does not take complex"):
        wt.relu(x)
    with pytest.raises(TypeError, match="does not take complex"):
        wt.max(x)


def test_dtype_functions():
    assert wt.isdtype(wt.c64, "complex floating") and wt.isdtype(wt.c128, "numeric")
    assert not wt.isdtype(wt.c64, "real floating")
    assert wt.result_type(wt.c64, wt.f64) == wt.c128
    assert wt.result_type(wt.f32, 1j) == wt.c64
    assert wt.result_type(wt.i32, wt.c64) == wt.c64
    assert wt.can_cast(wt.f32, wt.c64) and not wt.can_cast(wt.c64, wt.f32)
    assert wt.finfo(wt.c128).eps == np.finfo(np.complex128).eps
    info = wt.__array_namespace_info__()
    assert info.default_dtypes()["complex floating"] == wt.c64
    assert "complex128" in info.dtypes(device="cpu")
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}


def test_dlpack_and_numpy_share_memory():
    a = crand(3, dtype=np.complex64)
    x = wt.from_dlpack(torch.from_numpy(a))
    assert x.dtype == wt.c64
    np.testing.assert_array_equal(x.numpy(), a)
    back = torch.from_dlpack(x)
    assert back.dtype == torch.complex64
    np.testing.assert_array_equal(back.numpy(), a)
    v = np.from_dlpack(wt.tensor(a))
    np.testing.assert_array_equal(v, a)


def test_safetensors_round_trip(tmp_path):
    from safetensors.numpy import load_file, save_file

    a = crand(2, 3, dtype=np.complex64)
    path = tmp_path / "c.safetensors"
    wt.save({"w": wt.tensor(a)}, str(path))
    np.testing.assert_array_equal(load_file(str(path))["w"], a)
    save_file({"v": a[::-1].copy()}, str(tmp_path / "np.safetensors"))
    back = wt.load(str(tmp_path / "np.safetensors"))
    assert back["v"].dtype == wt.c64
    np.testing.assert_array_equal(back["v"].numpy(), a[::-1])
    # The format has C64 only: a c128 tensor is refused by name, not written
    # as something no other reader takes.
    with pytest.raises(Exception, match="c128"):
        wt.save({"z": wt.tensor(crand(2))}, str(tmp_path / "c128.safetensors"))


def test_property_complex_arithmetic_and_promotion():
    """Random broadcastable shapes, complex and real operands of every
    precision: dtypes follow NumPy's promotion, values NumPy's arithmetic."""
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    kinds = st.sampled_from(["complex64", "complex128", "float32", "float64"])
    dims = st.lists(st.integers(1, 3), min_size=0, max_size=3)

    @hyp.settings(max_examples=40, deadline=None)
    @hyp.given(kinds, kinds, dims, st.integers(0, 2**31))
    def check(da, db, sa, seed):
        if "complex" not in da + db:
            da = "complex64"
        rng = np.random.default_rng(seed)
        sb = [d if rng.random() < 0.5 else 1 for d in sa[rng.integers(0, len(sa) + 1):]]

        def make(d, shape):
            v = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if "complex" in d else 0)
            return np.asarray(v).astype(d)

        a, b = make(da, sa), make(db, sb)
        x, y = wt.tensor(a), wt.tensor(b)
        for name, ref in (("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                          ("divide", np.divide)):
            want = ref(a, b)
            got = getattr(wt, name)(x, y)
            assert got.dtype == getattr(wt, want.dtype.name), f"{name} {da} {db}: {got.dtype} vs {want.dtype}"
            close(got.numpy(), want, want.dtype)
        for name in ("exp", "sqrt", "tanh", "log"):
            c = a if "complex" in da else a.astype(np.complex64)
            close(getattr(wt, name)(wt.tensor(c)).numpy(), getattr(np, name)(c), c.dtype)

    check()


@pytest.mark.parametrize("device", devices())
def test_unique_sorts_as_numpy(device):
    nan, inf = np.nan, np.inf
    a = np.array([1 + 2j, nan + 1j, 1 + 2j, 0j, complex(1, nan), complex(nan, 0), 1 - 1j, 0j, 3, complex(nan, nan),
                  complex(inf, 1), complex(1, nan), -1 + 5j, nan + 1j, 2j], np.complex64)
    v, idx, inv, cnt = wt.unique_all(wt.tensor(a, device=device))
    wv, widx, winv, wcnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for g, w in ((v, wv), (idx, widx), (inv, winv), (cnt, wcnt)):
        np.testing.assert_array_equal(g.numpy(), w)


TRANSCENDENTAL = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                  "asin", "acos", "atan", "asinh", "acosh", "atanh"]


@pytest.mark.parametrize("device,dtype", CASES, ids=IDS)
@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_transcendental_gradients_match_torch(name, device, dtype):
    # The C99 forms select regions with where; off the branch cuts and the
    # special values the gradient is the function's derivative, as torch's.
    a = (crand(6, dtype=dtype) * 0.6 + (0.3 + 0.2j)).astype(dtype)
    x = wt.tensor(a, device=device, requires_grad=True)
    y = getattr(wt, name)(x)
    wt.sum(wt.real(y) + 0.5 * wt.imag(y)).backward()
    t = torch.tensor(a, requires_grad=True)
    ty = getattr(torch, name)(t)
    (torch.real(ty) + 0.5 * torch.imag(ty)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=10 * tol(dtype), atol=10 * tol(dtype))
