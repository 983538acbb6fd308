"""Property tests (hypothesis) of the array API standard's elementwise
functions and operators against array-api-strict, on the CPU and WebGPU:
every dtype (and dtype pair, by the promotion table) the standard allows
and the device holds, broadcast shapes with 0-d arrays and size-0 axes,
values with NaN, infinities, signed zeros, subnormals and integer extremes,
Python scalars mixed in as the standard's scalar rules allow, the in-place
operators. The result's dtype, shape and values must agree (array_api_props.check).
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from array_api_props import (
    PROPS,
    arrays,
    broadcastable,
    check,
    fits_gpu_int64,
    held,
    accepted,
    hyp,
    int_range,
    on_gpu,
    oracle,
    st,
    to_wt,
    xp,
)

import webtensor as wt

UNARY = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj", "cos", "cosh",
         "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log", "log10", "log1p", "log2",
         "logical_not", "negative", "positive", "real", "reciprocal", "round", "sign", "signbit", "sin", "sinh",
         "sqrt", "square", "tan", "tanh", "trunc"]
BINARY = ["add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
          "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot", "less", "less_equal",
          "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "nextafter",
          "not_equal", "pow", "remainder", "subtract"]
COVERED = set(UNARY) | set(BINARY)

# The standard leaves the sign of the zero maximum and minimum pick between
# -0 and +0 unspecified ("implementation-defined", maximum/minimum notes).
ZERO_SIGN_FREE = {"maximum", "minimum"}
SHIFTS = {"bitwise_left_shift", "bitwise_right_shift"}

def log1p_oracle(a: np.ndarray, want: np.ndarray) -> np.ndarray:
    """NumPy's complex log1p is log(hypot(1 + a, b)) + i atan2(b, 1 + a),
    which loses a's digits (and all of log1p(1e-30 + 0j)) near 0, where
    webtensor computes log1p(a(2 + a) + b^2)/2: for finite inputs the oracle
    takes its real part from mpmath's log1p at 100 bits (NumPy's imaginary
    part, atan2(b, 1 + a), is accurate and keeps the signs of zeros that
    mpmath has not; NumPy's special values stay)."""
    import mpmath

    out = np.array(want, copy=True)
    with mpmath.workprec(100):
        for i in np.ndindex(a.shape):
            if not np.isfinite(a[i]):
                continue
            z = complex(a[i])
            w = mpmath.log1p(mpmath.mpc(z.real, z.imag))
            out[i] = complex(float(w.real), want[i].imag)
    return out


def restrict_ints(name: str, a: np.ndarray, b: np.ndarray | None):
    """Integer inputs whose result the standard leaves unspecified, replaced:
    division by zero ("the result of division by zero is unspecified and thus
    implementation-defined", floor_divide/remainder), a negative integer
    exponent (pow: "If x2_i is negative, the behavior is unspecified"), a
    negative shift ("x2: Must have non-negative values"), and the minimum
    integer's abs/negation and its division by -1 ("implementation-dependent",
    abs/negative), which overflow."""
    if a.dtype.kind == "i" and name in ("abs", "negative", "floor_divide", "remainder"):
        a = np.asarray(np.where(a == np.iinfo(a.dtype).min, a + 1, a), dtype=a.dtype)
    if b is None or b.dtype.kind not in "iu":
        return a, b
    if name in ("floor_divide", "remainder"):
        b = np.asarray(np.where(b == 0, 1, b), dtype=b.dtype)
    if name in SHIFTS or (name == "pow" and a.dtype.kind in "iu"):
        b = np.asarray(np.abs(b.astype(np.int64)).clip(0, np.iinfo(b.dtype).max), dtype=b.dtype)
    if name in SHIFTS:
        b = np.asarray(b.astype(np.uint64) % (8 * b.dtype.itemsize + 4), dtype=b.dtype)
    if name == "pow" and a.dtype.kind in "iu":
        b = np.asarray(b.astype(np.uint64) % 12, dtype=b.dtype)  # int powers that mostly stay in range
    return a, b


