"""NumPy-style indexing against NumPy."""

import numpy as np
import pytest

import webtensor as wt

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (1, 2, 3), slice(1, None), slice(None, None, 2), slice(None, None, -1),
    (slice(None), slice(3, 0, -2)),
    (Ellipsis, 1), (None, 0), (0, None, slice(1, 4)), (slice(-2, None), Ellipsis, slice(None, None, -3)),
    slice(5, 10), (slice(None), 1, None), Ellipsis, (1, slice(4, 0, -1), -2),
], ids=repr)
def test_basic_indexing_matches_numpy(index):
    got = wt.tensor(A)[index]
    np.testing.assert_array_equal(got.numpy(), A[index])


def test_array_indices():
    t = wt.tensor(A)
    np.testing.assert_array_equal(t[[2, 0]].numpy(), A[[2, 0]])
    np.testing.assert_array_equal(t[wt.tensor([1])].numpy(), A[[1]])
    mask = A > 30
    np.testing.assert_array_equal(t[wt.tensor(mask)].numpy(), A[mask])


def test_index_errors():
    t = wt.tensor(A)
    with pytest.raises(IndexError, match="out of bounds"):
        t[3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError):
        t["a"]
