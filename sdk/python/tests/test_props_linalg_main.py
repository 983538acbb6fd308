"""Property tests (hypothesis) of the main namespace's linear algebra
(matmul and the @ operator, tensordot, vecdot, matrix_transpose) and the
dtype functions (astype, can_cast, finfo, iinfo, isdtype, result_type)
against array-api-strict, on the CPU and WebGPU: every dtype pair the
standard's promotion table allows and the device holds, batch broadcasting,
1-d operands, size-0 axes, negative axes.
"""

from __future__ import annotations

import numpy as np
import pytest
from array_api_props import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    NUMERIC,
    PROPS,
    accepted,
    arrays,
    check,
    fits_gpu_int64,
    from_xp,
    held,
    hyp,
    on_gpu,
    oracle,
    st,
    to_wt,
    xp,
)

import webtensor as wt

COVERED = {"matmul", "tensordot", "vecdot", "matrix_transpose", "astype", "can_cast", "finfo", "iinfo", "isdtype",
           "result_type"}


def small(dt, shape, device):
    """Values whose sums of products stay exact-ish: small integers, floats
    in [-4, 4] (NaN and infinities too: the standard fixes their
    propagation through sums of products only as IEEE 754 does)."""
    if dt in INTS:
        return arrays(dt, shape, device, lo=-3 if dt.startswith("int") else 0, hi=3)
    if dt == "bool":
        return arrays(dt, shape, device)
    return arrays(dt, shape, device, magnitude=4, finite=True)


def tolerance(want, k: int):
    """A sum of k products in another order: k eps of the sum of |products| (here <= 16 k)."""
    if want.dtype.kind not in "fc":
        return 0, 0.0
    return 16, float(np.finfo(want.dtype).eps) * 16 * 4 * max(k, 1)


def promotable(a: str, b: str) -> bool:
    """Whether the standard's promotion table has the pair: array-api-strict's
    matmul and vecdot take mixed kinds (complex64 with uint32) and int64
    with uint64 through NumPy, which the table leaves undefined ("mixed-kind
    promotion ... implementation-specific")."""
    try:
        xp.result_type(getattr(xp, a), getattr(xp, b))
    except TypeError:
        return False
    return True


def pair(device, name="matmul"):
    # (tensordot's pairs are matmul's: array-api-strict's tensordot refuses
    # the 1-d probes accepted() makes, with its default axes=2)
    return st.sampled_from([p for p in held(device, accepted("matmul" if name == "tensordot" else name, 2))
                            if promotable(*p)])


def matmul_shapes(data):
    """Shapes (batch broadcast, 1-d on either side) that matmul takes."""
    m, k, n = (data.draw(st.integers(0, 4)) for _ in range(3))
    b1 = data.draw(st.lists(st.integers(1, 3), max_size=2), label="batch 1")
    b2 = list(b1)
    for i in range(len(b2)):
        if data.draw(st.booleans()):
            b1[i] = 1 if data.draw(st.booleans()) else b1[i]
    b2 = b2[data.draw(st.integers(0, len(b2))):]
    s1 = (k,) if data.draw(st.booleans(), label="x1 1-d") else (*b1, m, k)
    s2 = (k,) if data.draw(st.booleans(), label="x2 1-d") else (*b2, k, n)
    return s1, s2, k


@PROPS
@hyp.given(data=st.data())
def test_matmul(api_device, data):
    device = api_device
    da, db = data.draw(pair(device), label="dtypes")
    s1, s2, k = matmul_shapes(data)
    a, b = data.draw(small(da, s1, device), label="x1"), data.draw(small(db, s2, device), label="x2")
    want = oracle("matmul", a, b)
    if not fits_gpu_int64(device, want):
        return
    ulps, atol = tolerance(want, k)
    form = data.draw(st.sampled_from(["matmul", "@", "@="]), label="form")
    x1, x2 = to_wt(a, device), to_wt(b, device)
    if form == "matmul":
        got = wt.matmul(x1, x2)
    elif form == "@":
        got = x1 @ x2
    else:
        # "x1 @= x2": allowed where the result keeps x1's shape and dtype
        if want.shape != a.shape or want.dtype != a.dtype:
            return
        x1 @= x2
        got = x1
    check(got, want, f"{form}({da}{s1}, {db}{s2})", ulps=ulps, atol=atol)


