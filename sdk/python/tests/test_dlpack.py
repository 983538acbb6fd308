"""DLPack exchange with NumPy and PyTorch: both directions share memory."""

import gc

import numpy as np
import pytest

import webtensor as wt
from webtensor import _lib

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def exports_released():
    # These are host-memory exchanges: on a machine with a GPU the default
    # device would be it (test_cuda.py covers that exchange).
    previous = wt.default_device()
    wt.set_default_device("cpu")
    gc.collect()
    before = _lib.live_dlpack_exports()
    yield
    gc.collect()
    wt.set_default_device(previous)
    assert _lib.live_dlpack_exports() == before, "DLPack exports not released"


def test_rejected_capsule_raises_the_consumers_error_and_frees_the_export():
    # NumPy has no bfloat16: it raises while dropping our capsule, whose
    # destructor must then run with that exception pending (in C).
    t = wt.tensor([1.0, 2.0]).to("bfloat16")
    for _ in range(3):
        with pytest.raises((BufferError, RuntimeError, TypeError), match="(?i)dtype"):
            np.from_dlpack(t)


def test_numpy_from_webtensor_shares_memory():
    t = wt.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.from_dlpack(t)
    a[0, 1] = 20
    assert t.tolist() == [[1.0, 20.0], [3.0, 4.0]]
    b = np.asarray(t)
    assert np.shares_memory(a, b)
    n = t.numpy()
    n[1, 1] = -1
    assert t.tolist()[1][1] == -1
    del a, b, n


def test_torch_from_webtensor_shares_memory_and_outlives_handle():
    t = wt.arange(6).to("f32")
    tt = torch.from_dlpack(t)
    tt[2] = 100
    assert t.tolist()[2] == 100
    t.close()
    assert tt.tolist() == [0, 1, 100, 3, 4, 5]


def test_versioned_and_legacy_capsules():
    t = wt.tensor([1, 2, 3])
    v = t.__dlpack__(max_version=(1, 1))
    assert "dltensor_versioned" in repr(v)
    legacy = t.__dlpack__()
    assert '"dltensor"' in repr(legacy)
    del v, legacy  # never consumed: the destructor must free both
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("view", ["transposed", "step", "offset"])
def test_webtensor_views_export_with_strides(view):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = wt.tensor(base)
    v = {"transposed": t.T, "step": wt.slice(t, axis=1, start=1, step=2), "offset": wt.slice(t, axis=0, start=2)}[view]
    want = {"transposed": base.T, "step": base[:, 1::2], "offset": base[2:]}[view]
    np.testing.assert_array_equal(np.from_dlpack(v), want)
    np.testing.assert_array_equal(torch.from_dlpack(v).numpy(), want)
    np.from_dlpack(v)[...] += 1000
    np.testing.assert_array_equal(v.numpy(), want + 1000)


def test_from_numpy_shares_memory():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = wt.from_dlpack(a)
    assert t.dtype == wt.f64 and t.shape == (3, 4)
    a[1, 2] = -5
    assert t.tolist()[1][2] == -5
    np.from_dlpack(t)[0, 0] = 42
    assert a[0, 0] == 42
    t.close()
    del a
    gc.collect()


@pytest.mark.parametrize("make", [
    lambda a: a.T, lambda a: a[::2, 1::2], lambda a: a[1:, 2:], lambda a: a[::-1],
], ids=["transposed", "stepped", "offset", "reversed"])
def test_from_numpy_non_contiguous(make):
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    v = make(a)
    try:
        t = wt.from_dlpack(v)
    except BufferError:
        pytest.skip("this NumPy does not export the layout")
    np.testing.assert_array_equal(t.numpy(), v)
    v[...] = -v
    np.testing.assert_array_equal(t.numpy(), v)
    np.testing.assert_array_equal((t * 2).numpy(), v * 2)


@pytest.mark.parametrize("shape", [(1,), (1, 1), (), (0,), (3, 0), (1, 4)])
def test_size_one_and_zero_size(shape):
    a = np.ones(shape, dtype=np.float32)
    t = wt.from_dlpack(a)
    assert t.shape == shape
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    np.testing.assert_array_equal(torch.from_dlpack(t).numpy(), a)
    w = wt.zeros(*shape) if shape else wt.tensor(0.0)
    np.testing.assert_array_equal(np.asarray(w), np.zeros(shape, np.float32))


def test_torch_both_ways():
    tt = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = wt.from_dlpack(tt)
    tt[1, 1] = 55
    assert t.tolist()[1][1] == 55
    back = torch.from_dlpack(t)
    back[0, 0] = -3
    assert tt[0, 0] == -3
    tv = tt.t()[1:]
    v = wt.from_dlpack(tv)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    b16 = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    t16 = wt.from_dlpack(b16)
    assert t16.dtype == wt.bf16
    assert torch.equal(torch.from_dlpack(t16), b16)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"])
def test_numpy_dtypes_round_trip(dtype):
    a = (np.arange(6) % 2 if dtype == "bool" else np.arange(-3, 3)).astype(dtype).reshape(2, 3)
    if dtype == "uint8":
        a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    t = wt.from_dlpack(a)
    assert t.dtype.numpy_name == dtype
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    np.testing.assert_array_equal(wt.tensor(a).numpy(), a)


def test_read_only_numpy_stays_read_only():
    a = np.arange(4, dtype=np.int32)
    a.flags.writeable = False
    t = wt.from_dlpack(a)
    assert not np.from_dlpack(t).flags.writeable


def test_copy_and_device_arguments():
    t = wt.tensor([1.0, 2.0])
    c = np.from_dlpack(t, copy=True)
    c[0] = 9
    assert t.tolist() == [1.0, 2.0]
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    u = wt.from_dlpack(np.ones(2), copy=True)
    assert u.tolist() == [1.0, 1.0]
