"""Shared pieces of the array API property suites (test_props_*.py): the
device fixture (the CPU and WebGPU), dtypes a function takes by the standard
(asked of array-api-strict) and a device holds, hypothesis strategies for
shapes and values with the special ones (NaN, infinities, signed zeros,
subnormals, integer extremes), array-api-strict as the oracle and the
comparison of a webtensor result with its answer.

Not collected by pytest (no test_ prefix); the suites import it as conftest
is imported.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import webtensor as wt

hyp = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")
hnp = pytest.importorskip("hypothesis.extra.numpy")
xp = pytest.importorskip("array_api_strict")
xp.set_array_api_strict_flags(api_version="2024.12")

# Deterministic (CI), no deadline (the first WebGPU call of a kernel
# compiles its pipeline), no example database between runs.
PROPS = hyp.settings(max_examples=25, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(hyp.HealthCheck), report_multiple_bugs=False)
MORE = hyp.settings(PROPS, max_examples=40)

BOOL = ("bool",)
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
FLOATS = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC

STRICT_ONLY = {"get_array_api_strict_flags", "reset_array_api_strict_flags", "set_array_api_strict_flags"}


def standard_functions() -> set[str]:
    """Every function of the standard's main namespace (2024.12), as
    array-api-strict lists them, less those it says need a later version
    (isin and broadcast_shapes are 2025.12's)."""
    import inspect

    out = set()
    for n in xp.__all__:
        f = getattr(xp, n)
        if n in STRICT_ONLY or not callable(f) or inspect.isclass(f):
            continue
        try:
            f()
        except RuntimeError as e:
            if "requires API version" in str(e):
                continue
        except Exception:  # noqa: BLE001, S110 (missing arguments: a 2024.12 function)
            pass
        out.add(n)
    return out


# ---- devices -----------------------------------------------------------------------------------


@functools.cache
def device_dtypes(device: str) -> frozenset[str]:
    """The standard's dtypes the device holds (WebGPU: no float64, complex128, uint64)."""
    return frozenset(wt.__array_namespace_info__().dtypes(device=device))


def on_gpu(device: str) -> bool:
    return device.startswith("webgpu")


# ---- which dtypes a function takes: the standard's, asked of array-api-strict --------------------


@functools.cache
def accepted(name: str, arity: int, **kw) -> tuple:
    """The dtypes (arity 1) or dtype pairs (arity 2) array-api-strict's `name`
    accepts: the standard's dtype categories and promotion table."""
    fn = getattr(xp, name)
    out = []
    for combo in (ALL if arity == 1 else [(a, b) for a in ALL for b in ALL]):
        names = (combo,) if arity == 1 else combo
        args = [xp.ones((1,), dtype=getattr(xp, d)) for d in names]
        try:
            fn(*args, **kw)
        except (TypeError, ValueError):
            continue
        out.append(combo)
    return tuple(out)


def held(device: str, combos) -> list:
    """The combos (dtype names or tuples of them) whose every dtype the device holds."""
    have = device_dtypes(device)
    return [c for c in combos if all(d in have for d in ((c,) if isinstance(c, str) else c))]


# ---- values ------------------------------------------------------------------------------------


def int_range(dtype: str, device: str) -> tuple[int, int]:
    """The range of dtype's values the device holds: WebGPU holds int64 in 32 bits (docs/RATIONALE.md)."""
    if dtype == "int64" and on_gpu(device):
        return -(2**31), 2**31 - 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def elements(dtype: str, device: str, *, lo=None, hi=None, finite=False, magnitude=None):
    """Values of dtype, the special ones drawn often (hypothesis' floats
    draw NaN, infinities, signed zeros, subnormals and the extremes;
    its integers the ends of the range)."""
    if dtype == "bool":
        return st.booleans()
    if dtype in INTS:
        a, b = int_range(dtype, device)
        return st.integers(a if lo is None else max(a, lo), b if hi is None else min(b, hi))
    width = {"float32": 32, "float64": 64, "complex64": 64, "complex128": 128}[dtype]
    if dtype in COMPLEX:
        if magnitude is not None:
            return st.complex_numbers(width=width, allow_nan=False, allow_infinity=False, max_magnitude=magnitude)
        return st.complex_numbers(width=width, allow_nan=not finite, allow_infinity=not finite)
    if magnitude is None and lo is None and hi is None:
        return st.floats(allow_nan=not finite, allow_infinity=not finite, width=width)
    lo = -magnitude if lo is None else lo
    hi = magnitude if hi is None else hi
    bounded = st.floats(min_value=lo, max_value=hi, width=width)
    return bounded if finite else st.one_of(bounded, st.sampled_from([math.nan, math.inf, -math.inf]))


def arrays(dtype: str, shape, device: str, **kw):
    return hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, device, **kw), fill=st.nothing())


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=3):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable(n: int, min_dims=0, max_dims=3, max_side=3):
    """n shapes that broadcast together (sizes 0 and 1 included)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=0,
                                             max_side=max_side).map(lambda s: s.input_shapes)


# ---- the two sides -----------------------------------------------------------------------------


def to_wt(a, device: str):
    return wt.asarray(np.asarray(a), device=device)


def to_xp(a):
    return xp.asarray(np.asarray(a))


def from_xp(r) -> np.ndarray:
    return np.asarray(r._array)


WIDER = {"float32": "float64", "complex64": "complex128"}


def oracle(name: str, *args, wider: bool = True, **kw) -> np.ndarray:
    """array-api-strict's `name` on the NumPy arrays args: its dtype and
    shape from the arguments as they are; its values, when wider is True,
    computed from float64 (complex128) copies and rounded once to that
    dtype, which is closer to the exact result than NumPy's float32
    kernels are."""
    fn = getattr(xp, name)
    kw = {k: to_xp(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    want = from_xp(fn(*[to_xp(a) if isinstance(a, np.ndarray) else a for a in args], **kw))
    if not wider or not any(isinstance(a, np.ndarray) and a.dtype.name in WIDER for a in args):
        return want
    up = [a.astype(WIDER[a.dtype.name]) if isinstance(a, np.ndarray) and a.dtype.name in WIDER else a for a in args]
    with np.errstate(all="ignore"):
        wide = from_xp(fn(*[to_xp(a) if isinstance(a, np.ndarray) else a for a in up], **kw))
        return wide.astype(want.dtype) if wide.dtype != want.dtype else wide


def fits_gpu_int64(device: str, *arrays) -> bool:
    """False when an int64 value leaves the 32 bits WebGPU holds int64 in:
    there webtensor refuses the op (docs/RATIONALE.md) instead of wrapping."""
    if not on_gpu(device):
        return True
    return all(a.dtype != np.int64 or a.size == 0 or (a.min() >= -(2**31) and a.max() < 2**31) for a in arrays)


# ---- comparison --------------------------------------------------------------------------------


def check(got, want: np.ndarray, what: str, *, ulps: float = 16, atol: float = 0.0, zero_sign: bool = True,
          complex_signs: bool = False, only=None):
    """got (a webtensor Tensor) has want's dtype, shape and values: bools
    and integers exactly; floats NaN where NaN, infinities and zeros
    exactly (signs included unless zero_sign is False), finite values
    within `ulps` units of the dtype's precision relative to the value
    (plus atol and the dtype's smallest normal); complex numbers component
    by component for NaN and infinities, normwise for finite values. The
    standard leaves many signs of complex special results unspecified
    ("the sign of the imaginary component is unspecified"), so complex
    signs are compared only when complex_signs is True."""
    want = np.asarray(want)
    assert got.dtype == getattr(wt, want.dtype.name), f"{what}: dtype {got.dtype}, want {want.dtype.name}"
    assert tuple(got.shape) == want.shape, f"{what}: shape {tuple(got.shape)}, want {want.shape}"
    g = np.asarray(got.numpy())
    assert g.shape == want.shape, f"{what}: read back shape {g.shape}, want {want.shape}"
    if only is not None:
        g, want = g[only], want[only]
    if want.dtype == np.bool_ or want.dtype.kind in "iu":
        np.testing.assert_array_equal(g.astype(want.dtype), want, err_msg=what, strict=False)
        return
    if want.dtype.kind == "c":
        close_values(g.real, want.real, what + " (real)", ulps, atol, zero_sign and complex_signs, finite=False)
        close_values(g.imag, want.imag, what + " (imag)", ulps, atol, zero_sign and complex_signs, finite=False)
        fin = np.isfinite(want)
        eps = np.finfo(want.dtype).eps
        bound = ulps * eps * np.abs(want[fin]) + atol + np.finfo(want.dtype).tiny
        err = np.abs(g[fin] - want[fin])
        assert np.all(err <= bound), f"{what}: {g[fin][err > bound]} want {want[fin][err > bound]}"
        return
    close_values(g, want, what, ulps, atol, zero_sign, finite=True)


def close_values(g, want, what, ulps, atol, zero_sign, finite):
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want), err_msg=f"{what}: NaN positions")
    inf = np.isinf(want)
    np.testing.assert_array_equal(g[inf], want[inf], err_msg=f"{what}: infinities")
    zero = want == 0
    if zero_sign:
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(want[zero]), err_msg=f"{what}: signed zeros")
    if finite:
        rtol = ulps * np.finfo(want.dtype).eps
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(g, want, rtol=rtol, atol=atol + np.finfo(want.dtype).tiny, equal_nan=True,
                                       err_msg=what)


def raises_like_gpu_overflow(fn):
    """Runs fn, which must fail as WebGPU's int64 overflow does (the op
    refused, not wrapped)."""
    with pytest.raises(Exception):  # noqa: B017, PT011 (the backend's error type varies by op)
        fn()


def finite_float(x) -> bool:
    return isinstance(x, float) and math.isfinite(x)
