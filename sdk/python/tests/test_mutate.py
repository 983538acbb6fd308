"""t[key] = value and the in-place operators, against NumPy's results."""

import operator

import numpy as np
import pytest

import webtensor as wt


def _pair(shape=(3, 4), dtype=np.float32):
    a = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    return wt.tensor(a), a.copy()


@pytest.mark.parametrize(
    "key, value",
    [
        (0, 5.0),
        (-1, 2),
        ((1, 2), -3.0),
        (slice(1, None), 7.0),
        ((slice(None), 1), [10.0, 11.0, 12.0]),
        ((slice(None, None, -2), slice(1, 3)), [[1.0, 2.0]]),
        ((Ellipsis, 0), np.array([4.0, 5.0, 6.0], dtype=np.float32)),
        ((None, 1), 9.0),
        ([0, 2], 0.5),
        ([2, 0], [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]),
        ((), 1.0),
    ],
)
def test_setitem_matches_numpy(key, value, no_leaks):
    t, a = _pair()
    a[key] = value
    t[key] = value
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.dtype == wt.f32 and t.shape == (3, 4)
    t.close()


def test_setitem_with_a_mask_and_tensor_values(no_leaks):
    t, a = _pair()
    mask = a > 6
    a[mask] = -1
    with wt.tensor(mask) as m:
        t[m] = -1
    np.testing.assert_array_equal(t.numpy(), a)
    a[a < 0] = np.array([1, 2, 3, 4, 5], dtype=np.float32)
    t[t < 0] = wt.tensor([1.0, 2.0, 3.0, 4.0, 5.0])  # a 1-d value fills the selected elements in order
    np.testing.assert_array_equal(t.numpy(), a)
    with wt.tensor([[100.0, 200.0, 300.0, 400.0]]) as row:
        t[1:] = row  # broadcast over the selection
    a[1:] = [[100, 200, 300, 400]]
    np.testing.assert_array_equal(t.numpy(), a)
    t.close()


def test_setitem_casts_to_the_tensors_dtype():
    t, a = _pair(dtype=np.int64)
    t[0] = 2.7  # as NumPy: the value takes t's dtype
    a[0] = 2.7
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.dtype == wt.i64
    b = wt.tensor([True, False])
    b[1] = 1
    assert b.tolist() == [True, True]


def test_setitem_changes_the_object_not_other_tensors():
    t, _ = _pair()
    same, view = t, t[0]
    t[0] = -5.0
    assert same.tolist()[0] == [-5.0] * 4, "the object itself holds the new values"
    assert view.tolist() == [0.0, 1.0, 2.0, 3.0], "a view made before keeps the old ones (documented)"


def test_setitem_errors():
    t, _ = _pair()
    with pytest.raises(IndexError, match="out of bounds"):
        t[3] = 1.0
    with pytest.raises(ValueError, match=r"cannot broadcast a value of shape \[3\] to the selection's shape \[4\]"):
        t[0] = [1.0, 2.0, 3.0]
    x = wt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad.*u = t.detach"):
        x[0] = 3.0
    x.close()
    t.close()
    with pytest.raises(RuntimeError, match="used after close"):
        t[0] = 1.0


def test_setitem_values_that_require_grad_flow_into_the_graph():
    v = wt.tensor([2.0, 3.0], requires_grad=True)
    t = wt.zeros(2, 2)
    t[1] = v
    assert t.requires_grad
    wt.sum(t * t).backward()
    assert v.grad.tolist() == [4.0, 6.0]


@pytest.mark.parametrize("name", ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow"])
def test_inplace_operators_match_numpy(name, no_leaks):
    op = getattr(operator, name)
    a = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    t = wt.tensor(a)
    other = np.full((3, 4), 2.0, dtype=np.float32)
    with wt.tensor(other) as o:
        assert op(t, o) is t, "the object is updated, not replaced"
    np.testing.assert_allclose(t.numpy(), op(a.copy(), other), rtol=1e-6)
    a = t.numpy().copy()
    assert op(t, 3) is t  # a Python scalar
    np.testing.assert_allclose(t.numpy(), op(a, 3), rtol=1e-6)
    t.close()


def test_inplace_operators_keep_shape_and_dtype():
    i = wt.tensor([1, 2, 3])
    with pytest.raises(TypeError, match="result is f32, which a's i64 cannot hold; write a = a / b"):
        i /= 2
    i += 2  # int into int is fine
    assert i.tolist() == [3, 4, 5] and i.dtype == wt.i64
    b = wt.tensor([True, False])
    with pytest.raises(TypeError, match="i64, which a's bool cannot hold"):
        b += 1
    f = wt.tensor([1.0, 2.0])
    f *= wt.tensor([2.0, 2.0], dtype=wt.f64)  # f64 result cast back to f32, as in PyTorch
    assert f.dtype == wt.f32 and f.tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match=r"result has shape \[2, 2\], not a's \[2\]"):
        f += wt.ones(2, 2)
    assert f.tolist() == [2.0, 4.0], "a refused update leaves the tensor as it was"
    assert f.__iadd__("x") is NotImplemented


def test_inplace_on_a_graph_makes_a_new_tensor():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    total = 0
    for _ in range(3):
        total += wt.sum(x * x)  # summing losses still works
    total.backward()
    assert x.grad.tolist() == [6.0, 12.0]
    y = x * 1
    before = y
    y += 1
    assert y is not before and before.tolist() == [1.0, 2.0], "a tensor in a graph is never changed"