@PROPS
@hyp.given(data=st.data())
def test_matmul_refuses_0d_and_mismatch(api_device, data):
    # "If either x1 or x2 has zero dimensions ... an exception should be raised";
    # so should a contracted-axis mismatch.
    device = api_device
    dt = data.draw(st.sampled_from(held(device, FLOATS)), label="dtype")
    with pytest.raises(Exception):  # noqa: B017, PT011
        wt.matmul(wt.asarray(np.ones((), dt), device=device), wt.asarray(np.ones((2,), dt), device=device))
    with pytest.raises(Exception):  # noqa: B017, PT011
        wt.matmul(wt.asarray(np.ones((2, 3), dt), device=device), wt.asarray(np.ones((2, 3), dt), device=device))


@PROPS
@hyp.given(data=st.data())
def test_tensordot(api_device, data):
    device = api_device
    da, db = data.draw(pair(device, "tensordot"), label="dtypes")
    shared = data.draw(st.lists(st.integers(0, 3), max_size=3), label="contracted")
    f1 = data.draw(st.lists(st.integers(0, 3), max_size=2), label="free 1")
    f2 = data.draw(st.lists(st.integers(0, 3), max_size=2), label="free 2")
    if data.draw(st.booleans(), label="int axes"):
        s1, s2, axes = (*f1, *shared), (*shared, *f2), len(shared)
    else:  # listed pairs, in any order and with negative axes
        n1, n2 = len(f1) + len(shared), len(f2) + len(shared)
        p1 = data.draw(st.permutations(range(n1)), label="x1 order")
        p2 = data.draw(st.permutations(range(n2)), label="x2 order")
        s1, s2 = [0] * n1, [0] * n2
        dims1, dims2 = list(f1) + list(shared), list(f2) + list(shared)
        for i, p in enumerate(p1):
            s1[p] = dims1[i]
        for i, p in enumerate(p2):
            s2[p] = dims2[i]
        ax1 = [p1[len(f1) + j] - (n1 if data.draw(st.booleans()) else 0) for j in range(len(shared))]
        ax2 = [p2[len(f2) + j] - (n2 if data.draw(st.booleans()) else 0) for j in range(len(shared))]
        axes = (tuple(ax1), tuple(ax2))
    a, b = data.draw(small(da, tuple(s1), device), label="x1"), data.draw(small(db, tuple(s2), device), label="x2")
    want = oracle("tensordot", a, b, axes=axes)
    if not fits_gpu_int64(device, want):
        return
    ulps, atol = tolerance(want, int(np.prod(shared)))
    check(wt.tensordot(to_wt(a, device), to_wt(b, device), axes=axes), want,
          f"tensordot({da}{tuple(s1)}, {db}{tuple(s2)}, axes={axes})", ulps=ulps, atol=atol)


@PROPS
@hyp.given(data=st.data())
def test_vecdot(api_device, data):
    device = api_device
    da, db = data.draw(pair(device, "vecdot"), label="dtypes")
    k = data.draw(st.integers(0, 4), label="k")
    batch = data.draw(st.lists(st.integers(1, 3), max_size=2), label="batch")
    b1 = [1 if data.draw(st.booleans()) else s for s in batch]
    b2 = batch[data.draw(st.integers(0, len(batch))):]
    s1, s2 = (*b1, k), (*b2, k)
    a, b = data.draw(small(da, s1, device), label="x1"), data.draw(small(db, s2, device), label="x2")
    # "axis ... must be a negative integer" (the contracted axis is counted from the end)
    axis = data.draw(st.integers(-min(len(s1), len(s2)), -1), label="axis")
    if s1[axis] != s2[axis]:
        hyp.reject()
    want = oracle("vecdot", a, b, axis=axis)
    if not fits_gpu_int64(device, want):
        return
    ulps, atol = tolerance(want, k)
    # complex: "sum(conj(x1) * x2)", the first operand conjugated
    check(wt.vecdot(to_wt(a, device), to_wt(b, device), axis=axis), want,
          f"vecdot({da}{s1}, {db}{s2}, axis={axis})", ulps=ulps, atol=atol)


