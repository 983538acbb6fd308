"""uint16 and uint64 against NumPy and array-api-strict: the promotion
table, arithmetic that wraps, unsigned division and shifts, comparisons,
reductions and sorting, with u64 values past 2^53 and 2^63 (where a float64
or int64 path would give wrong answers), and exchange with NumPy, DLPack
and PyTorch."""

import numpy as np
import pytest

import webtensor as wt

U64_EDGES = np.array([0, 1, 2**64 - 1, 2**63, 2**53 + 1, 12345678901234567890, 7, 2**63 - 1], dtype=np.uint64)
U64_DIVS = np.array([3, 2**64 - 1, 2, 2**63 + 5, 3, 2**32, 1, 2**63], dtype=np.uint64)
U16_EDGES = np.array([0, 1, 65535, 32768, 40000, 7, 12345, 65534], dtype=np.uint16)
U16_DIVS = np.array([3, 65535, 2, 32768, 7, 65535, 1, 300], dtype=np.uint16)
EDGES = {"uint16": (U16_EDGES, U16_DIVS), "uint64": (U64_EDGES, U64_DIVS)}
ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def test_dtype_objects():
    assert wt.uint16 is wt.u16 and wt.uint64 is wt.u64
    assert (wt.u16.code, wt.u16.itemsize, wt.u64.code, wt.u64.itemsize) == (14, 2, 15, 8)
    assert wt.tensor([1], dtype="uint64").dtype == wt.uint64 and wt.tensor(np.zeros(2, np.uint16)).dtype == wt.u16
    for name in ("uint16", "uint64"):
        info, want = wt.iinfo(getattr(wt, name)), np.iinfo(name)
        assert (info.bits, info.min, info.max) == (want.bits, want.min, want.max)
        assert wt.isdtype(getattr(wt, name), "unsigned integer") and wt.isdtype(getattr(wt, name), "integral")
        assert not wt.isdtype(getattr(wt, name), "signed integer")


def test_promotion_matches_array_api_strict():
    xp = pytest.importorskip("array_api_strict")
    for a in ALL:
        for b in ALL:
            try:
                want = xp.result_type(getattr(xp, a), getattr(xp, b))
            except TypeError:
                want = None  # outside the standard's table
            if want is None:
                if "uint64" in (a, b) and "int" in (a[:3], b[:3]):
                    with pytest.raises(TypeError, match="cannot promote"):
                        wt.result_type(getattr(wt, a), getattr(wt, b))
                continue  # mixed kinds: webtensor follows PyTorch there
            got = wt.result_type(getattr(wt, a), getattr(wt, b))
            name = next(n for n in ALL if getattr(xp, n) == want)
            assert got == getattr(wt, name), (a, b, got, want)
            assert wt.can_cast(getattr(wt, a), got) == xp.can_cast(getattr(xp, a), want)


def test_promotion_across_kinds():
    # Not in the standard's table; PyTorch's rule: the float wins.
    assert wt.result_type(wt.uint64, wt.float32) == wt.float32
    assert wt.result_type(wt.uint16, wt.bool) == wt.uint16
    assert wt.result_type(wt.uint16, wt.int8) == wt.int32
    with pytest.raises(TypeError, match="cast one operand first"):
        wt.tensor([1], dtype="u64") + wt.tensor([1], dtype="i8")


@pytest.mark.parametrize("dtype", ["uint16", "uint64"])
def test_arithmetic_matches_numpy(dtype):
    a, b = EDGES[dtype]
    x, y = wt.tensor(a), wt.tensor(b)
    assert x.dtype == getattr(wt, dtype)
    with np.errstate(over="ignore"):
        for name, want in {
            "add": a + b, "subtract": a - b, "multiply": a * b, "floor_divide": a // b, "remainder": a % b,
            "maximum": np.maximum(a, b), "minimum": np.minimum(a, b), "bitwise_and": a & b, "bitwise_or": a | b,
            "bitwise_xor": a ^ b,
        }.items():
            got = getattr(wt, name)(x, y)
            assert got.dtype == x.dtype, name
            np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
        for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
            np.testing.assert_array_equal(getattr(wt, name)(x, y).numpy(), getattr(np, name)(a, b), err_msg=name)
        np.testing.assert_array_equal((-x).numpy(), -a)
        np.testing.assert_array_equal(wt.abs(x).numpy(), a)
        np.testing.assert_array_equal(wt.sign(x).numpy(), np.sign(a))
        np.testing.assert_array_equal(wt.square(x).numpy(), a * a)
        np.testing.assert_array_equal(wt.bitwise_invert(x).numpy(), ~a)
        counts = np.array([0, 1, 3, 15, 7, 2, 1, 4], dtype=dtype)
        np.testing.assert_array_equal((x >> wt.tensor(counts)).numpy(), a >> counts)
        np.testing.assert_array_equal((x << wt.tensor(counts)).numpy(), a << counts)
        np.testing.assert_array_equal((x + 1).numpy(), a + np.array(1, dtype))  # a Python int takes x's dtype
        np.testing.assert_array_equal(wt.clip(x, 2, 40000).numpy(), np.clip(a, 2, 40000))
    with pytest.raises(ValueError, match="division by zero"):
        wt.floor_divide(x, wt.zeros_like(x))


