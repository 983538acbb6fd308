"""Ops through the SDK against NumPy (and PyTorch for conv2d): values, attributes, shapes."""

import numpy as np
import pytest

import webtensor as wt

rng = np.random.default_rng(7)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)
P = np.abs(A) + 0.5


def close(got, want, tol=1e-5):
    got = got.numpy() if isinstance(got, wt.Tensor) else np.asarray(got)
    assert got.shape == np.shape(want), f"shape {got.shape} != {np.shape(want)}"
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


UNARY = {
    "exp": np.exp, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "abs": np.abs, "neg": np.negative,
    "floor": np.floor, "ceil": np.ceil, "square": np.square, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    close(getattr(wt, name)(wt.tensor(A)), UNARY[name](A))


@pytest.mark.parametrize("name,ref", [("sqrt", np.sqrt), ("log", np.log), ("rsqrt", lambda x: 1 / np.sqrt(x))])
def test_unary_positive(name, ref):
    close(getattr(wt, name)(wt.tensor(P)), ref(P))


def test_operators_match_numpy():
    a, b = wt.tensor(A), wt.tensor(B)
    close(a + b, A + B)
    close(a - b, A - B)
    close(a * b, A * B)
    close(a / wt.tensor(P), A / P)
    close(a ** 2, A**2)
    close(-a, -A)
    close(abs(a), np.abs(A))
    close(2 - a, 2 - A)
    close(1 / wt.tensor(P), 1 / P)
    close(3 * a + 1, 3 * A + 1)
    close(a // 0.5, A // 0.5)
    close(wt.tensor(P) % 0.3, np.mod(P, np.float32(0.3)), 1e-4)


def test_comparisons_give_bool():
    a, b = wt.tensor(A), wt.tensor(B)
    for got, want in [(a == b, A == B), (a != b, A != B), (a < b, A < B), (a <= b, A <= B), (a > 0, A > 0),
                      (a >= 0, A >= 0)]:
        assert got.dtype == wt.bool
        np.testing.assert_array_equal(got.numpy(), want)


def test_integer_arithmetic():
    x = wt.tensor([7, -7, 5])
    assert x.dtype == wt.i64
    assert (x // 2).tolist() == [3, -4, 2]
    assert (x % 3).tolist() == [1, 2, 2]
    assert (x * 2 + 1).tolist() == [15, -13, 11]


def test_matmul():
    m = rng.standard_normal((4, 5)).astype(np.float32)
    close(wt.tensor(A) @ wt.tensor(m), A @ m, 1e-4)
    batch = rng.standard_normal((2, 3, 4)).astype(np.float32)
    close(wt.matmul(wt.tensor(batch), wt.tensor(m)), batch @ m, 1e-4)


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 1)])
def test_reductions_with_axes(axes):
    x = wt.tensor(A)
    close(wt.sum(x, axes=axes), A.sum(axis=axes), 1e-4)
    close(wt.mean(x, axes=axes), A.mean(axis=axes), 1e-5)
    close(wt.max(x, axes=axes), A.max(axis=axes))
    close(wt.min(x, axes=axes, keepdim=True), A.min(axis=axes, keepdims=True))


def test_arg_and_var():
    x = wt.tensor(A)
    assert wt.argmax(x, axis=1).tolist() == A.argmax(axis=1).tolist()
    # The namespace divides by N (the array API's default), the methods by N - 1 (PyTorch's).
    close(wt.var(x, axes=0), A.var(axis=0), 1e-5)
    close(x.var(axes=0), A.var(axis=0, ddof=1), 1e-5)
    close(wt.std(x, axes=1, correction=1), A.std(axis=1, ddof=1), 1e-5)
    close(x.std(axis=1, correction=0), A.std(axis=1), 1e-5)
    close(wt.cumsum(x, axis=1), np.cumsum(A, axis=1), 1e-5)


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax(axis):
    e = np.exp(A - A.max(axis=axis, keepdims=True))
    close(wt.softmax(wt.tensor(A), axis=axis), e / e.sum(axis=axis, keepdims=True))
    close(wt.log_softmax(wt.tensor(A), axis), np.log(e / e.sum(axis=axis, keepdims=True)), 1e-5)