@PROPS
@hyp.given(data=st.data())
def test_matrix_transpose(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, ALL)), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=4), label="shape"))
    a = data.draw(arrays(dt, shape, device), label="x")
    check(wt.matrix_transpose(to_wt(a, device)), from_xp(xp.matrix_transpose(xp.asarray(a))),
          f"matrix_transpose({dt}{shape})", ulps=0)
    check(to_wt(a, device).mT, np.swapaxes(a, -1, -2), f"{dt}{shape}.mT", ulps=0)


# ---- dtype functions -----------------------------------------------------------------------------


def wt_dt(name):
    return getattr(wt, name)


def xp_dt(name):
    return getattr(xp, name)


@PROPS
@hyp.given(data=st.data())
def test_astype(api_device, data):
    device = api_device
    src = data.draw(st.sampled_from(held(device, ALL)), label="from")
    dst = data.draw(st.sampled_from(held(device, ALL)), label="to")
    a = data.draw(arrays(src, (data.draw(st.integers(0, 4)),), device), label="x")
    # The standard leaves casts that lose values implementation-defined:
    # "casting a ... floating-point value to an integer ... NaN and infinity,
    # and out-of-range ... unspecified"; a complex to a real one is not
    # allowed ("should not" cast complex to real); an integer to a narrower
    # integer overflows ("implementation-defined"). Those inputs are left out.
    if src in COMPLEX and dst not in COMPLEX:
        hyp.reject()
    if dst in INTS:
        info = np.iinfo(dst)
        lo, hi = (max(info.min, -(2**31)), min(info.max, 2**31 - 1)) if on_gpu(device) else (info.min, info.max)
        if src in FLOATS:
            a = np.where(np.isfinite(a), np.trunc(a), 0).astype(src)
            a = np.where((a >= lo) & (a <= hi) & (np.abs(a) < 2**24), a, 0).astype(src)
        elif src in INTS:
            a = np.where((a.astype(object) >= lo) & (a.astype(object) <= hi), a, 0).astype(src)
    copy = data.draw(st.booleans(), label="copy")
    with np.errstate(all="ignore"):
        want = from_xp(xp.astype(xp.asarray(a), xp_dt(dst), copy=True))
    x = to_wt(a, device)
    got = wt.astype(x, wt_dt(dst), copy=copy)
    if not copy and src == dst:
        assert got is x  # "If False and ... the same dtype, the function must return the input array"
    check(got, want, f"astype({src} -> {dst})", ulps=0)
    if src == dst and copy:
        assert got is not x


def same_kind(a: str, b: str) -> bool:
    """Both bool, both integers or both floating (real or complex): the
    standard's table; across kinds (bool with int8, int8 with float32)
    "the returned dtype will be implementation-specific" (result_type) and
    webtensor promotes as PyTorch does."""
    kind = {**dict.fromkeys(INTS, "i"), "bool": "b", **dict.fromkeys(FLOATS + COMPLEX, "f")}
    return kind[a] == kind[b]


