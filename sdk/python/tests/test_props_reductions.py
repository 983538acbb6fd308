"""Property tests (hypothesis) of the array API standard's reductions,
statistics, searching, sorting and set functions against array-api-strict,
on the CPU and WebGPU: dtypes the standard allows and the device holds,
shapes with 0-d arrays and size-0 axes, axis (None, one, several, negative),
keepdims, correction, dtype=, stable/descending, side=.
"""

from __future__ import annotations

import numpy as np
import pytest
from array_api_props import (
    FLOATS,
    PROPS,
    accepted,
    arrays,
    check,
    from_xp,
    held,
    hyp,
    on_gpu,
    oracle,
    shapes,
    st,
    to_wt,
    to_xp,
    xp,
)

import webtensor as wt

REDUCTIONS = ["all", "any", "max", "min", "mean", "prod", "sum", "std", "var", "count_nonzero"]
CUMULATIVE = ["cumulative_sum", "cumulative_prod"]
SEARCH = ["argmax", "argmin", "nonzero", "where", "searchsorted", "count_nonzero"]
SORT = ["sort", "argsort"]
SETS = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "isin"]
COVERED = set(REDUCTIONS + CUMULATIVE + SEARCH + SORT + SETS + ["diff"])

# Values for sums and products: the standard leaves the order of a
# reduction to the implementation, so values large enough that the order
# decides between overflow and a finite result are not drawn (|x| <= 1e4;
# NaN and infinities still are). Integers stay small for the same reason
# (the standard: integer overflow of sum/prod is implementation-defined).
ORDER_FREE = {"sum", "prod", "mean", "std", "var", "cumulative_sum", "cumulative_prod"}


def values(name, dt, shape, device):
    if name in ORDER_FREE:
        if dt.startswith(("float", "complex")):
            return arrays(dt, shape, device, magnitude=1e4)
        if dt != "bool":
            return arrays(dt, shape, device, lo=-3 if dt.startswith("int") else 0, hi=3)
    return arrays(dt, shape, device)


def axis_for(ndim: int, several: bool = True):
    """None, one axis (maybe negative) or, where allowed, a tuple of distinct axes."""
    if ndim == 0:
        return st.just(None)
    one = st.integers(-ndim, ndim - 1)
    opts = [st.none(), one]
    if several:
        opts.append(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim).map(tuple))
    return st.one_of(opts)


def gpu_accumulator(device, want):
    """WebGPU holds no uint64: unsigned sums and products accumulate as u32 there."""
    return want.astype(np.uint32) if on_gpu(device) and want.dtype == np.uint64 else want


def reduction_tolerance(name, a, dt):
    """Sums in another order differ by about n eps sum|x|: an absolute bound."""
    if not dt.startswith(("float", "complex")) or a.size == 0:
        return 16, 0.0
    fin = np.abs(a[np.isfinite(a)]).astype(np.float64)
    scale = float(fin.sum()) if fin.size else 0.0
    eps = float(np.finfo(dt).eps)
    if name in ("std", "var"):
        scale = scale * max(1.0, float(fin.max()) if fin.size else 0.0)
    if name == "prod":
        return 16 * max(1, a.size), 0.0
    return 16 * max(1, a.size), 4 * a.size * eps * scale


def dtypes_for(name, device):
    return held(device, accepted(name, 1))


def finite_products(want, finite_in):
    """prod and cumulative_prod of complex numbers multiply as multiply
    does, whose result the standard leaves implementation-dependent where a
    component is NaN or infinite ("When at least one of a, b, c, or d is
    NaN, +infinity, or -infinity, ... implementation-dependent"), and the
    order of the products decides such components (and an overflow): the
    elements whose factors are all finite and whose result is finite (None:
    compare all)."""
    if want.dtype.kind != "c":
        return None
    return np.broadcast_to(finite_in, want.shape) & np.isfinite(want)