def test_shape_ops():
    x = wt.tensor(A)
    close(x.T, A.T)
    close(wt.reshape(x, (2, 6)), A.reshape(2, 6))
    close(wt.permute(x, (1, 0)), A.transpose())
    close(wt.unsqueeze(x, 0), A[None])
    close(wt.concat([x, x], axis=1), np.concatenate([A, A], axis=1))
    close(wt.stack([x, x]), np.stack([A, A]))
    close(wt.flip(x, axes=(1,)), A[:, ::-1])
    close(wt.slice(x, axis=1, start=1, step=2), A[:, 1::2])
    close(wt.where(x > 0, x, 0.0), np.where(A > 0, A, 0))


def test_multi_output_ops():
    values, indices = wt.topk(wt.tensor(A), 2)
    order = np.argsort(-A, axis=-1)[:, :2]
    np.testing.assert_array_equal(indices.numpy(), order)
    close(values, np.take_along_axis(A, order, axis=-1))
    pieces = wt.split(wt.arange(7), sections=3)
    assert [p.tolist() for p in pieces] == [[0, 1, 2], [3, 4], [5, 6]]
    s, i = wt.tensor([3.0, 1.0, 2.0]).sort()  # PyTorch's (values, indices); wt.sort gives the values
    assert s.tolist() == [1.0, 2.0, 3.0] and i.tolist() == [1, 2, 0]
    assert wt.sort(wt.tensor([3.0, 1.0, 2.0]), descending=True).tolist() == [3.0, 2.0, 1.0]


def test_conv2d_against_torch():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    want = torch.nn.functional.conv2d(tx, tw, tb, stride=2, padding=1)
    got = wt.conv2d(wt.tensor(x), wt.tensor(w), wt.tensor(b), stride=2, padding=1)
    close(got, want.numpy(), 1e-4)


def test_layer_norm_and_methods():
    x = wt.tensor(A)
    mu, var = A.mean(-1, keepdims=True), A.var(-1, keepdims=True)
    close(wt.layer_norm(x, (4,)), (A - mu) / np.sqrt(var + 1e-5), 1e-4)
    close(x.exp(), np.exp(A))
    close(x.sum(axes=1), A.sum(1), 1e-5)
    close(x.softmax(axis=0).sum(axes=0), np.ones(4), 1e-5)


def test_creation():
    assert wt.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert wt.ones((2,), dtype="i32").dtype == wt.i32
    assert wt.full((2, 2), 7.0).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert wt.arange(5).tolist() == [0, 1, 2, 3, 4]
    close(wt.arange(0.0, 1.0, 0.25), np.arange(0, 1, 0.25, dtype=np.float32))
    wt.manual_seed(3)
    a = wt.randn(4, 5).numpy()
    wt.manual_seed(3)
    assert np.array_equal(wt.randn(4, 5).numpy(), a)
    r = wt.rand(1000).numpy()
    assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.05


def test_tensor_metadata_and_conversions():
    x = wt.tensor([[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.numel() == 6 and len(x) == 2
    assert x.dtype == wt.float32 and x.device == "cpu"
    assert x.tolist() == [[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert wt.tensor(2.5).item() == 2.5 and wt.tensor(True).dtype == wt.bool
    assert "1.5" in repr(x) and repr(x).startswith("tensor(")
    assert x.to("f64").dtype == wt.f64
    assert x.to("cpu").tolist() == x.tolist()
    assert x.T.is_contiguous() is False and x.T.contiguous().is_contiguous()
    assert wt.tensor(np.arange(3, dtype=np.int16)).dtype == wt.i16
    assert wt.tensor([[]]).shape == (1, 0)


def test_scalars_are_zero_dimensional():
    s = wt.tensor(2.5)
    assert s.shape == () and s.ndim == 0 and s.item() == 2.5
    assert (wt.ones(2) * s).tolist() == [2.5, 2.5]
    assert wt.tensor(np.float64(1.0)).shape == ()


def test_array_api_spellings():
    """sum(x, axis=..., keepdims=...) as the Python array API writes it, beside
    the registry's axes/keepdim (PyTorch's spelling)."""
    x = wt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert wt.sum(x, axis=0).tolist() == [4.0, 6.0]
    assert wt.sum(x, axis=(0, 1), keepdims=True).shape == (1, 1)
    assert x.mean(axis=1, keepdims=True).tolist() == [[1.5], [3.5]]
    assert wt.argmax(x, axis=1, keepdims=True).shape == (2, 1)
    assert wt.max(x, axes=[1], keepdim=False).tolist() == [2.0, 4.0]
