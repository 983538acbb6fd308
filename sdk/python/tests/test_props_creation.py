"""Property tests (hypothesis) of the array API standard's creation
functions against array-api-strict and NumPy, on the CPU and WebGPU: every
dtype the device holds, shapes with 0-d and size-0 axes, the default dtypes
where dtype is None (webtensor's are those __array_namespace_info__ names:
float32 and complex64, where array-api-strict's are float64 and complex128;
the standard leaves the defaults to the implementation, "Default Data
Types"), fill values at the ends of each dtype's range, device= honoured.
"""

from __future__ import annotations

import numpy as np
import pytest
from array_api_props import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    PROPS,
    arrays,
    check,
    elements,
    from_xp,
    held,
    hyp,
    int_range,
    shapes,
    st,
    to_wt,
    to_xp,
    xp,
)

import webtensor as wt

COVERED = {"arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
           "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like", "__array_namespace_info__"}

INFO = wt.__array_namespace_info__()


def default(kind: str, device: str) -> str:
    """The default dtype of kind ("real floating", "complex floating", "integral") on device."""
    return named(INFO.default_dtypes(device=device)[kind])


def named(dt) -> str:
    """The standard's name of a webtensor dtype."""
    for n, d in INFO.dtypes().items():
        if d == dt:
            return n
    raise AssertionError(f"{dt} is no dtype of the standard")