@pytest.mark.parametrize("name", REDUCTIONS)
@PROPS
@hyp.given(data=st.data())
def test_reduction(name, api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(dtypes_for(name, device)), label="dtype")
    a = data.draw(values(name, dt, shapes(min_dims=0), device), label="x")
    axis = data.draw(axis_for(a.ndim, several=True), label="axis")
    kw = {"axis": axis, "keepdims": data.draw(st.booleans(), label="keepdims")}
    if name in ("std", "var"):
        kw["correction"] = data.draw(st.sampled_from([0, 1, 0.5]), label="correction")
    wkw = dict(kw)
    if name in ("sum", "prod") and data.draw(st.booleans(), label="dtype="):
        dname = data.draw(st.sampled_from(held(device, accepted(name, 1))), label="dtype kw")
        # Only casts the standard defines (can_cast: a float to a narrower
        # int, a complex to a real are unspecified or refused by astype).
        if not xp.can_cast(getattr(xp, dt), getattr(xp, dname)):
            hyp.reject()
        kw["dtype"], wkw["dtype"] = getattr(xp, dname), getattr(wt, dname)
    axes = range(a.ndim) if axis is None else [x % a.ndim for x in ((axis,) if isinstance(axis, int) else axis)]
    count = int(np.prod([a.shape[i] for i in axes]))
    kept = int(np.prod([d for i, d in enumerate(a.shape) if i not in axes]))
    if name in ("max", "min") and count == 0:
        # "When the number of elements over which to compute the maximum
        # value is zero, the maximum value is implementation-defined":
        # webtensor refuses (even where the result is empty).
        with pytest.raises(Exception):  # noqa: B017, PT011
            getattr(wt, name)(to_wt(a, device), axis=axis, keepdims=kw["keepdims"]).numpy()
        return
    if count == 0 and kept == 0:  # an empty result: its dtype and shape
        want = from_xp(getattr(xp, name)(to_xp(np.ones((1,) * a.ndim, a.dtype)), **kw))
        want = np.zeros(np.zeros(a.shape).sum(axis=axis, keepdims=kw["keepdims"]).shape, want.dtype)
    else:
        want = oracle(name, a, **kw)
    want = gpu_accumulator(device, want)
    ulps, atol = reduction_tolerance(name, a, dt)
    if on_gpu(device) and want.dtype == np.int64 and want.size and np.abs(want).max() >= 2**31:
        return
    # The sign of a zero sum depends on the order of the additions; it is not compared.
    only = finite_products(want, np.all(np.isfinite(a), axis=axis, keepdims=kw["keepdims"])) if name == "prod" else None
    check(getattr(wt, name)(to_wt(a, device), **wkw), want, f"{name}({dt}, {kw})", ulps=ulps, atol=atol,
          zero_sign=name not in ("sum", "mean", "std", "var", "prod"), only=only)


@pytest.mark.parametrize("name", CUMULATIVE)
@PROPS
@hyp.given(data=st.data())
def test_cumulative(name, api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(dtypes_for(name, device)), label="dtype")
    a = data.draw(values(name, dt, shapes(min_dims=1), device), label="x")
    kw = {"include_initial": data.draw(st.booleans(), label="include_initial")}
    if a.ndim > 1 or data.draw(st.booleans()):
        kw["axis"] = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    want = gpu_accumulator(device, oracle(name, a, **kw))
    ulps, atol = reduction_tolerance(name.split("_")[1], a, dt)
    only = None
    if name == "cumulative_prod":
        ax = kw.get("axis", 0)
        fin = np.logical_and.accumulate(np.isfinite(a), axis=ax)
        if kw["include_initial"]:
            fin = np.concatenate([np.ones_like(np.take(fin, [0], axis=ax)), fin], axis=ax) if fin.shape[ax] else \
                np.ones(want.shape, bool)
        only = finite_products(want, fin)
    check(getattr(wt, name)(to_wt(a, device), **kw), want, f"{name}({dt}, {kw})", ulps=ulps, atol=atol,
          zero_sign=False, only=only)


@PROPS
@hyp.given(data=st.data())
def test_diff(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, [d for d in accepted("diff", 1) if d != "bool"])), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=1), device, magnitude=1e4) if dt in FLOATS else
                  arrays(dt, shapes(min_dims=1), device, lo=-100, hi=100), label="x")
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    n = data.draw(st.integers(1, 3), label="n")
    want = oracle("diff", a, axis=axis, n=n)
    check(wt.diff(to_wt(a, device), axis=axis, n=n), want, f"diff({dt}, axis={axis}, n={n})")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@PROPS
@hyp.given(data=st.data())
def test_argmax_argmin(name, api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, accepted(name, 1))), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=0, min_side=1), device), label="x")
    axis = data.draw(axis_for(a.ndim, several=False), label="axis")
    keep = data.draw(st.booleans(), label="keepdims")
    want = oracle(name, a, axis=axis, keepdims=keep)
    check(getattr(wt, name)(to_wt(a, device), axis=axis, keepdims=keep), want, f"{name}({dt}, {axis}, {keep})")


@PROPS
@hyp.given(data=st.data())
def test_nonzero_where(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, accepted("nonzero", 1))), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=1), device), label="x")
    got, want = wt.nonzero(to_wt(a, device)), [from_xp(r) for r in xp.nonzero(to_xp(a))]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        check(g, w, f"nonzero({dt})")
    from array_api_props import broadcastable

    s = data.draw(broadcastable(3))
    c = data.draw(arrays("bool", s[0], device), label="cond")
    da, db = data.draw(st.sampled_from(held(device, accepted("equal", 2))), label="dtypes")
    try:
        xp.where(xp.ones((1,), dtype=xp.bool), xp.ones((1,), dtype=getattr(xp, da)),
                 xp.ones((1,), dtype=getattr(xp, db)))
    except TypeError:
        hyp.reject()
    x1, x2 = data.draw(arrays(da, s[1], device)), data.draw(arrays(db, s[2], device))
    want = oracle("where", c, x1, x2, wider=False)
    check(wt.where(to_wt(c, device), to_wt(x1, device), to_wt(x2, device)), want, f"where({da}, {db})")
    sc = x2.reshape(-1)[0].item() if x2.size and da == db else None
    if sc is not None:  # 2024.12: x2 may be a Python scalar
        check(wt.where(to_wt(c, device), to_wt(x1, device), sc), oracle("where", c, x1, sc, wider=False),
              f"where({da}, scalar {sc!r})")


