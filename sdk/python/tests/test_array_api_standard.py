"""webtensor as an array API standard (2024.12) namespace: its names against
array-api-strict's, its functions against NumPy on ordinary values and on
the IEEE special cases (NaN, infinities, signed zeros, subnormals), its
promotion table, dtype functions, indexing and the functions made of other
ops. array-api-tests is not on PyPI, so this module stands in for it.
"""

import math

import numpy as np
import pytest

import webtensor as wt

# Names of the standard webtensor does not have yet, and why: a name that
# goes missing, or one that is added, fails test_namespace_names.
KNOWN_GAPS: dict[str, str] = {}
STRICT_ONLY = {"ArrayAPIStrictFlags", "Device", "get_array_api_strict_flags", "reset_array_api_strict_flags",
               "set_array_api_strict_flags", "__version__"}


def test_namespace_names():
    xp = pytest.importorskip("array_api_strict")
    xp.set_array_api_strict_flags(api_version="2024.12")
    names = sorted(set(xp.__all__) - STRICT_ONLY)
    # An extension counts only as a module (wt.fft is an op of that name).
    missing = {n for n in names if not hasattr(wt, n) or (n in ("linalg", "fft") and callable(getattr(wt, n)))}
    assert missing == set(KNOWN_GAPS), f"missing {sorted(missing - set(KNOWN_GAPS))}, now present " \
                                       f"{sorted(set(KNOWN_GAPS) - missing)}"
    assert len(names) - len(missing) == 157


def test_namespace_entry_points():
    x = wt.tensor([1.0, 2.0])
    assert x.__array_namespace__() is wt
    assert x.__array_namespace__(api_version="2023.12") is wt
    with pytest.raises(ValueError, match="2099.01"):
        x.__array_namespace__(api_version="2099.01")
    assert wt.__array_api_version__ == "2024.12"
    info = wt.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"] and caps["max dimensions"] == 64
    assert info.default_device() in info.devices()
    assert info.default_dtypes() == {"real floating": wt.float32, "complex floating": wt.complex64,
                                     "integral": wt.int64, "indexing": wt.int64}
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                  "float32", "float64", "complex64", "complex128"}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {"bool", "uint8", "uint16", "uint32", "uint64"}
    gpu = info.dtypes(device="webgpu:0")
    assert "float64" not in gpu and "complex128" not in gpu and "uint64" not in gpu and "uint16" in gpu
    assert (wt.e, wt.pi, wt.inf, wt.newaxis) == (math.e, math.pi, math.inf, None) and math.isnan(wt.nan)
    assert x.to_device(x.device) is x and x.device == "cpu"


# ---- dtypes --------------------------------------------------------------------------------

STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def kind(name):
    return "b" if name == "bool" else "f" if name.startswith("float") else "i"


def test_promotion_table_matches_numpy_within_kinds():
    # The standard defines promotion within a kind (NumPy's table there);
    # an op's result dtype is result_type's.
    for a in STANDARD:
        for b in STANDARD:
            if kind(a) != kind(b):
                continue
            if "uint64" in (a, b) and "int" in (a[:3], b[:3]):
                # Undefined by the standard (NumPy gives float64): refused,
                # as array-api-strict and PyTorch refuse it.
                with pytest.raises(TypeError, match="cannot promote"):
                    wt.result_type(getattr(wt, a), getattr(wt, b))
                with pytest.raises(TypeError, match="cannot promote"):
                    wt.add(wt.zeros(2, dtype=a), wt.ones(2, dtype=b))
                assert not wt.can_cast(getattr(wt, a), getattr(wt, b))
                continue
            want = np.result_type(a, b).name
            got = wt.result_type(getattr(wt, a), getattr(wt, b))
            assert got == getattr(wt, want), (a, b)
            assert wt.can_cast(getattr(wt, a), got)
            x, y = wt.zeros(2, dtype=a), wt.ones(2, dtype=b)
            assert wt.add(x, y).dtype == got if a != "bool" else wt.logical_or(x, y).dtype == wt.bool