def textbook_only(name: str, want: np.ndarray, *args):
    """For complex products and quotients the standard fixes only operands
    with finite components and a nonzero divisor ("...textbook formula...
    When at least one of a, b, c, or d is NaN, +infinity, or -infinity, ...
    the result is implementation-dependent", multiply/divide): a mask of
    those elements (None: compare all)."""
    # sign is "x_i / |x_i|" for complex: a quotient, so the same holds.
    if want.dtype.kind != "c" or name not in ("multiply", "divide", "pow", "square", "reciprocal", "sign"):
        return None
    arrs = [np.asarray(a) for a in args]
    # ... and where the textbook formula's products overflow (square:
    # "as if ... x * x"), the parts depend on the formula's order.
    ok = np.isfinite(want.real) & np.isfinite(want.imag)
    for a in arrs:
        ok &= np.broadcast_to(np.isfinite(a), want.shape)
    if name == "reciprocal":  # "as if ... 1/x"
        ok &= arrs[0] != 0
    if name in ("divide", "pow"):
        ok &= np.broadcast_to(arrs[1] != 0, want.shape) if name == "divide" else \
            np.broadcast_to(arrs[0] != 0, want.shape)
    return ok


def pow_ulps(name, want, x1, x2) -> float:
    """Complex pow is exp(x2 log x1) ("as if ... exp(x2*log(x1))", pow): its
    error grows with |x2 log x1| (the exponent's rounding, amplified)."""
    if name != "pow" or want.dtype.kind != "c":
        return 16
    with np.errstate(all="ignore"):
        y = np.abs(np.asarray(x2, dtype=want.dtype) * np.log(np.asarray(x1, dtype=want.dtype)))
    y = y[np.isfinite(y)]
    return 16 * (1 + (y.max() if y.size else 0))


def run_promoted(device, want, fn, what, a, b, **kw):
    """run, where a and b promote to int64 on WebGPU: values past 32 bits are refused there."""
    if on_gpu(device) and np.result_type(a.dtype, b.dtype) == np.int64 and not fits_gpu_int64(
            device, a.astype(np.int64), b.astype(np.int64)):
        with pytest.raises(Exception):  # noqa: B017, PT011
            fn().numpy()
        return
    run(device, want, fn, what, ulps=pow_ulps(what.split("(")[0].split(":")[0], want, a, b), **kw)


def run(device, want, fn, what, **kw):
    """want's dtype, shape and values from fn() (where kw's only is True,
    when given), or, for int64 values past the 32 bits WebGPU holds them
    in, the op refused."""
    if not fits_gpu_int64(device, want):
        with pytest.raises(Exception):  # noqa: B017, PT011
            fn().numpy()
        return
    check(fn(), want, what, **kw)


@pytest.mark.parametrize("name", UNARY)
@PROPS
@hyp.given(data=st.data())
def test_unary(name, api_device, data):
    device = api_device
    dts = held(device, accepted(name, 1))
    dt = data.draw(st.sampled_from(dts), label="dtype")
    a = data.draw(arrays(dt, data.draw(broadcastable(1))[0], device), label="x")
    a, _ = restrict_ints(name, a, None)
    want = oracle(name, a)
    if name == "log1p" and want.dtype.kind == "c":
        want = log1p_oracle(a, want)
    if name == "expm1" and want.dtype.kind == "c":
        # The standard: expm1(a + 0j) keeps the zero imaginary part for any
        # a (inf + 0j at a = +inf, NaN + 0j at NaN); NumPy's inf·sin(0) is NaN.
        zero_b = a.imag == 0
        want = np.where(zero_b, want.real + 1j * a.imag, want).astype(want.dtype)
    # The standard leaves the accuracy of transcendental functions to the
    # implementation (its "Accuracy" section); Go's float64 sin/cos/tan reduce
    # huge arguments to one float64, so a result near a zero of tan(1.8e308)
    # is off by an ulp of pi/4 rather than of itself: compared absolutely there.
    # The complex forms take sin and cos of a part (cosh(bi) is cos b,
    # tanh(bi) is i tan b, expm1(bi)'s imaginary part is sin b), so the same
    # holds for them and the complex hyperbolic functions.
    trig = ("sin", "cos", "tan") + (("sinh", "cosh", "tanh", "expm1") if dt.startswith("complex") else ())
    atol = float(np.finfo(dt).eps) if name in trig and dt.startswith(("float", "complex")) else 0.0
    kw = {}
    if name == "tan" and dt.startswith("float"):
        # Near a pole tan amplifies an ulp of the reduced argument by its
        # derivative, 1 + tan^2 (Go's float64 tan of 2.7e16, 324.2, is 76
        # ulp from glibc's): the relative bound grows with it there.
        with np.errstate(all="ignore"):
            slope = 1 + np.square(np.abs(want[np.isfinite(want)]).astype(np.float64))
        kw["ulps"] = 16 * float(slope.max()) if slope.size else 16
    run(device, want, lambda: getattr(wt, name)(to_wt(a, device)), f"{name}({dt})", atol=atol,
        only=textbook_only(name, want, a), **kw)