def test_can_cast_and_result_type_tables():
    # Every pair of the standard's dtypes: can_cast and result_type as
    # array-api-strict's (the promotion table; pairs it leaves undefined,
    # such as uint64 with a signed integer, raise TypeError in both).
    for a in ALL:
        for b in ALL:
            if not same_kind(a, b):
                continue
            assert wt.can_cast(wt_dt(a), wt_dt(b)) == xp.can_cast(xp_dt(a), xp_dt(b)), (a, b)
            try:
                want = xp.result_type(xp_dt(a), xp_dt(b))
            except TypeError:
                with pytest.raises(TypeError):
                    wt.result_type(wt_dt(a), wt_dt(b))
                continue
            assert wt.result_type(wt_dt(a), wt_dt(b)) == wt_dt(str(want).split(".")[-1]), (a, b)


@PROPS
@hyp.given(data=st.data())
def test_result_type(api_device, data):
    """result_type of arrays, dtypes and Python scalars mixed (2024.12
    allows scalars): array-api-strict's, with a default floating dtype of
    float32 where it has float64 (the default is the implementation's)."""
    device = api_device
    n = data.draw(st.integers(1, 4), label="n")
    args_xp, args_wt = [], []
    first = data.draw(st.sampled_from(held(device, ALL)), label="first dtype")
    for _ in range(n):
        dt = data.draw(st.sampled_from([d for d in held(device, ALL) if same_kind(d, first)]))
        if data.draw(st.booleans(), label="array"):
            a = np.zeros((1,), dt)
            args_xp.append(xp.asarray(a))
            args_wt.append(to_wt(a, device))
        else:
            args_xp.append(xp_dt(dt))
            args_wt.append(wt_dt(dt))
    if data.draw(st.booleans(), label="scalar"):
        # a scalar of the arrays' kind (across kinds: "implementation-specific")
        kinds = {"b": [True], "i": [3], "f": [2.5] + ([1j] if first in COMPLEX else [])}
        s = data.draw(st.sampled_from(kinds["b" if first == "bool" else "i" if first in INTS else "f"]),
                      label="scalar")
        args_xp.append(s)
        args_wt.append(s)
    try:
        want = str(xp.result_type(*args_xp)).split(".")[-1]
    except (TypeError, ValueError):
        with pytest.raises((TypeError, ValueError)):
            wt.result_type(*args_wt)
        return
    assert wt.result_type(*args_wt) == wt_dt(want), (args_xp, want)


@pytest.mark.parametrize("dt", FLOATS + COMPLEX)
def test_finfo(dt):
    got, want = wt.finfo(wt_dt(dt)), xp.finfo(xp_dt(dt))
    for f in ("bits", "eps", "max", "min", "smallest_normal"):
        assert getattr(got, f) == getattr(want, f), (dt, f)
    # "dtype: real-valued floating-point data type"; a complex dtype's parts'
    assert got.dtype == wt_dt(str(want.dtype).split(".")[-1])
    assert wt.finfo(wt.asarray(np.zeros(1, dt))).eps == want.eps  # an array's dtype


@pytest.mark.parametrize("dt", INTS)
def test_iinfo(dt):
    got, want = wt.iinfo(wt_dt(dt)), xp.iinfo(xp_dt(dt))
    assert (got.bits, got.max, got.min) == (want.bits, want.max, want.min)
    assert got.dtype == wt_dt(dt)
    with pytest.raises((TypeError, ValueError)):
        wt.iinfo(wt.float32)


KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


@PROPS
@hyp.given(data=st.data())
def test_isdtype(data):
    dt = data.draw(st.sampled_from(ALL), label="dtype")
    kind = data.draw(st.one_of(st.sampled_from(KINDS), st.sampled_from(ALL).map(lambda d: ("dtype", d)),
                               st.lists(st.sampled_from(KINDS + list(NUMERIC)), min_size=1, max_size=3)), label="kind")

    def conv(k, ns):
        if isinstance(k, tuple):
            return getattr(ns, k[1])
        if isinstance(k, list):
            return tuple(getattr(ns, x) if x in ALL else x for x in k)
        return k

    assert wt.isdtype(wt_dt(dt), conv(kind, wt)) == xp.isdtype(xp_dt(dt), conv(kind, xp)), (dt, kind)