def test_result_type_and_can_cast():
    i8, u8, f32 = wt.tensor([1], dtype="i8"), wt.tensor([1], dtype="u8"), wt.tensor([1.0])
    assert wt.result_type(i8, u8) == wt.int16
    assert wt.result_type(i8, 3) == wt.int8 and wt.result_type(f32, 3) == wt.float32
    assert wt.result_type(i8, 2.5) == wt.float32 and wt.result_type(wt.bool, 1) == wt.int64
    assert wt.add(i8, 2.5).dtype == wt.result_type(i8, 2.5)
    assert wt.result_type(wt.float32, wt.float64, wt.float32) == wt.float64
    with pytest.raises(ValueError, match="at least one"):
        wt.result_type(1, 2.0)
    assert wt.can_cast(wt.int8, wt.int64) and not wt.can_cast(wt.int64, wt.int8)
    assert wt.can_cast(wt.uint8, wt.int16) and not wt.can_cast(wt.uint32, wt.int32)
    assert not wt.can_cast(wt.float64, wt.float32) and wt.can_cast(f32, wt.float64)


def test_finfo_iinfo_isdtype():
    for name in ("float32", "float64", "float16"):
        got, want = wt.finfo(getattr(wt, name)), np.finfo(name)
        assert (got.bits, got.eps, got.max, got.min, got.smallest_normal) == (
            want.bits, float(want.eps), float(want.max), float(want.min), float(want.smallest_normal))
    assert wt.finfo(wt.tensor([1.0])).dtype == wt.float32
    assert wt.finfo(wt.bfloat16).eps == 2.0**-7
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        got, want = wt.iinfo(getattr(wt, name)), np.iinfo(name)
        assert (got.bits, got.min, got.max) == (want.bits, want.min, want.max)
    with pytest.raises(TypeError, match="not an integer"):
        wt.iinfo(wt.float32)
    with pytest.raises(TypeError, match="not a floating"):
        wt.finfo(wt.int32)
    assert wt.isdtype(wt.int8, "signed integer") and not wt.isdtype(wt.uint8, "signed integer")
    assert wt.isdtype(wt.uint32, ("bool", "integral")) and wt.isdtype(wt.float64, wt.float64)
    assert not wt.isdtype(wt.bool, "numeric") and wt.isdtype(wt.float32, "numeric")
    with pytest.raises(ValueError, match="unknown kind"):
        wt.isdtype(wt.int8, "integer")


# ---- elementwise functions against NumPy, special cases included ------------------------------

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-40, -1e-40, 3.0e38, -3.0e38, math.inf, -math.inf,
           math.nan, 0.75, 10.0, -7.25]
UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp", "expm1", "floor",
         "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2", "negative", "positive", "round", "sign",
         "signbit", "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "reciprocal"]
NUMPY_NAMES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
               "atanh": "arctanh", "atan2": "arctan2", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
               "bitwise_right_shift": "right_shift", "pow": "power"}


# The standard leaves the sign of a zero that maximum and minimum pick
# between -0 and +0 to the implementation.
ZERO_SIGN_FREE = {"maximum", "minimum"}


