"""Property tests (hypothesis) of the array API standard's manipulation
functions (and take, take_along_axis, clip) against array-api-strict, on
the CPU and WebGPU: every dtype the device holds (and dtype mixes where the
function promotes: concat, stack), shapes with 0-d arrays and size-0 axes,
negative axes and axis tuples. Values move, never change, so every result
must match exactly (NaN where NaN, signed zeros kept).
"""

from __future__ import annotations

import numpy as np
import pytest
from array_api_props import (
    ALL,
    PROPS,
    REAL,
    accepted,
    arrays,
    broadcastable,
    check,
    from_xp,
    held,
    hyp,
    oracle,
    shapes,
    st,
    to_wt,
    to_xp,
    xp,
)

import webtensor as wt

COVERED = {"broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
           "reshape", "roll", "squeeze", "stack", "tile", "unstack", "take", "take_along_axis", "clip"}


def exact(got, want: np.ndarray, what: str):
    check(got, want, what, ulps=0)


def draw_x(data, device, min_dims=0, max_dims=3, min_side=0, max_side=3, dtypes=ALL):
    dt = data.draw(st.sampled_from(held(device, dtypes)), label="dtype")
    return dt, data.draw(arrays(dt, shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                           max_side=max_side), device), label="x")


def axes_of(data, ndim: int, label="axis"):
    return data.draw(st.integers(-ndim, ndim - 1), label=label)


def compare(name, device, args, kw, what):
    """name(*args, **kw) against array-api-strict's (arrays in args are NumPy's)."""
    want = getattr(xp, name)(*[to_xp(a) if isinstance(a, np.ndarray) else a for a in args], **kw)
    got = getattr(wt, name)(*[to_wt(a, device) if isinstance(a, np.ndarray) else a for a in args], **kw)
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), f"{what}: {len(got)} arrays, want {len(want)}"
        for g, w in zip(got, want, strict=True):
            exact(g, from_xp(w), what)
        return
    exact(got, from_xp(want), what)


@PROPS
@hyp.given(data=st.data())
def test_broadcast(api_device, data):
    device = api_device
    n = data.draw(st.integers(1, 3), label="n")
    sh = data.draw(broadcastable(n), label="shapes")
    dts = [data.draw(st.sampled_from(held(device, ALL))) for _ in sh]
    xs = [data.draw(arrays(d, s, device)) for d, s in zip(dts, sh, strict=True)]
    compare("broadcast_arrays", device, xs, {}, f"broadcast_arrays({sh})")
    target = np.broadcast_shapes(*sh)
    extra = data.draw(st.lists(st.integers(0, 3), max_size=2), label="leading") + list(target)
    compare("broadcast_to", device, [xs[0]], {"shape": tuple(extra)}, f"broadcast_to({sh[0]} -> {extra})")


@PROPS
@hyp.given(data=st.data())
def test_concat_stack(api_device, data):
    device = api_device
    name = data.draw(st.sampled_from(["concat", "stack"]), label="fn")
    base = data.draw(shapes(min_dims=0 if name == "stack" else 1), label="shape")
    n = data.draw(st.integers(1, 3), label="n")
    axis = None
    if name == "concat":
        axis = data.draw(st.none() | st.integers(-len(base), len(base) - 1), label="axis")
    else:
        axis = data.draw(st.integers(-len(base) - 1, len(base)), label="axis")
    # Mixed dtypes promote by the table (concat/stack: "the result's dtype is
    # determined by Type Promotion Rules").
    pair = data.draw(st.sampled_from(held(device, accepted("add", 2)) + [("bool", "bool")]), label="dtypes")
    xs = []
    for i in range(n):
        s = list(base)
        if name == "concat" and axis is not None:
            s[axis] = data.draw(st.integers(0, 3))
        if name == "concat" and axis is None:
            s = list(data.draw(shapes(min_dims=1)))
        xs.append(data.draw(arrays(pair[i % 2], tuple(s), device)))
    kw = {"axis": axis}
    want = from_xp(getattr(xp, name)([to_xp(a) for a in xs], **kw))
    got = getattr(wt, name)([to_wt(a, device) for a in xs], **kw)
    exact(got, want, f"{name}({[(a.dtype.name, a.shape) for a in xs]}, axis={axis})")