def sortable(device):
    return held(device, [d for d in accepted("sort", 1)])


@pytest.mark.parametrize("name", SORT)
@PROPS
@hyp.given(data=st.data())
def test_sort_argsort(name, api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(sortable(device)), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=1), device), label="x")
    if dt in FLOATS:
        a = np.where(a == 0, np.zeros_like(a), a)  # -0 and +0 compare equal: their order is any
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    desc = data.draw(st.booleans(), label="descending")
    stable = data.draw(st.booleans(), label="stable")
    want = oracle(name, a, axis=axis, descending=desc, stable=True)
    got = getattr(wt, name)(to_wt(a, device), axis=axis, descending=desc, stable=stable)
    if name == "argsort" and not stable:
        # Unstable: any order of equal elements. The gathered values must sort.
        vals = np.take_along_axis(a, got.numpy(), axis=axis)
        np.testing.assert_array_equal(vals, np.take_along_axis(a, want, axis=axis))
        return
    check(got, want, f"{name}({dt}, axis={axis}, descending={desc})")


@PROPS
@hyp.given(data=st.data())
def test_searchsorted(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, [d for d in accepted("sort", 1) if d != "bool"])), label="dtype")
    x1 = np.sort(data.draw(arrays(dt, shapes(min_dims=1, max_dims=1, max_side=6), device), label="x1"))
    if dt in FLOATS:
        x1 = np.where(x1 == 0, np.zeros_like(x1), x1)
    x2 = data.draw(arrays(dt, shapes(min_dims=0), device), label="x2")
    side = data.draw(st.sampled_from(["left", "right"]), label="side")
    if dt in FLOATS:
        x2 = np.where(x2 == 0, np.zeros_like(x2), x2)
    kw = {"side": side}
    if data.draw(st.booleans(), label="sorter"):
        perm = np.asarray(data.draw(st.permutations(range(x1.size))), dtype=np.int64)
        shuffled = np.empty_like(x1)
        shuffled[perm] = x1
        want = oracle("searchsorted", shuffled, x2, side=side, sorter=perm)
        got = wt.searchsorted(to_wt(shuffled, device), to_wt(x2, device), side=side, sorter=to_wt(perm, device))
    else:
        want, got = oracle("searchsorted", x1, x2, **kw), wt.searchsorted(to_wt(x1, device), to_wt(x2, device), **kw)
    check(got, want, f"searchsorted({dt}, {side})")


@pytest.mark.parametrize("name", SETS)
@PROPS
@hyp.given(data=st.data())
def test_sets(name, api_device, data):
    device = api_device
    arity = 2 if name == "isin" else 1
    combos = held(device, accepted("equal", 2) if name == "isin" else accepted("unique_values", 1))
    if name == "isin":
        combos = [(x, y) for x, y in combos if x == y or not {x, y} & {"bool"}]
    pick = data.draw(st.sampled_from(combos), label="dtypes")
    da, db = (pick, None) if arity == 1 else pick
    a = data.draw(arrays(da, shapes(min_dims=0 if name == "isin" else 1), device), label="x")
    if name == "isin":
        # isin is 2025.12's (array-api-strict refuses it at 2024.12); webtensor
        # has it, so NumPy is its oracle.
        b = data.draw(arrays(db, shapes(min_dims=1, max_dims=1), device), label="test_elements")
        inv = data.draw(st.booleans(), label="invert")
        check(wt.isin(to_wt(a, device), to_wt(b, device), invert=inv), np.isin(a, b, invert=inv),
              f"isin({da}, {db})")
        return
    if da in FLOATS or da.startswith("complex"):
        a = np.where(a == 0, np.zeros_like(a), a)  # -0 and +0 are one value: which sign it keeps is free
    got = getattr(wt, name)(to_wt(a, device))
    want = getattr(xp, name)(to_xp(a))
    if name == "unique_values":
        got, want = (got,), (want,)
    # The standard: "the order of unique elements is not specified"; webtensor
    # and array-api-strict both sort, so the order is compared too. NaNs are
    # each distinct ("each NaN ... distinct").
    for g, w, field in zip(got, want, ("values", "indices/counts", "inverse", "counts"), strict=False):
        check(g, from_xp(w), f"{name}({da}) {field}")
    assert len(got) == len(want)
