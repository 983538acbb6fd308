"""Property tests (hypothesis) of the array API standard's indexing
(__getitem__) and assignment (__setitem__), on the CPU and WebGPU, with
NumPy as the oracle (its indexing is the standard's for these keys):
basic indexing (integers, slices with any nonzero step and negative bounds,
None, an Ellipsis), integer array indexing (one integer or integer array
per axis, broadcast together), boolean masks of the full shape, of the
leading axes and 0-d ones. Assignments take the same keys with a Python
scalar or an array broadcast to the selection, cast to x's dtype.
"""

from __future__ import annotations

import numpy as np
from array_api_props import (
    ALL,
    INTS,
    PROPS,
    arrays,
    check,
    elements,
    held,
    hyp,
    shapes,
    st,
    to_wt,
    xp,
)

import webtensor as wt

COVERED: set[str] = set()  # operators, not functions (__getitem__ and __setitem__ are checked here)


def exact(got, want, what):
    check(got, np.asarray(want), what, ulps=0)


def basic_key(data, shape):
    """A tuple of one item per axis (int, slice) with None inserted and maybe
    an Ellipsis standing for a run of full slices."""
    items = []
    for n in shape:
        kind = data.draw(st.sampled_from(["int", "slice", "full"] if n else ["slice", "full"]))
        if kind == "int":
            items.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "full":
            items.append(slice(None))
        else:
            bound = st.none() | st.integers(-n, n)  # in [-n, n]: the standard's bounds for a slice
            step = data.draw(st.none() | st.integers(-3, 3).filter(bool))
            items.append(slice(data.draw(bound), data.draw(bound), step))
    if items and data.draw(st.booleans(), label="ellipsis"):
        i = data.draw(st.integers(0, len(items)))
        j = data.draw(st.integers(i, len(items)))
        if all(it == slice(None) for it in items[i:j]):
            items[i:j] = [Ellipsis]
    for _ in range(data.draw(st.integers(0, 2), label="Nones")):
        items.insert(data.draw(st.integers(0, len(items))), None)
    if len(items) == 1 and data.draw(st.booleans(), label="bare"):
        return items[0]
    return tuple(items)


def int_array_key(data, shape, device, unique=False):
    """One integer or integer array per axis, broadcast together; values in
    [-n, n) ("each integer index ... in the half-open interval [-n, n)")."""
    if 0 in shape:
        hyp.reject()
    bshape = data.draw(shapes(min_dims=0, max_dims=2, min_side=1), label="index shape")
    items, arrays_ = [], 0
    for n in shape:
        if data.draw(st.booleans()) or arrays_ == 0 and n == shape[-1]:
            s = bshape[data.draw(st.integers(0, len(bshape))):]  # a suffix: broadcasts with bshape
            dt = data.draw(st.sampled_from(held(device, INTS)))
            lo = 0 if dt.startswith("u") else -n
            hi = min(n - 1, np.iinfo(dt).max)
            items.append(data.draw(arrays(dt, tuple(s), device, lo=lo, hi=hi)))
            arrays_ += 1
        else:
            items.append(data.draw(st.integers(-n, n - 1)))
    if unique:  # distinct positions: which of repeated assignments wins is unspecified
        flat = np.ravel_multi_index(tuple(np.broadcast_arrays(*[np.asarray(i) % n for i, n in zip(items, shape,
                                                                                               strict=True)])),
                                    shape)
        if len(set(flat.reshape(-1).tolist())) != flat.size:
            hyp.reject()
    return tuple(items)


def to_key(key, device):
    """A NumPy key as webtensor's (arrays become tensors on device)."""
    if isinstance(key, tuple):
        return tuple(to_wt(k, device) if isinstance(k, np.ndarray) else k for k in key)
    return to_wt(key, device) if isinstance(key, np.ndarray) else key


def draw_key(data, a, device, unique=False):
    kind = data.draw(st.sampled_from(["basic", "int arrays", "mask", "leading mask", "0-d mask"]), label="key")
    if kind == "basic":
        return kind, basic_key(data, a.shape)
    if kind == "int arrays":
        if a.ndim == 0:
            hyp.reject()
        return kind, int_array_key(data, a.shape, device, unique)
    if kind == "0-d mask":
        return kind, np.asarray(data.draw(st.booleans()))
    if a.ndim == 0:
        hyp.reject()
    k = a.ndim if kind == "mask" else data.draw(st.integers(1, a.ndim))
    return kind, data.draw(arrays("bool", a.shape[:k], device), label="mask")


@PROPS
@hyp.given(data=st.data())
def test_getitem(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, ALL)), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=0, max_dims=4), device), label="x")
    kind, key = draw_key(data, a, device)
    want = a[key]
    x = to_wt(a, device)
    view = data.draw(st.booleans(), label="of a view")
    if view and a.ndim >= 2:  # index a transposed view: strides, not the buffer's order
        x = wt.matrix_transpose(wt.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device))
    exact(x[to_key(key, device)], want, f"{dt}{a.shape}[{kind} {key!r}]")


@PROPS
@hyp.given(data=st.data())
def test_getitem_single_int_array(api_device, data):
    # A single integer array index on a 1-d array (N = 1), negatives counted from the end.
    device = api_device
    dt = data.draw(st.sampled_from(held(device, ALL)), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=1, max_dims=1, min_side=1), device), label="x")
    n = a.shape[0]
    idx = data.draw(arrays("int64", shapes(min_dims=0, max_dims=2), device, lo=-n, hi=n - 1), label="index")
    exact(to_wt(a, device)[to_wt(idx, device)], a[idx], f"{dt}{a.shape}[{idx.tolist()}]")
    # array-api-strict agrees (the oracle is the standard's)
    np.testing.assert_array_equal(np.asarray(xp.asarray(a)[xp.asarray(idx)]._array), a[idx])


def value_for(data, want_shape, dt, device):
    """A Python scalar of dt's kind, or an array broadcasting to want_shape of
    a dtype that casts to dt by promotion (the standard leaves other casts to
    the implementation: "how values are cast ... is implementation-defined")."""
    if data.draw(st.booleans(), label="scalar"):
        v = data.draw(elements(dt, device), label="value")
        return v, v
    srcs = [d for d in held(device, ALL) if xp.can_cast(getattr(xp, d), getattr(xp, dt))]
    vdt = data.draw(st.sampled_from(srcs), label="value dtype")
    k = data.draw(st.integers(0, len(want_shape)), label="value rank")
    vshape = tuple(1 if data.draw(st.booleans()) else s for s in want_shape[len(want_shape) - k:])
    v = data.draw(arrays(vdt, vshape, device), label="value")
    return v, to_wt(v, device)


@PROPS
@hyp.given(data=st.data())
def test_setitem(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, ALL)), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=0, max_dims=3), device), label="x")
    kind, key = draw_key(data, a, device, unique=True)
    sel = a[key]
    v_np, v_wt = value_for(data, sel.shape, dt, device)
    want = a.copy()
    want[key] = np.asarray(v_np).astype(dt) if isinstance(v_np, np.ndarray) else v_np
    x = to_wt(a, device)
    ident = id(x)
    x[to_key(key, device)] = v_wt
    assert id(x) == ident
    assert x.dtype == getattr(wt, dt), "setitem changed the dtype"  # "must not affect the data type of self"
    exact(x, want, f"{dt}{a.shape}[{kind} {key!r}] = {v_np!r}")