def dtype_of(v) -> str:
    """The dtype a Python scalar gives where dtype is None (the standard: bool,
    the default integer, real and complex floating dtypes)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    return "complex64" if isinstance(v, complex) else "float32"


def fill_for(dt: str, device: str):
    """A Python scalar that dtype dt holds: bools, ints at the ends of the
    range, floats and complex numbers with the special values."""
    if dt == "bool":
        return st.booleans()
    if dt in INTS:
        return elements(dt, device)
    if dt in FLOATS:
        return elements(dt, device).map(float)
    return elements(dt, device).map(complex)


def same_values(got, want: np.ndarray, what: str):
    """Exact equality (NaN where NaN, signed zeros kept)."""
    check(got, want, what, ulps=0)


def test_default_dtypes_and_capabilities():
    # The standard's __array_namespace_info__: default dtypes by kind (the
    # default floating dtype is the implementation's to choose), capabilities
    # with its three keys, devices listing the default one, dtypes by kind.
    for dev in ["cpu"] + [d for d in wt.devices() if d.startswith("webgpu")]:
        dd = INFO.default_dtypes(device=dev)
        assert {k: named(v) for k, v in dd.items()} == {"real floating": "float32", "complex floating": "complex64",
                                                         "integral": "int64", "indexing": "int64"}
        assert set(INFO.dtypes(device=dev)) <= set(ALL)
        for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
                     "numeric", ("bool", "integral")):
            got = set(INFO.dtypes(device=dev, kind=kind))
            want = {n for n, d in INFO.dtypes(device=dev).items() if wt.isdtype(d, kind)}
            assert got == want, (dev, kind)
    caps = INFO.capabilities()
    assert set(caps) >= {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert INFO.default_device() in INFO.devices()
    assert "cpu" in INFO.devices()


@PROPS
@hyp.given(data=st.data())
def test_zeros_ones_empty_full(api_device, data):
    device = api_device
    shape = data.draw(shapes(min_dims=0), label="shape")
    name = data.draw(st.sampled_from(["zeros", "ones", "empty", "full"]), label="fn")
    dt = data.draw(st.sampled_from([None] + held(device, ALL)), label="dtype")
    form = data.draw(st.sampled_from([shape, list(shape)] + ([shape[0]] if len(shape) == 1 else [])), label="form")
    kw = {"device": device} if dt is None else {"dtype": getattr(wt, dt), "device": device}
    if name == "full":
        v = data.draw(fill_for(dt, device) if dt else st.one_of(st.booleans(), st.integers(-(2**31), 2**31 - 1),
                                                                  st.floats(width=32), st.complex_numbers(width=64)),
                      label="fill")
        got = wt.full(form, v, **kw)
        want = np.full(shape, v, dtype=dt or dtype_of(v))
    else:
        got = getattr(wt, name)(form, **kw)
        want = np.full(shape, 1 if name == "ones" else 0, dtype=dt or "float32")
    assert got.device == device
    if name == "empty":  # "uninitialized": dtype and shape only
        assert (named(got.dtype), tuple(got.shape)) == (want.dtype.name, want.shape)
        return
    same_values(got, want, f"{name}({form}, {kw})")


@PROPS
@hyp.given(data=st.data())
def test_like(api_device, data):
    device = api_device
    name = data.draw(st.sampled_from(["zeros_like", "ones_like", "empty_like", "full_like"]), label="fn")
    da = data.draw(st.sampled_from(held(device, ALL)), label="x dtype")
    a = data.draw(arrays(da, shapes(min_dims=0), device), label="x")
    dt = data.draw(st.sampled_from([None] + held(device, ALL)), label="dtype")
    out = dt or da
    kw = {} if dt is None else {"dtype": getattr(wt, dt)}
    x = to_wt(a, device)
    if name == "full_like":
        v = data.draw(fill_for(out, device), label="fill")
        got, want = wt.full_like(x, v, **kw), np.full(a.shape, v, dtype=out)
    else:
        got = getattr(wt, name)(x, **kw)
        want = np.full(a.shape, 1 if name == "ones_like" else 0, dtype=out)
    assert got.device == device  # "device: ... If device is None, the output array device must be inferred from x"
    if name == "empty_like":
        assert (named(got.dtype), tuple(got.shape)) == (out, a.shape)
        return
    same_values(got, want, f"{name}({da}, {kw})")


@PROPS
@hyp.given(data=st.data())
def test_full_int_extremes(api_device, data):
    # Integer fill values are exact across the range (not through a float).
    device = api_device
    dt = data.draw(st.sampled_from(held(device, INTS)), label="dtype")
    lo, hi = int_range(dt, device)
    v = data.draw(st.sampled_from([lo, hi, lo + 1, hi - 1, 0]) | st.integers(lo, hi), label="fill")
    same_values(wt.full((2,), v, dtype=getattr(wt, dt), device=device), np.full((2,), v, dtype=dt), f"full({v}, {dt})")


def arange_args(data, kind: str):
    if kind == "int":
        start, stop = data.draw(st.integers(-20, 20)), data.draw(st.integers(-20, 20))
        step = data.draw(st.integers(-5, 5).filter(bool))
    else:  # multiples of 1/8: exact in float32, so the length is exact too
        q = st.integers(-160, 160).map(lambda i: i / 8)
        start, stop = data.draw(q), data.draw(q)
        step = data.draw(st.integers(-24, 24).filter(bool).map(lambda i: i / 8))
    return start, stop, step


@PROPS
@hyp.given(data=st.data())
def test_arange(api_device, data):
    device = api_device
    kind = data.draw(st.sampled_from(["int", "float"]), label="kind")
    start, stop, step = arange_args(data, kind)
    form = data.draw(st.sampled_from(["stop", "start, stop", "start, stop, step"]), label="form")
    args = {"stop": (stop,), "start, stop": (start, stop), "start, stop, step": (start, stop, step)}[form]
    dts = held(device, [d for d in INTS + FLOATS if kind == "int" or d in FLOATS])
    dt = data.draw(st.sampled_from([None] + dts), label="dtype")
    if dt is not None and dt in INTS:
        lo, hi = int_range(dt, device)
        if min(args) < lo or max(args) > hi:
            hyp.reject()
    want = from_xp(xp.arange(*args, dtype=getattr(xp, dt) if dt else None))
    if dt is None:  # "If those are all integers, ... the default integer dtype; ... the default real-valued floating"
        want = want.astype(default("integral" if kind == "int" else "real floating", device))
    kw = {"device": device} if dt is None else {"dtype": getattr(wt, dt), "device": device}
    got = wt.arange(*args, **kw)
    assert got.device == device
    same_values(got, want, f"arange{args} {kw}")


@PROPS
@hyp.given(data=st.data())
def test_linspace(api_device, data):
    device = api_device
    dts = held(device, FLOATS + COMPLEX)
    dt = data.draw(st.sampled_from([None] + dts), label="dtype")
    cplx = dt in COMPLEX or (dt is None and data.draw(st.booleans(), label="complex"))
    num = data.draw(st.integers(0, 9), label="num")
    endpoint = data.draw(st.booleans(), label="endpoint")
    val = st.floats(-1e6, 1e6, width=32)
    start, stop = data.draw(val, label="start"), data.draw(val, label="stop")
    if cplx:
        start, stop = complex(start, data.draw(val)), complex(stop, data.draw(val))
    out = dt or default("complex floating" if cplx else "real floating", device)
    # The oracle in float64 (complex128), rounded once.
    wide = {"float32": "float64", "complex64": "complex128"}.get(out, out)
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=wide).astype(out)
    kw = {"device": device, "endpoint": endpoint} | ({"dtype": getattr(wt, dt)} if dt else {})
    got = wt.linspace(start, stop, num, **kw)
    assert got.device == device
    # Values within a few ulps of the larger end (the step's rounding grows with the index).
    scale = max(abs(start), abs(stop))
    check(got, want, f"linspace({start}, {stop}, {num}, {kw})", ulps=8, atol=8 * float(np.finfo(out).eps) * scale,
          zero_sign=False)
    if num and want.size:  # "the first value is start"; with endpoint, "the last is stop"
        g = got.numpy()
        assert g[0] == np.asarray(start, dtype=out)
        if endpoint and num > 1:
            assert g[-1] == np.asarray(stop, dtype=out)


@PROPS
@hyp.given(data=st.data())
def test_eye_tril_triu(api_device, data):
    device = api_device
    n, m = data.draw(st.integers(0, 5), label="n_rows"), data.draw(st.none() | st.integers(0, 5), label="n_cols")
    k = data.draw(st.integers(-6, 6), label="k")
    dt = data.draw(st.sampled_from([None] + held(device, ALL)), label="dtype")
    kw = {"k": k, "device": device} | ({"dtype": getattr(wt, dt)} if dt else {})
    want = from_xp(xp.eye(n, m, k=k, dtype=getattr(xp, dt or "float32")))
    got = wt.eye(n, m, **kw)
    assert got.device == device
    same_values(got, want, f"eye({n}, {m}, {kw})")
    da = data.draw(st.sampled_from(held(device, ALL)), label="x dtype")
    a = data.draw(arrays(da, shapes(min_dims=2, max_dims=4, max_side=4), device), label="x")
    for name in ("tril", "triu"):
        same_values(getattr(wt, name)(to_wt(a, device), k=k), from_xp(getattr(xp, name)(to_xp(a), k=k)),
                    f"{name}({da}{a.shape}, k={k})")


@PROPS
@hyp.given(data=st.data())
def test_meshgrid(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, ALL)), label="dtype")
    n = data.draw(st.integers(0, 3), label="n")
    xs = [data.draw(arrays(dt, shapes(min_dims=1, max_dims=1, max_side=4), device)) for _ in range(n)]
    ix = data.draw(st.sampled_from(["xy", "ij"]), label="indexing")
    want = [from_xp(r) for r in xp.meshgrid(*[to_xp(a) for a in xs], indexing=ix)]
    got = wt.meshgrid(*[to_wt(a, device) for a in xs], indexing=ix)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        same_values(g, w, f"meshgrid({dt}, {[a.shape for a in xs]}, {ix})")


def nested(a: np.ndarray):
    """a as nested Python lists of Python scalars (bool, int, float, complex)."""
    return a.tolist()


@PROPS
@hyp.given(data=st.data())
def test_asarray(api_device, data):
    device = api_device
    da = data.draw(st.sampled_from(held(device, ALL)), label="source dtype")
    a = data.draw(arrays(da, shapes(min_dims=0), device), label="x")
    src = data.draw(st.sampled_from(["ndarray", "lists", "tensor", "scalar"]), label="source")
    dt = data.draw(st.sampled_from([None, da]), label="dtype")
    kw = {"device": device} | ({"dtype": getattr(wt, dt)} if dt else {})
    if src == "scalar":
        if a.size == 0:
            hyp.reject()
        a = a.reshape(-1)[:1].reshape(())
        obj = a.item()
        # A Python scalar's dtype: bool, the default integer (int64), the
        # default real or complex floating dtype.
        out = dt or dtype_of(obj)
        if out in INTS and not int_range(out, device)[0] <= obj <= int_range(out, device)[1]:
            hyp.reject()
        got = wt.asarray(obj, **kw)
        want = np.asarray(obj, dtype=out)
    elif src == "lists":
        if a.size == 0 and a.ndim > 1:
            hyp.reject()  # nested empty lists: NumPy's shape is ambiguous too
        obj = nested(a)
        flat = a.reshape(-1)
        out = dt or (dtype_of(flat[0].item()) if flat.size else default("real floating", device))
        if out in INTS and flat.size and not (int_range(out, device)[0] <= flat.min() and
                                              flat.max() <= int_range(out, device)[1]):
            hyp.reject()
        if out == "int64" and da.startswith("uint"):
            hyp.reject()
        got = wt.asarray(obj, **kw)
        want = np.asarray(obj, dtype=out) if flat.size else np.zeros(a.shape, out)
    elif src == "ndarray":
        got, want = wt.asarray(a, **kw), a
    else:
        x = to_wt(a, device)
        copy = data.draw(st.sampled_from([None, True, False]), label="copy")
        got = wt.asarray(x, copy=copy, **kw)
        if copy is False:  # "If False, the array-creation function must never copy"
            assert got is x
        want = a
    assert got.device == device
    same_values(got, want, f"asarray({src} {da}, {kw})")


@PROPS
@hyp.given(data=st.data())
def test_asarray_copy(api_device, data):
    """copy=True: a new buffer; copy=False/None: x itself (same dtype and device)."""
    device = api_device
    dt = data.draw(st.sampled_from(held(device, [d for d in ALL if d != "bool"])), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=1, min_side=1), device, finite=True), label="x")
    x = to_wt(a, device)
    y = wt.asarray(x, copy=True)
    x[...] = wt.asarray(np.zeros_like(a)[()], device=device) if a.ndim == 0 else 0
    same_values(y, a, f"asarray(copy=True) of {dt}: the copy changed with x")
    assert wt.asarray(x, copy=False) is x and wt.asarray(x) is x
    other = next(d for d in held(device, ALL) if d != dt)
    with pytest.raises(ValueError):  # noqa: PT011 ("copy=False ... raise a ValueError" where a copy is needed)
        wt.asarray(x, dtype=getattr(wt, other), copy=False)


@PROPS
@hyp.given(data=st.data())
def test_from_dlpack(api_device, data):
    device = api_device
    dt = data.draw(st.sampled_from(held(device, ALL)), label="dtype")
    a = data.draw(arrays(dt, shapes(min_dims=0), device), label="x")
    src = data.draw(st.sampled_from(["numpy", "tensor"]), label="source")
    obj = a if src == "numpy" else to_wt(a, device)
    target = data.draw(st.sampled_from([None, "cpu", device]), label="device")
    kw = {} if target is None else {"device": target}
    got = wt.from_dlpack(obj, **kw)
    # "device: ... If device is None and x supports DLPack, the output array
    # must be on the same device as x."
    assert got.device == (target or ("cpu" if src == "numpy" else device)), (got.device, target, src)
    same_values(got, a, f"from_dlpack({src} {dt}, {kw})")
    if src == "numpy" and target in (None, "cpu") and a.size and a.flags.writeable:
        # copy=None on the same device: shared, not copied (the protocol's point).
        b = np.array(a)
        y = wt.from_dlpack(b)
        b.reshape(-1)[0] = np.zeros((), dt)
        assert y.numpy().reshape(-1)[0] == b.reshape(-1)[0]
        # copy=True: "must always copy".
        c = np.array(a)
        z = wt.from_dlpack(c, copy=True)
        c.reshape(-1)[0] = np.ones((), dt)
        same_values(z, a, f"from_dlpack({dt}, copy=True) after the source changed")


def test_device_kw_everywhere(api_device):
    # Every creation function places its array on device= (standard: "device
    # on which to place the created array").
    dev = api_device
    x = wt.zeros((2, 3), device=dev)
    made = [wt.arange(3, device=dev), wt.asarray([1, 2], device=dev), wt.empty((2,), device=dev),
            wt.eye(2, device=dev), wt.full((2,), 1.0, device=dev), wt.linspace(0, 1, 3, device=dev),
            wt.ones((2,), device=dev), wt.zeros((2,), device=dev), wt.empty_like(x), wt.full_like(x, 2),
            wt.ones_like(x), wt.zeros_like(x), wt.tril(x), wt.triu(x), *wt.meshgrid(wt.arange(2, device=dev))]
    assert [t.device for t in made] == [dev] * len(made)