@pytest.mark.parametrize("name", BINARY)
@PROPS
@hyp.given(data=st.data())
def test_binary(name, api_device, data):
    device = api_device
    da, db = data.draw(st.sampled_from(held(device, accepted(name, 2))), label="dtypes")
    sa, sb = data.draw(broadcastable(2))
    a, b = data.draw(arrays(da, sa, device), label="x1"), data.draw(arrays(db, sb, device), label="x2")
    a, b = restrict_ints(name, a, b)
    want = oracle(name, a, b, wider=name != "nextafter")
    if not fits_gpu_int64(device, a, b):
        return
    run_promoted(device, want, lambda: getattr(wt, name)(to_wt(a, device), to_wt(b, device)),
                 f"{name}({da}, {db})", a, b, zero_sign=name not in ZERO_SIGN_FREE,
                 only=textbook_only(name, want, a, b))


def scalar_for(dtype: str, device: str, name: str):
    """A Python scalar the standard lets mix with an array of dtype: a bool
    with bool arrays, an int in the dtype's range with integer and floating
    arrays, a float with floating arrays, a complex with complex arrays."""
    options = []
    if dtype == "bool":
        options.append(st.booleans())
    if dtype.startswith(("int", "uint")):
        lo, hi = int_range(dtype, device)
        options.append(st.integers(lo, hi))
    if dtype.startswith(("float", "complex")):
        options += [st.integers(-(2**20), 2**20), st.floats(width=32 if dtype == "float32" else 64)]
    if dtype.startswith("complex"):
        options.append(st.complex_numbers(width=64 if dtype == "complex64" else 128))
    return st.one_of(options)


@pytest.mark.parametrize("name", BINARY)
@PROPS
@hyp.given(data=st.data())
def test_binary_with_scalar(name, api_device, data):
    device = api_device
    # 2024.12: "x1: Union[array, int, float, complex, bool]" for the binary
    # elementwise functions; the scalar takes the array's dtype.
    dt = data.draw(st.sampled_from(held(device, sorted({p[0] for p in accepted(name, 2) if p[0] == p[1]}))),
                   label="dtype")
    a = data.draw(arrays(dt, data.draw(broadcastable(1))[0], device), label="x")
    s = data.draw(scalar_for(dt, device, name), label="scalar")
    first = data.draw(st.booleans(), label="scalar first")
    sa = np.asarray(s, dtype=dt)
    x1, x2 = (sa, a) if first else (a, sa)
    x1, x2 = restrict_ints(name, x1, x2)
    s = x1.item() if first else x2.item()
    if isinstance(s, (int, float, complex)) and not isinstance(s, bool) and dt == "bool":
        s = bool(s)
    args = (s, x2) if first else (x1, s)
    try:
        want = oracle(name, *args, wider=name != "nextafter")
    except (TypeError, ValueError):
        hyp.reject()  # a scalar the standard does not allow with this dtype
    want = np.asarray(want)
    if not fits_gpu_int64(device, a, np.asarray(s)) and dt == "int64":
        return
    wargs = (s, to_wt(x2, device)) if first else (to_wt(x1, device), s)
    run(device, want, lambda: getattr(wt, name)(*wargs), f"{name}({'scalar, ' if first else ''}{dt}"
        f"{'' if first else ', scalar'}) with {s!r}", zero_sign=name not in ZERO_SIGN_FREE,
        ulps=pow_ulps(name, want, x1, x2),
        only=textbook_only(name, want, *(np.asarray(v) for v in args)))