def test_u64_past_2_53_is_exact():
    big = 2**63 + 12345
    x = wt.tensor([big, 2**64 - 1], dtype=wt.uint64)
    assert x.tolist() == [big, 2**64 - 1] and x[0].item() == big
    np.testing.assert_array_equal((x - 1).numpy(), np.array([big - 1, 2**64 - 2], np.uint64))
    np.testing.assert_array_equal((x + 1).numpy(), np.array([big + 1, 0], np.uint64))  # wraps at 2^64
    assert (x + (2**53 + 1)).numpy()[0] == np.uint64(big + 2**53 + 1)
    assert wt.max(x).item() == 2**64 - 1 and wt.min(x).item() == big and wt.argmax(x).item() == 1
    as_f64 = wt.astype(x, wt.float64).numpy()
    np.testing.assert_array_equal(as_f64, np.array([big, 2**64 - 1], np.uint64).astype(np.float64))
    back = wt.astype(wt.tensor([1.5, 1e20, -3.0, 2.0**63], dtype=wt.float64), wt.uint64).numpy()
    np.testing.assert_array_equal(back, np.array([1, 2**64 - 1, 0, 2**63], np.uint64))  # saturating, NaN to 0


@pytest.mark.parametrize("dtype", ["uint16", "uint64"])
def test_reductions_and_sorting(dtype):
    a, _ = EDGES[dtype]
    x = wt.tensor(a)
    s = wt.sum(x)
    assert s.dtype == wt.uint64  # the standard's default unsigned width
    with np.errstate(over="ignore"):
        assert s.item() == int(np.sum(a, dtype=np.uint64))
        assert wt.prod(wt.tensor(a[1:])).item() == int(np.prod(a[1:], dtype=np.uint64))
        np.testing.assert_array_equal(wt.cumulative_sum(x).numpy(), np.cumsum(a, dtype=np.uint64))
    assert wt.max(x).item() == a.max() and wt.min(x).item() == a.min()
    assert wt.argmax(x).item() == a.argmax() and wt.argmin(x).item() == a.argmin()
    np.testing.assert_array_equal(wt.sort(x).numpy(), np.sort(a))
    np.testing.assert_array_equal(wt.sort(x, descending=True).numpy(), np.sort(a)[::-1])
    np.testing.assert_array_equal(wt.argsort(x, stable=True).numpy(), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(wt.unique_values(wt.tensor(np.concatenate([a, a]))).numpy(), np.unique(a))
    np.testing.assert_array_equal(wt.where(x > 5, x, wt.zeros_like(x)).numpy(), np.where(a > 5, a, 0))
    idx = wt.tensor(np.array([7, 0, 2], dtype=dtype))
    np.testing.assert_array_equal(wt.take(x, idx).numpy(), a[[7, 0, 2]])
    with pytest.raises(IndexError):
        wt.take(x, wt.tensor(np.array([np.iinfo(dtype).max], dtype=dtype)))


def test_property_against_numpy():
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    u64 = st.integers(0, 2**64 - 1)

    @hyp.settings(max_examples=60, deadline=None)
    @hyp.given(st.lists(u64, min_size=1, max_size=12), st.lists(u64, min_size=1, max_size=12))
    def check(va, vb):
        n = min(len(va), len(vb))
        a, b = np.array(va[:n], np.uint64), np.array(vb[:n], np.uint64)
        x, y = wt.tensor(a), wt.tensor(b)
        with np.errstate(over="ignore"):
            for name in ("add", "subtract", "multiply", "maximum", "minimum", "less", "greater_equal", "bitwise_xor"):
                np.testing.assert_array_equal(getattr(wt, name)(x, y).numpy(), getattr(np, name)(a, b), err_msg=name)
            nz = np.where(b == 0, np.uint64(1), b)
            np.testing.assert_array_equal(wt.floor_divide(x, wt.tensor(nz)).numpy(), a // nz)
            np.testing.assert_array_equal(wt.remainder(x, wt.tensor(nz)).numpy(), a % nz)
            assert wt.sum(x).item() == int(np.sum(a))
        np.testing.assert_array_equal(wt.sort(x).numpy(), np.sort(a))
        assert wt.argmax(x).item() == a.argmax()
        np.testing.assert_array_equal(wt.astype(x, wt.uint16).numpy(), a.astype(np.uint16))
        np.testing.assert_array_equal(wt.astype(x, wt.int64).numpy(), a.astype(np.int64))

    check()


def test_exchange():
    a = np.array([0, 2**63 + 1, 2**64 - 1], dtype=np.uint64)
    x = wt.from_dlpack(a)
    assert x.dtype == wt.uint64
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    h = np.array([0, 40000, 65535], dtype=np.uint16)
    np.testing.assert_array_equal(np.asarray(wt.tensor(h)), h)
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "uint64"):
        pytest.skip("this PyTorch has no uint64")
    t = torch.from_dlpack(wt.tensor(a))
    assert t.dtype == torch.uint64 and t.view(torch.int64).tolist() == a.view(np.int64).tolist()
    back = wt.from_dlpack(torch.tensor([1, 65535], dtype=torch.int32).to(torch.uint16))
    assert back.dtype == wt.uint16 and back.tolist() == [1, 65535]


def test_webgpu_storage():
    from conftest import webgpu_or_none

    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine")
    x = wt.tensor(U16_EDGES, device=dev)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal((x + wt.tensor(U16_DIVS, device=dev)).numpy(), U16_EDGES + U16_DIVS)
    np.testing.assert_array_equal(wt.sort(x).numpy(), np.sort(U16_EDGES))
    with pytest.raises((wt.UnsupportedError, ValueError), match="u64 is not supported on the GPU"):
        wt.tensor(U64_EDGES, device=dev)
