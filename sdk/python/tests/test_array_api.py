"""The array API names made of other ops (webtensor/_array_api.py), against NumPy
(spelled as NumPy 1.23 has them, the oldest the SDK supports)."""

import numpy as np
import pytest

import webtensor as wt

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7


@pytest.fixture
def t():
    x = wt.tensor(A)
    yield x
    x.close()


def test_permute_expand_transpose_moveaxis(t):
    np.testing.assert_array_equal(wt.permute_dims(t, (2, 0, 1)).numpy(), np.transpose(A, (2, 0, 1)))
    np.testing.assert_array_equal(wt.expand_dims(t, axis=1).numpy(), np.expand_dims(A, 1))
    np.testing.assert_array_equal(wt.expand_dims(t).numpy(), np.expand_dims(A, 0))
    np.testing.assert_array_equal(wt.matrix_transpose(t).numpy(), np.swapaxes(A, -1, -2))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), (1, 1)]:
        np.testing.assert_array_equal(wt.moveaxis(t, src, dst).numpy(), np.moveaxis(A, src, dst))
    with pytest.raises(ValueError, match="at least 2"):
        wt.matrix_transpose(wt.ones(3))
    with pytest.raises(IndexError, match="axis 3 out of range"):
        wt.moveaxis(t, 3, 0)


def test_astype(t):
    for dt in ("i32", wt.f64, "bool"):
        u = wt.astype(t, dt)
        np.testing.assert_array_equal(u.numpy(), A.astype(wt.tensor([], dtype=dt).dtype.numpy_name))
    assert t.astype("f32", copy=False) is t
    assert t.astype(wt.f32) is not t
    assert t.astype("i64").dtype == wt.i64


def test_vecdot_broadcast_clip_take(t):
    b = np.linspace(-1, 1, 4, dtype=np.float32)
    np.testing.assert_allclose(wt.vecdot(t, wt.tensor(b)).numpy(), np.sum(A * b, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(wt.vecdot(t, t, axis=1).numpy(), np.sum(A * A, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(wt.broadcast_to(wt.tensor(b), (3, 4)).numpy(), np.broadcast_to(b, (3, 4)))
    np.testing.assert_array_equal(wt.clip(t, -2, 5).numpy(), np.clip(A, -2, 5))
    np.testing.assert_array_equal(wt.clip(t, max=0).numpy(), np.clip(A, None, 0))
    np.testing.assert_array_equal(wt.take(t, [2, 0], axis=2).numpy(), np.take(A, [2, 0], axis=2))
    np.testing.assert_array_equal(wt.take(wt.tensor(b), wt.tensor([3, 1])).numpy(), np.take(b, [3, 1]))
    with pytest.raises(ValueError, match="axis is required"):
        wt.take(t, [0])


def test_unstack_count_isfinite_cumulative_sum(t):
    for axis in (0, 1, -1):
        got = wt.unstack(t, axis=axis)
        want = list(np.moveaxis(A, axis, 0))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w)
    np.testing.assert_array_equal(wt.count_nonzero(t).numpy(), np.count_nonzero(A))
    np.testing.assert_array_equal(wt.count_nonzero(t, axis=1, keepdims=True).numpy(),
                                  np.count_nonzero(A, axis=1, keepdims=True))
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], dtype=np.float32)
    np.testing.assert_array_equal(wt.isfinite(wt.tensor(x)).numpy(), np.isfinite(x))
    np.testing.assert_array_equal(wt.cumulative_sum(t, axis=1).numpy(), np.cumsum(A, axis=1))
    np.testing.assert_array_equal(wt.cumulative_sum(t, axis=2, include_initial=True).numpy(),
                                  np.concatenate([np.zeros((2, 3, 1), np.float32), np.cumsum(A, axis=2)], axis=2))


def test_elementwise_names_and_creation(t):
    b = wt.tensor(np.full((2, 3, 4), 3, dtype=np.float32))
    for name in ("multiply", "subtract", "divide", "equal", "not_equal", "less", "less_equal", "greater",
                 "greater_equal"):
        np.testing.assert_array_equal(getattr(wt, name)(t, b).numpy(), getattr(np, name)(A, 3.0), err_msg=name)
    np.testing.assert_array_equal(wt.negative(t).numpy(), -A)
    np.testing.assert_array_equal(wt.positive(t).numpy(), A)
    e = wt.empty((2, 3), dtype="i32")
    assert e.shape == (2, 3) and e.dtype == wt.i32
    assert wt.empty_like(t).shape == t.shape and wt.empty(5).shape == (5,)
    assert wt.asarray(t) is t
    assert wt.asarray(t, dtype="f64").dtype == wt.f64
    assert wt.asarray([1, 2]).tolist() == [1, 2]
    with pytest.raises(ValueError, match="copy=False"):
        wt.asarray(t, dtype="f64", copy=False)