@PROPS
@hyp.given(data=st.data())
def test_axes_moves(api_device, data):
    device = api_device
    name = data.draw(st.sampled_from(["expand_dims", "flip", "moveaxis", "permute_dims", "squeeze", "unstack"]),
                     label="fn")
    dt, a = draw_x(data, device, min_dims=1 if name in ("moveaxis", "unstack") else 0)
    nd = a.ndim
    kw, args = {}, [a]
    if name == "expand_dims":
        kw["axis"] = data.draw(st.integers(-nd - 1, nd), label="axis")
    elif name == "flip":
        kw["axis"] = data.draw(st.none() | st.integers(-nd, nd - 1) if nd else st.none(), label="axis")
        if nd and data.draw(st.booleans(), label="tuple"):
            kw["axis"] = tuple(data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)))
    elif name == "moveaxis":
        k = data.draw(st.integers(1, nd), label="k")
        src = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda v: v % nd, min_size=k, max_size=k))
        dst = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda v: v % nd, min_size=k, max_size=k))
        args = [a, src[0] if k == 1 else tuple(src), dst[0] if k == 1 else tuple(dst)]
    elif name == "permute_dims":
        args = [a, tuple(data.draw(st.permutations(range(nd)), label="axes"))]
    elif name == "squeeze":
        ones = [i for i, s in enumerate(a.shape) if s == 1]
        if not ones:
            a = a.reshape((1, *a.shape))
            args, ones = [a], [0]
        pick = data.draw(st.lists(st.sampled_from(ones), unique=True, min_size=1), label="axes")
        neg = [p - a.ndim if data.draw(st.booleans()) else p for p in pick]
        kw["axis"] = neg[0] if len(neg) == 1 else tuple(neg)
    elif name == "unstack":
        kw["axis"] = axes_of(data, nd)
    compare(name, device, args, kw, f"{name}({dt}{a.shape}, {args[1:]}, {kw})")


@PROPS
@hyp.given(data=st.data())
def test_squeeze_refuses_non_one(api_device, data):
    # "If a specified axis has a size greater than one (i.e., it is not a
    # singleton dimension), a ValueError should be raised."
    device = api_device
    dt, a = draw_x(data, device, min_dims=1, min_side=2)
    with pytest.raises(ValueError):  # noqa: PT011
        wt.squeeze(to_wt(a, device), axis=axes_of(data, a.ndim))


@PROPS
@hyp.given(data=st.data())
def test_reshape(api_device, data):
    device = api_device
    dt, a = draw_x(data, device, min_dims=0, max_dims=4)
    shape = list(data.draw(st.permutations(list(a.shape)), label="order"))
    # regroup: merge neighbours or split off ones, then maybe infer one with -1
    if len(shape) >= 2 and data.draw(st.booleans(), label="merge"):
        shape = [shape[0] * shape[1], *shape[2:]]
    if data.draw(st.booleans(), label="ones"):
        shape.insert(data.draw(st.integers(0, len(shape))), 1)
    if shape and a.size and data.draw(st.booleans(), label="-1"):
        shape[data.draw(st.integers(0, len(shape) - 1))] = -1
    view = data.draw(st.booleans(), label="from a view")
    x = to_wt(a, device)
    src = a
    if view and a.ndim >= 2:  # a transposed view: reshape must read it in row-major order
        x, src = wt.matrix_transpose(x), np.swapaxes(a, -1, -2)
    copy = data.draw(st.sampled_from([None, True]), label="copy")
    want = from_xp(xp.reshape(to_xp(np.ascontiguousarray(src)), tuple(shape)))
    exact(wt.reshape(x, tuple(shape), copy=copy), want, f"reshape({dt}{src.shape} -> {shape}, copy={copy})")


@PROPS
@hyp.given(data=st.data())
def test_roll(api_device, data):
    device = api_device
    dt, a = draw_x(data, device)
    nd = a.ndim
    kind = data.draw(st.sampled_from(["flat", "one", "tuple"] if nd else ["flat"]), label="form")
    shift = st.integers(-7, 7)
    if kind == "flat":
        kw = {"shift": data.draw(shift, label="shift")}
    elif kind == "one":
        kw = {"shift": data.draw(shift, label="shift"), "axis": axes_of(data, nd)}
    else:
        ax = tuple(data.draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=3), label="axes"))
        kw = {"shift": tuple(data.draw(shift) for _ in ax), "axis": ax}
    compare("roll", device, [a], kw, f"roll({dt}{a.shape}, {kw})")


