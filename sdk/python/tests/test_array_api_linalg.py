"""webtensor.linalg, the array API's linalg extension (2024.12): its names and
signatures against array-api-strict's, its functions against NumPy (f32 and
f64, batched, broadcast), the conventions webtensor fixes where the standard
leaves them open, autograd through the factorisations, and the same calls on
WebGPU when this machine has an adapter.
"""

import inspect
import math

import numpy as np
import pytest

import webtensor as wt
from webtensor import linalg as la

R = np.random.default_rng(2412)


def rand(*shape, dtype="float64"):
    return R.standard_normal(shape).astype(dtype)


def spd(*shape, dtype="float64"):
    x = R.standard_normal(shape)
    n = shape[-1]
    return (x @ np.swapaxes(x, -1, -2) / n + np.eye(n)).astype(dtype)


def close(got, want, dtype="float64", scale=1.0):
    tol = {"float64": 1e-10, "float32": 2e-5}[dtype] * scale
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def canon(v):
    """v's columns flipped so that each one's largest-magnitude element is
    positive (webtensor's convention for eigenvectors and left singular
    vectors, applied to NumPy's), and the signs used, (..., 1, k)."""
    idx = np.abs(v).argmax(axis=-2)[..., None, :]
    sg = np.sign(np.take_along_axis(v, idx, axis=-2))
    return v * sg, sg


def test_names_and_signatures_match_array_api_strict():
    xp = pytest.importorskip("array_api_strict")
    xp.set_array_api_strict_flags(api_version="2024.12")
    assert sorted(set(xp.linalg.__all__)) == sorted(n for n in la.__all__ if not n.endswith("Result"))
    for name in xp.linalg.__all__:
        want = inspect.signature(getattr(xp.linalg, name)).parameters
        got = inspect.signature(getattr(la, name)).parameters
        assert list(got) == list(want), name
        for p in want:
            assert (got[p].kind, got[p].default) == (want[p].kind, want[p].default), f"{name}({p})"
    x = wt.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert x.__array_namespace__().linalg is la
    assert la.eigh(x)._fields == ("eigenvalues", "eigenvectors")
    assert la.qr(x)._fields == ("Q", "R")
    assert la.slogdet(x)._fields == ("sign", "logabsdet")
    assert la.svd(x)._fields == ("U", "S", "Vh")