# ---- operators ---------------------------------------------------------------------------------

BINARY_OPS = {"__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "divide",
              "__floordiv__": "floor_divide", "__mod__": "remainder", "__pow__": "pow", "__and__": "bitwise_and",
              "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__lshift__": "bitwise_left_shift",
              "__rshift__": "bitwise_right_shift", "__eq__": "equal", "__ne__": "not_equal", "__lt__": "less",
              "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal"}
UNARY_OPS = {"__neg__": "negative", "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_invert"}


@pytest.mark.parametrize("op", sorted(BINARY_OPS))
@PROPS
@hyp.given(data=st.data())
def test_operator(op, api_device, data):
    """x1 op x2 for arrays (broadcast) and Python scalars on either side
    (the reflected operator), and the in-place form where the standard
    allows it (the result's dtype and shape are x1's)."""
    device = api_device
    name = BINARY_OPS[op]
    da, db = data.draw(st.sampled_from(held(device, accepted(name, 2))), label="dtypes")
    sa, sb = data.draw(broadcastable(2))
    a, b = data.draw(arrays(da, sa, device), label="x1"), data.draw(arrays(db, sb, device), label="x2")
    form = data.draw(st.sampled_from(["arrays", "scalar right", "scalar left", "in-place"]), label="form")
    if form != "arrays" and da != db:
        b = b.astype(da)
    if form.startswith("scalar"):
        b = np.asarray(data.draw(scalar_for(da, device, name), label="scalar"), dtype=da)
    b, a = restrict_ints(name, b, a) if form == "scalar left" else (b, a)
    a, b = restrict_ints(name, a, b)
    if not fits_gpu_int64(device, a, b):
        return
    ref = oracle(name, a, b, wider=False)  # the result's dtype and shape (values below)
    x1, x2 = to_wt(a, device), to_wt(b, device)
    if form == "arrays":
        want, got = oracle(name, a, b), lambda: getattr(x1, op)(x2)
    elif form == "scalar right":
        s = b.item()
        want, got = oracle(name, a, s), lambda: getattr(x1, op)(s)
    rop = op
    if form == "scalar left":
        s = b.item()
        rop = "__r" + op[2:] if name not in ("equal", "not_equal", "less", "less_equal", "greater",
                                             "greater_equal") else op
        if rop != op:
            want, got = oracle(name, s, a), lambda: getattr(x1, rop)(s)
        else:
            want, got = oracle(name, a, s), lambda: getattr(x1, op)(s)
    elif form == "in-place":
        if ref.dtype != a.dtype or ref.shape != a.shape:
            return  # the standard allows x1 op= x2 only when the result keeps x1's dtype and shape
        want = oracle(name, a, b)

        def got():
            y = getattr(operator, "i" + op.strip("_"))(x1, x2)
            assert y is x1, f"{op} in place made a new array"
            return x1
    want = np.asarray(want)
    args = (b, a) if form == "scalar left" and rop != op else (a, b)
    run_promoted(device, want, got, f"{name}: {op} {form} ({da}, {db})", *args,
                 only=textbook_only(name, want, *args))


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
@PROPS
@hyp.given(data=st.data())
def test_unary_operator(op, api_device, data):
    device = api_device
    name = UNARY_OPS[op]
    dt = data.draw(st.sampled_from(held(device, accepted(name, 1))), label="dtype")
    a = data.draw(arrays(dt, data.draw(broadcastable(1))[0], device), label="x")
    a, _ = restrict_ints(name, a, None)
    run(device, oracle(name, a), lambda: getattr(to_wt(a, device), op)(), f"{name}: {op}({dt})")


def test_strict_agrees_on_operator_names():
    # Every operator checked above is one array-api-strict's Array has.
    for op in list(BINARY_OPS) + list(UNARY_OPS) + ["__matmul__"]:
        assert hasattr(xp.asarray([1]), op), op
    assert not on_gpu("cpu")