@PROPS
@hyp.given(data=st.data())
def test_repeat_tile(api_device, data):
    device = api_device
    dt, a = draw_x(data, device, min_dims=1 if data.draw(st.booleans()) else 0)
    name = data.draw(st.sampled_from(["repeat", "tile"]), label="fn")
    if name == "tile":
        reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4), label="reps"))
        compare("tile", device, [a, reps], {}, f"tile({dt}{a.shape}, {reps})")
        return
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none(), label="axis")
    n = a.size if axis is None else a.shape[axis]
    form = data.draw(st.sampled_from(["int", "array", "one"]), label="repeats")
    if form == "int":
        reps = data.draw(st.integers(0, 3))
        r_xp = r_wt = reps
    else:
        counts = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=1 if form == "one" else n,
                                               max_size=1 if form == "one" else n)), dtype=np.int64)
        r_xp, r_wt = to_xp(counts), to_wt(counts, device)
    want = from_xp(xp.repeat(to_xp(a), r_xp, axis=axis))
    exact(wt.repeat(to_wt(a, device), r_wt, axis=axis), want, f"repeat({dt}{a.shape}, {form}, axis={axis})")


@PROPS
@hyp.given(data=st.data())
def test_take(api_device, data):
    device = api_device
    dt, a = draw_x(data, device, min_dims=1, min_side=1)
    axis = axes_of(data, a.ndim)
    if a.ndim == 1 and data.draw(st.booleans(), label="axis None"):
        axis = None
    n = a.shape[0 if axis is None else axis]
    # "negative indices ... count from the last": both signs, in range
    idt = data.draw(st.sampled_from(held(device, ("int8", "int16", "int32", "int64", "uint8"))), label="index dtype")
    lo = 0 if idt.startswith("u") else -n
    idx = np.asarray(data.draw(st.lists(st.integers(lo, n - 1), max_size=5), label="indices"), dtype=idt)
    kw = {} if axis is None else {"axis": axis}
    compare("take", device, [a, idx], kw, f"take({dt}{a.shape}, {idx.tolist()}, {kw})")


@PROPS
@hyp.given(data=st.data())
def test_take_along_axis(api_device, data):
    device = api_device
    dt, a = draw_x(data, device, min_dims=1, min_side=1)
    axis = axes_of(data, a.ndim)
    n = a.shape[axis]
    ishape = list(a.shape)
    ishape[axis] = data.draw(st.integers(0, 4), label="count")
    # the other axes broadcast ("x and indices ... must be broadcast-compatible" except along axis)
    ishape = [1 if i != axis % a.ndim and data.draw(st.booleans()) else s for i, s in enumerate(ishape)]
    idx = data.draw(arrays("int64", tuple(ishape), device, lo=-n, hi=n - 1), label="indices")
    compare("take_along_axis", device, [a, idx], {"axis": axis}, f"take_along_axis({dt}{a.shape}, {ishape}, {axis})")


@PROPS
@hyp.given(data=st.data())
def test_clip(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, REAL)), label="dtype")
    sx, smin, smax = data.draw(broadcastable(3), label="shapes")
    a = data.draw(arrays(dt, sx, device), label="x")
    kw_xp, kw_wt = {}, {}
    for key, s in (("min", smin), ("max", smax)):
        form = data.draw(st.sampled_from(["none", "scalar", "array"]), label=key)
        if form == "none":
            continue
        b = data.draw(arrays(dt, s if form == "array" else (), device), label=key + " value")
        if form == "array" and np.broadcast_shapes(b.shape, a.shape) != a.shape:
            b = b.reshape(-1)[:1].reshape(()) if b.size else np.zeros((), dt)
        if form == "scalar":
            kw_xp[key] = kw_wt[key] = b.item()
        else:
            kw_xp[key], kw_wt[key] = to_xp(b), to_wt(b, device)
    if "min" in kw_xp and "max" in kw_xp:
        # "If both min and max are provided and min > max ... the behavior is unspecified"
        lo, hi = (np.asarray(getattr(kw_xp[k], "_array", kw_xp[k])) for k in ("min", "max"))
        if np.any(lo > hi):
            hyp.reject()
    want = from_xp(xp.clip(to_xp(a), **kw_xp))
    got = wt.clip(to_wt(a, device), **kw_wt)
    # The sign of a zero picked between -0 and +0 is free, as in maximum/minimum.
    check(got, want, f"clip({dt}{a.shape}, {sorted(kw_xp)})", ulps=0, zero_sign=False)


def test_strict_oracle_agrees():
    assert oracle("flip", np.arange(3)).tolist() == [2, 1, 0]
