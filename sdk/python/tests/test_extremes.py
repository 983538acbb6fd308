"""Inputs at the edges: reductions over huge broadcast views, exact integer ranges,
closed tensors (issue 26)."""

import time

import numpy as np
import pytest

import webtensor as wt


def test_reductions_over_a_huge_broadcast_view():
    y = wt.expand(wt.ones(1), shape=[10**11])
    assert y.sum().item() == np.float32(1e11)
    assert y.mean().item() == 1.0
    assert y.max().item() == 1.0
    assert wt.argmax(y).item() == 0
    assert y[::2].sum().item() == np.float32(5e10)
    with pytest.raises(MemoryError, match="800000000000 bytes"):
        wt.nonzero(y)


def test_a_view_of_a_small_vector_streams():
    v = wt.arange(1024, dtype="f32")
    x = wt.expand(v, shape=[2**20, 1024])  # 2^30 elements over 4 KB
    assert x.sum().item() == float(np.arange(1024).sum() * 2**20)
    start = time.perf_counter()
    rows = wt.sum(x[: 2**16], axes=[1]).numpy()  # every element read, no copy of the view
    assert time.perf_counter() - start < 60
    np.testing.assert_array_equal(rows, np.full(2**16, np.float32(np.arange(1024).sum())))


def test_integer_arange_is_exact():
    assert wt.arange(2**53 + 1, 2**53 + 4).tolist() == [2**53 + 1, 2**53 + 2, 2**53 + 3]
    assert wt.arange(2**60, 2**60 + 3).tolist() == [2**60, 2**60 + 1, 2**60 + 2]
    assert wt.arange(-(2**63), 2**63 - 1, 2**62).tolist() == [-(2**63), -(2**62), 0, 2**62]
    with pytest.raises(OverflowError, match="stop 18446744073709551616 is outside int64"):
        wt.arange(0, 2**64, 2**63)
    with pytest.raises(ValueError, match="do not fit i32"):
        wt.arange(0, 2**31 + 1, 2**30, dtype="i32")
    np.testing.assert_allclose(wt.arange(0.5, 2, 0.5).numpy(), [0.5, 1.0, 1.5])


def test_closed_tensor_as_gradient_is_an_error():
    x = wt.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    g = wt.tensor([1.0, 1.0])
    g.close()
    with pytest.raises(RuntimeError, match="after close"):
        y.backward(g)
    assert x.grad is None
    with pytest.raises(TypeError, match="grad must be a Tensor"):
        y.backward([1.0, 1.0])