def test_against_array_api_strict_values():
    xp = pytest.importorskip("array_api_strict")
    a = rand(3, 4, 4)
    s = xp.asarray(a)
    x = wt.tensor(a)
    for name in ("det", "inv", "eigvalsh", "svdvals", "matrix_rank", "pinv", "matrix_transpose"):
        close(getattr(la, name)(x).numpy(), np.asarray(getattr(xp.linalg, name)(s)), scale=1e3)
    close(la.matrix_norm(x, ord="nuc").numpy(), np.asarray(xp.linalg.matrix_norm(s, ord="nuc")))
    close(la.vector_norm(x, axis=(0, 2), ord=3).numpy(), np.asarray(xp.linalg.vector_norm(s, axis=(0, 2), ord=3)))
    close(la.trace(x, offset=-1).numpy(), np.asarray(xp.linalg.trace(s, offset=-1)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_factorisations_against_numpy(dtype):
    a = rand(2, 5, 5, dtype=dtype)
    sym = a + np.swapaxes(a, -1, -2)
    lam, vec = la.eigh(wt.tensor(sym))
    wl, wv = np.linalg.eigh(sym.astype(np.float64))
    close(lam.numpy(), wl, dtype, scale=10)
    close(vec.numpy(), canon(wv)[0], dtype, scale=50)
    close(la.eigvalsh(wt.tensor(sym)).numpy(), wl, dtype, scale=10)
    p = spd(3, 4, 4, dtype=dtype)
    close(la.cholesky(wt.tensor(p)).numpy(), np.linalg.cholesky(p.astype(np.float64)), dtype, scale=10)
    close(la.cholesky(wt.tensor(p), upper=True).numpy(), np.swapaxes(np.linalg.cholesky(p.astype(np.float64)), -1, -2),
          dtype, scale=10)
    for shape in [(4, 4), (6, 3), (3, 6), (2, 5, 3)]:
        m = rand(*shape, dtype=dtype)
        for mode in ("reduced", "complete"):
            q, r = la.qr(wt.tensor(m), mode=mode)
            wq, wr = np.linalg.qr(m.astype(np.float64), mode=mode)  # LAPACK's signs: element for element
            close(q.numpy(), wq, dtype, scale=50)
            close(r.numpy(), wr, dtype, scale=50)
        u, s, vh = la.svd(wt.tensor(m), full_matrices=False)
        wu, ws, wvh = np.linalg.svd(m.astype(np.float64), full_matrices=False)
        close(s.numpy(), ws, dtype, scale=10)
        cu, sg = canon(wu)
        close(u.numpy(), cu, dtype, scale=100)
        close(vh.numpy(), wvh * np.swapaxes(sg, -1, -2), dtype, scale=100)
        close(la.svdvals(wt.tensor(m)).numpy(), ws, dtype, scale=10)
        fu, fs, fvh = (t.numpy() for t in la.svd(wt.tensor(m)))
        k = min(shape[-2:])
        eye = np.eye
        close(np.swapaxes(fu, -1, -2) @ fu, np.broadcast_to(eye(shape[-2]), fu.shape), dtype, scale=10)
        close(fvh @ np.swapaxes(fvh, -1, -2), np.broadcast_to(eye(shape[-1]), fvh.shape), dtype, scale=10)
        close((fu[..., :k] * fs[..., None, :]) @ fvh[..., :k, :], m, dtype, scale=20)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_solvers_against_numpy(dtype):
    a = (rand(3, 4, 4) / 2 + 2 * np.eye(4)).astype(dtype)  # well conditioned
    a64 = a.astype(np.float64)
    x = wt.tensor(a)
    close(la.det(x).numpy(), np.linalg.det(a64), dtype, scale=10)
    sign, logabs = la.slogdet(x)
    ws, wl = np.linalg.slogdet(a64)
    close(sign.numpy(), ws, dtype)
    close(logabs.numpy(), wl, dtype, scale=10)
    close(la.inv(x).numpy(), np.linalg.inv(a64), dtype, scale=10)
    b = rand(4, dtype=dtype)
    want = np.linalg.solve(a64, b[:, None].astype(np.float64))[..., 0]  # one right-hand side for every matrix
    close(la.solve(x, wt.tensor(b)).numpy(), want, dtype, scale=10)
    bm = rand(2, 1, 4, 3, dtype=dtype)  # batch dims broadcast: (2, 1) against (3,)
    close(la.solve(x, wt.tensor(bm)).numpy(), np.linalg.solve(a64, bm.astype(np.float64)), dtype, scale=10)
    for n in (0, 1, 3, -2):
        close(la.matrix_power(x, n).numpy(), np.linalg.matrix_power(a64, n), dtype, scale=100)
    w = rand(3, 5, 2, dtype=dtype)
    close(la.pinv(wt.tensor(w)).numpy(), np.linalg.pinv(w.astype(np.float64)), dtype, scale=100)
    assert la.matrix_rank(wt.tensor(w)).numpy().tolist() == [2, 2, 2]
    assert la.matrix_rank(wt.tensor(w)).dtype == wt.int64


def test_rank_deficient_and_singular():
    low = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert la.matrix_rank(wt.tensor(low)).item() == 2
    assert la.matrix_rank(wt.tensor(low), rtol=0.5).item() == 1
    assert la.matrix_rank(wt.tensor(low), rtol=wt.tensor(0.5)).item() == 1
    close(la.pinv(wt.tensor(low)).numpy(), np.linalg.pinv(low), scale=1e4)
    close(la.pinv(wt.tensor(low), rtol=wt.tensor(0.5)).numpy(), np.linalg.pinv(low, rtol=0.5), scale=1e4)
    sign, logabs = la.slogdet(wt.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert sign.item() == 0 and logabs.item() == -math.inf
    assert la.det(wt.tensor(np.zeros((0, 0)))).item() == 1.0
    assert np.isnan(la.cholesky(wt.tensor([[1.0, 2.0], [2.0, 1.0]])).numpy()).any()  # not positive definite
    # eigh and cholesky read the lower triangle only, as NumPy's do
    m = np.array([[2.0, 100.0], [1.0, 3.0]])
    close(la.eigvalsh(wt.tensor(m)).numpy(), np.linalg.eigvalsh(m))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norms_against_numpy(dtype):
    a = rand(2, 3, 4, dtype=dtype)
    x = wt.tensor(a)
    a64 = a.astype(np.float64)
    for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        want = np.linalg.norm(a64, ord=o, axis=(-2, -1))
        close(la.matrix_norm(x, ord=o).numpy(), want, dtype, scale=10)
        assert la.matrix_norm(x, ord=o, keepdims=True).shape == (2, 1, 1)
    close(la.matrix_norm(x, ord=None).numpy(), np.linalg.norm(a64, axis=(-2, -1)), dtype)
    with pytest.raises(ValueError, match="ord=3"):
        la.matrix_norm(x, ord=3)
    for o in (2, 1, 3, math.inf, -math.inf, 0):
        close(la.vector_norm(x, ord=o).numpy(), np.linalg.norm(a64.ravel(), ord=o), dtype, scale=10)
        close(la.vector_norm(x, axis=1, keepdims=True, ord=o).numpy(),
              np.linalg.norm(a64, ord=o, axis=1, keepdims=True), dtype, scale=10)


def test_products_and_diagonals_against_numpy():
    a, b = rand(2, 4, 3), rand(4, 3)
    x, y = wt.tensor(a), wt.tensor(b)
    close(la.cross(x, y).numpy(), np.cross(a, b))
    c, d = rand(3, 2), rand(3, 2)
    close(la.cross(wt.tensor(c), wt.tensor(d), axis=-2).numpy(), np.cross(c, d, axis=0))
    ci = la.cross(wt.tensor([1, 2, 3], dtype="i32"), wt.tensor([4, 5, 6], dtype="i32"))
    assert ci.dtype == wt.int32 and ci.tolist() == [-3, 6, -3]
    with pytest.raises(Exception, match="3 elements"):
        la.cross(wt.tensor(rand(4)), wt.tensor(rand(4)))
    close(la.vecdot(x, y).numpy(), np.sum(a * b, axis=-1))
    close(la.vecdot(x, y, axis=-2).numpy(), np.sum(a * b, axis=-2))
    assert la.vecdot(wt.tensor([1, 2], dtype="i32"), wt.tensor([3, 4], dtype="i32")).dtype == wt.int32
    close(la.tensordot(x, y).numpy(), np.tensordot(a, b))
    close(la.tensordot(x, y, axes=([1], [0])).numpy(), np.tensordot(a, b, axes=([1], [0])))
    close(la.tensordot(x, y, axes=0).numpy(), np.tensordot(a, b, axes=0))
    close(la.outer(wt.tensor(b[0]), wt.tensor(b[1])).numpy(), np.outer(b[0], b[1]))
    close(la.matmul(x, wt.tensor(b.T)).numpy(), a @ b.T)
    close(la.matrix_transpose(x).numpy(), np.swapaxes(a, -1, -2))
    for k in (0, 1, -2, 5):
        close(la.diagonal(x, offset=k).numpy(), np.diagonal(a, offset=k, axis1=-2, axis2=-1))
        close(la.trace(x, offset=k).numpy(), np.trace(a, offset=k, axis1=-2, axis2=-1))
    t = la.trace(wt.tensor([[1, 2], [3, 4]], dtype="i16"))
    assert t.dtype == wt.int64 and t.item() == 5
    assert la.trace(x, dtype=wt.float32).dtype == wt.float32


def test_gradients_through_the_factorisations():
    torch = pytest.importorskip("torch")
    a = rand(3, 3) + 3 * np.eye(3)
    x = wt.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    (la.det(x) + la.slogdet(x).logabsdet + la.inv(x).sum() + la.svdvals(x).sum()).backward()
    (torch.linalg.det(tx) + torch.linalg.slogdet(tx).logabsdet + torch.linalg.inv(tx).sum()
     + torch.linalg.svdvals(tx).sum()).backward()
    close(x.grad.numpy(), tx.grad.numpy(), scale=100)
    s = wt.tensor(a + a.T, requires_grad=True)
    ts = torch.tensor(a + a.T, requires_grad=True)
    w = np.arange(3.0)
    wt.sum(la.eigvalsh(s) * wt.tensor(w)).backward()
    (torch.linalg.eigvalsh(ts) * torch.tensor(w)).sum().backward()
    # the lower triangle carries the gradient of the symmetric input
    g = ts.grad.numpy()
    close(s.grad.numpy(), np.tril(g + g.T, -1) + np.diag(np.diag(g)), scale=100)


def test_linalg_on_webgpu():
    from conftest import webgpu_or_none

    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine")
    a = rand(4, 6, 6, dtype="float32")
    sym = a + np.swapaxes(a, -1, -2)
    cases = (("eigvalsh", sym), ("svdvals", a), ("det", a), ("inv", a), ("cholesky", spd(2, 5, 5, dtype="float32")))
    for name, arg in cases:
        got = getattr(la, name)(wt.tensor(arg, device=dev))
        assert got.device == dev
        close(got.numpy(), getattr(la, name)(wt.tensor(arg)).numpy(), "float32", scale=1e3)
    assert np.isnan(la.cholesky(wt.tensor([[1.0, 2.0], [2.0, 1.0]], device=dev)).numpy()).any()
    sign, logabs = la.slogdet(wt.tensor([[1.0, 2.0], [2.0, 4.0]], device=dev))
    assert sign.item() == 0 and logabs.item() == -math.inf
    q, r = la.qr(wt.tensor(a, device=dev))
    close((q @ r).numpy(), a, "float32", scale=10)
    b = rand(6, dtype="float32")
    close(la.solve(wt.tensor(a, device=dev), wt.tensor(b, device=dev)).numpy(),
          la.solve(wt.tensor(a), wt.tensor(b)).numpy(), "float32", scale=1e3)