def same_values(got, want, dtype, name):
    """got equals want: NaN where NaN, infinities and zeros with their signs,
    finite values within 16 units of the dtype's precision (Go's and the C
    library's sin of 3e38 or pow to a huge power differ by a few)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if got.dtype == np.bool_ or got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions")
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=f"{name}: infinities and zeros")
    if name not in ZERO_SIGN_FREE:
        np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]),
                                      err_msg=f"{name}: signed zeros")
    rtol = 16 * np.finfo(dtype).eps
    np.testing.assert_allclose(got, want, rtol=rtol, atol=np.finfo(dtype).tiny, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_cases(name, dtype):
    a = np.array(SPECIAL, dtype=dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, NUMPY_NAMES.get(name, name))(a.astype(np.float64))
        if want.dtype == np.float64:
            want = want.astype(dtype)  # rounding once, overflowing to inf
    same_values(getattr(wt, name)(wt.tensor(a)).numpy(), want, dtype, name)


BINARY = ["add", "subtract", "multiply", "divide", "atan2", "copysign", "hypot", "logaddexp", "maximum",
          "minimum", "nextafter", "pow", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "floor_divide", "remainder"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_special_cases(name, dtype):
    # Every pair of special values, through broadcasting (a column against a row).
    a = np.array(SPECIAL, dtype=dtype)[:, None]
    b = np.array(SPECIAL, dtype=dtype)[None, :]
    fn = getattr(np, NUMPY_NAMES.get(name, name))
    with np.errstate(all="ignore"):
        # nextafter steps one ulp of the dtype itself; the rest are the
        # float64 result rounded once.
        want = fn(a, b) if name == "nextafter" else fn(a.astype(np.float64), b.astype(np.float64))
        if want.dtype == np.float64:
            want = want.astype(dtype)
    same_values(getattr(wt, name)(wt.tensor(a), wt.tensor(b)).numpy(), want, dtype, name)


INTS = np.array([0, 1, -1, 7, -8, 100, -128, 127, 45, -46], dtype=np.int64)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_bitwise_against_numpy(dtype):
    a = INTS.astype(dtype)
    counts = np.array([0, 1, 2, 3, 7, 1, 0, 5, 4, 6], dtype=dtype)
    x, c = wt.tensor(a), wt.tensor(counts)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
        want = getattr(np, NUMPY_NAMES.get(name, name))(a, counts)
        np.testing.assert_array_equal(getattr(wt, name)(x, c).numpy(), want, err_msg=name)
    np.testing.assert_array_equal(wt.bitwise_invert(x).numpy(), np.invert(a))
    np.testing.assert_array_equal((x & c).numpy(), a & counts)
    np.testing.assert_array_equal((x | 3).numpy(), a | np.array(3, dtype))
    np.testing.assert_array_equal((x ^ c).numpy(), a ^ counts)
    np.testing.assert_array_equal((x << c).numpy(), a << counts)
    np.testing.assert_array_equal((x >> 1).numpy(), a >> np.array(1, dtype))
    np.testing.assert_array_equal((~x).numpy(), ~a)
    y = wt.tensor(a)
    y &= c
    y <<= 1
    np.testing.assert_array_equal(y.numpy(), (a & counts) << np.array(1, dtype))


def test_bitwise_on_bools_and_refusals():
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    tp, tq = wt.tensor(p), wt.tensor(q)
    for op in ("__and__", "__or__", "__xor__"):
        np.testing.assert_array_equal(getattr(tp, op)(tq).numpy(), getattr(p, op)(q))
    np.testing.assert_array_equal((~tp).numpy(), ~p)
    with pytest.raises(Exception, match="bitwise_and"):
        wt.bitwise_and(wt.tensor([1.0]), wt.tensor([2.0]))
    with pytest.raises(Exception, match="bitwise_left_shift"):
        wt.bitwise_left_shift(tp, tq)


# ---- statistics, sorting, searching, sets ------------------------------------------------------

R = np.random.default_rng(24)
M = R.standard_normal((4, 6)).astype(np.float32)


def test_statistics_follow_the_standard():
    x = wt.tensor(M)
    np.testing.assert_allclose(wt.var(x, axis=1).numpy(), M.var(axis=1), rtol=1e-5)
    np.testing.assert_allclose(wt.std(x, axis=0, correction=1).numpy(), M.std(axis=0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(wt.var(x, correction=0.5).numpy(), M.var(ddof=0.5), rtol=1e-5)
    np.testing.assert_allclose(x.var().numpy(), M.var(ddof=1), rtol=1e-5)  # the method: PyTorch's default
    assert wt.sum(wt.tensor([1, 2], dtype="i32")).dtype == wt.int64
    assert wt.sum(wt.tensor([1, 2], dtype="i32"), dtype=wt.float64).dtype == wt.float64
    assert wt.prod(x, axis=0, dtype="f64").dtype == wt.float64
    np.testing.assert_array_equal(wt.cumulative_prod(wt.tensor([1, 2, 3, 4]), include_initial=True).numpy(),
                                  [1, 1, 2, 6, 24])
    np.testing.assert_array_equal(wt.cumulative_sum(wt.tensor(M), axis=0, dtype="f64").numpy(),
                                  np.cumsum(M.astype(np.float64), axis=0))


def test_sort_argsort_searchsorted():
    v = np.array([3, 1, 2, 3, 1, 0, 3], dtype=np.float32)
    t = wt.tensor(v)
    np.testing.assert_array_equal(wt.sort(t).numpy(), np.sort(v))
    np.testing.assert_array_equal(wt.sort(t, descending=True).numpy(), np.sort(v)[::-1])
    np.testing.assert_array_equal(wt.argsort(t, stable=True).numpy(), np.argsort(v, kind="stable"))
    # stable descending keeps equal values in their original order
    np.testing.assert_array_equal(wt.argsort(t, descending=True).numpy(), [0, 3, 6, 2, 1, 4, 5])
    s = np.array([0.0, 1.0, 1.0, 2.5, 4.0, np.nan], dtype=np.float32)
    q = np.array([[1.0, -3.0], [np.nan, 9.0], [2.5, 0.0]], dtype=np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(wt.searchsorted(wt.tensor(s), wt.tensor(q), side=side).numpy(),
                                      np.searchsorted(s, q, side=side), err_msg=side)
    order = np.array([4, 0, 2, 1, 3])
    shuffled = np.array([1.0, 2.0, 1.0, 2.5, 0.0], dtype=np.float32)
    np.testing.assert_array_equal(
        wt.searchsorted(wt.tensor(shuffled), wt.tensor([1.0, 3.0]), sorter=wt.tensor(order)).numpy(),
        np.searchsorted(shuffled, [1.0, 3.0], sorter=order))
    with pytest.raises(ValueError, match="side"):
        wt.searchsorted(wt.tensor(s), wt.tensor(q), side="middle")


def test_sets():
    v = np.array([[3, 1, 3], [2, 1, 7]], dtype=np.int32)
    t = wt.tensor(v)
    values, indices, inverse, counts = wt.unique_all(t)
    w_values, w_indices, w_inverse, w_counts = np.unique(v, return_index=True, return_inverse=True,
                                                         return_counts=True)
    np.testing.assert_array_equal(values.numpy(), w_values)
    np.testing.assert_array_equal(indices.numpy(), w_indices)
    np.testing.assert_array_equal(inverse.numpy(), w_inverse.reshape(v.shape))
    np.testing.assert_array_equal(counts.numpy(), w_counts)
    np.testing.assert_array_equal(wt.unique_values(t).numpy(), w_values)
    assert [a.numpy().tolist() for a in wt.unique_counts(t)] == [w_values.tolist(), w_counts.tolist()]
    assert wt.unique_inverse(t).inverse_indices.shape == v.shape
    nan = wt.unique_values(wt.tensor([np.nan, 1.0, np.nan]))
    assert nan.shape == (3,)  # every NaN is distinct
    np.testing.assert_array_equal(wt.isin(t, wt.tensor([1, 7])).numpy(), np.isin(v, [1, 7]))
    np.testing.assert_array_equal(wt.isin(t, wt.tensor([1, 7]), invert=True).numpy(), ~np.isin(v, [1, 7]))
    assert not wt.isin(wt.tensor([np.nan]), wt.tensor([np.nan])).item()
    np.testing.assert_array_equal([a.numpy() for a in wt.nonzero(t > 2)], np.nonzero(v > 2))


# ---- creation and manipulation -----------------------------------------------------------------


def test_creation():
    np.testing.assert_array_equal(wt.eye(3, 5, k=2).numpy(), np.eye(3, 5, k=2, dtype=np.float32))
    np.testing.assert_array_equal(wt.eye(4, k=-1, dtype=wt.int32).numpy(), np.eye(4, k=-1, dtype=np.int32))
    np.testing.assert_allclose(wt.linspace(0, 1, 5, endpoint=False).numpy(),
                               np.linspace(0, 1, 5, endpoint=False, dtype=np.float32))
    assert wt.full((2,), 3).dtype == wt.int64 and wt.full((2,), True).dtype == wt.bool
    assert wt.full((2,), 2.5).dtype == wt.float32
    x = wt.tensor([[1, 2]], dtype="i16")
    assert wt.full_like(x, 7).dtype == wt.int16 and wt.zeros_like(x, dtype=wt.float64).dtype == wt.float64
    assert wt.ones_like(x, device="cpu").tolist() == [[1, 1]]
    assert wt.conj(x).tolist() == [[1, 2]] and wt.real(x).tolist() == [[1, 2]]
    assert wt.imag(x).tolist() == [[0, 0]]


def test_manipulation():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = wt.tensor(a)
    np.testing.assert_array_equal(wt.tril(t, k=1).numpy(), np.tril(a, k=1))
    np.testing.assert_array_equal(wt.triu(t, k=-1).numpy(), np.triu(a, k=-1))
    np.testing.assert_array_equal(wt.diff(t, axis=1, n=2).numpy(), np.diff(a, axis=1, n=2))
    p = wt.tensor(np.ones((2, 3, 1), np.float32))
    np.testing.assert_array_equal(wt.diff(t, prepend=p, append=p).numpy(),
                                  np.diff(a, prepend=np.ones((2, 3, 1)), append=np.ones((2, 3, 1))))
    np.testing.assert_array_equal(wt.repeat(t, 2, axis=1).numpy(), np.repeat(a, 2, axis=1))
    np.testing.assert_array_equal(wt.repeat(t, wt.tensor([1, 0, 3]), axis=1).numpy(),
                                  np.repeat(a, [1, 0, 3], axis=1))
    np.testing.assert_array_equal(wt.repeat(t, 2).numpy(), np.repeat(a, 2))
    np.testing.assert_array_equal(wt.tile(t, (2, 1, 1)).numpy(), np.tile(a, (2, 1, 1)))
    np.testing.assert_array_equal(wt.concat([t, t], axis=None).numpy(), np.concatenate([a, a], axis=None))
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(wt.tensordot(t, wt.tensor(b)).numpy(), np.tensordot(a, b), rtol=1e-6)
    np.testing.assert_allclose(wt.tensordot(t, wt.tensor(b), axes=([1], [0])).numpy(),
                               np.tensordot(a, b, axes=([1], [0])), rtol=1e-6)
    for indexing in ("xy", "ij"):
        got = wt.meshgrid(wt.arange(3), wt.arange(4), wt.arange(2), indexing=indexing)
        want = np.meshgrid(np.arange(3), np.arange(4), np.arange(2), indexing=indexing)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g.numpy(), w)
    assert wt.broadcast_shapes((2, 1, 4), (3, 1)) == (2, 3, 4)
    with pytest.raises(ValueError, match="do not broadcast"):
        wt.broadcast_shapes((2, 3), (4,))
    assert [x.shape for x in wt.broadcast_arrays(wt.ones(3, 1), wt.ones(4))] == [(3, 4), (3, 4)]
    np.testing.assert_array_equal(wt.take_along_axis(t, wt.tensor([[[0], [3], [1]]] * 2), axis=-1).numpy(),
                                  np.take_along_axis(a, np.array([[[0], [3], [1]]] * 2), axis=-1))
    lo, hi = wt.tensor([[[2.0]]]), wt.tensor([5.0, 9.0, 20.0, 30.0])
    np.testing.assert_array_equal(wt.clip(t, lo, hi).numpy(), np.clip(a, 2.0, np.array([5.0, 9.0, 20.0, 30.0])))
    with pytest.raises(ValueError, match="copy=False"):
        wt.reshape(wt.permute_dims(t, (2, 1, 0)), (-1,), copy=False)


def test_boolean_mask_over_leading_axes():
    a = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    t = wt.tensor(a)
    for m in (a[:, :, 0] % 3 == 0, a[:, 0, 0] > 30, a > 50, np.zeros((4, 5), bool)):
        np.testing.assert_array_equal(t[wt.tensor(m)].numpy(), a[m])
    with pytest.raises(IndexError, match="does not match"):
        t[wt.tensor(np.ones((5, 4), bool))]


def test_property_broadcast_and_promotion():
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    ints = st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
    dims = st.lists(st.integers(1, 3), min_size=0, max_size=3)

    @hyp.settings(max_examples=40, deadline=None)
    @hyp.given(ints, ints, dims, dims, st.integers(0, 2**31))
    def check(da, db, sa, sb, seed):
        # u64 with a signed integer has no promotion (test_promotion_table...).
        hyp.assume(not ("uint64" in (da, db) and "int" in (da[:3], db[:3])))
        rng = np.random.default_rng(seed)
        # a's shape broadcasts with b's: b takes a's trailing dims or 1s.
        sb = [d if rng.random() < 0.5 else 1 for d in sa[len(sa) - len(sb):]] if len(sb) <= len(sa) else sb
        sa = sa if len(sb) <= len(sa) else [d if rng.random() < 0.5 else 1 for d in sb[len(sb) - len(sa):]]
        a = rng.integers(0, 100, size=sa).astype(da)
        b = rng.integers(0, 8, size=sb).astype(db)
        for name in ("add", "multiply", "bitwise_xor", "bitwise_left_shift", "maximum"):
            want = getattr(np, NUMPY_NAMES.get(name, name))(a, b)
            got = getattr(wt, name)(wt.tensor(a), wt.tensor(b))
            assert got.dtype == wt.result_type(getattr(wt, da), getattr(wt, db)) == getattr(wt, want.dtype.name)
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{name} {da} {db} {sa} {sb}")

    check()


def test_new_functions_on_webgpu():
    from conftest import webgpu_or_none

    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine")
    a = np.array([0, 1, -1, 7, -8, 100], dtype=np.int32)
    c = np.array([0, 1, 2, 31, 3, 40], dtype=np.int32)
    x, k = wt.tensor(a, device=dev), wt.tensor(c, device=dev)
    np.testing.assert_array_equal((x << k).numpy(), [0, 2, -4, -2147483648, -64, 0])
    np.testing.assert_array_equal((x >> k).numpy(), [0, 0, -1, 0, -1, 0])
    np.testing.assert_array_equal((~x ^ k & x).numpy(), ~a ^ c & a)
    f = np.array([0.0, -0.0, 1.0, 1e-45, np.inf, np.nan], dtype=np.float32)
    g = np.array([-0.0, 1.0, 2.0, 0.0, 0.0, 1.0], dtype=np.float32)
    got, want = wt.nextafter(wt.tensor(f, device=dev), wt.tensor(g, device=dev)).numpy(), np.nextafter(f, g)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    num = ~np.isnan(want)  # bit for bit: signed zeros and the subnormal included
    np.testing.assert_array_equal(got[num].view(np.uint32), want[num].view(np.uint32))
    m = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mask = m[:, :, 0] > 5
    np.testing.assert_array_equal(wt.tensor(m, device=dev)[wt.tensor(mask, device=dev)].numpy(), m[mask])
    np.testing.assert_allclose(wt.var(wt.tensor(m, device=dev), axis=2).numpy(), m.var(axis=2), rtol=1e-5)


# The special cases on WebGPU (f32; the GPU has no f64), where the driver's
# float code is not the CPU's: wgsl/common.wgsl pins them (zeros and
# subnormals read from the bits, Payne-Hanek reduction for sin/cos/tan,
# atan2/pow that do not lean on the builtins' loose accuracy).
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_special_cases_on_webgpu(name):
    from conftest import webgpu_or_none

    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine")
    a = np.array(SPECIAL, dtype="float32")
    args = [a] if name in UNARY else [a[:, None], a[None, :]]
    fn = getattr(np, NUMPY_NAMES.get(name, name))
    with np.errstate(all="ignore"):
        want = fn(*args) if name == "nextafter" else fn(*(x.astype(np.float64) for x in args))
        if want.dtype == np.float64:
            want = want.astype("float32")
    got = getattr(wt, name)(*(wt.tensor(x, device=dev) for x in args)).numpy()
    same_values(got, want, "float32", name)
