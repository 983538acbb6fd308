"""Accuracy of the WebGPU float math in wgsl/common.wgsl, in units in the
last place against NumPy's float64 rounded once: the GPU's builtins are
only as accurate as WGSL asks (sin/cos 2^-11 absolute, atan2 2^-21), so
webtensor computes these itself. The special-value cases are in
test_array_api_standard.test_special_cases_on_webgpu; these tests take
random arguments over the whole f32 range, where argument reduction and
cancellation go wrong if they are going to."""

import numpy as np
import pytest

import webtensor as wt

N = 1 << 16


@pytest.fixture(scope="module")
def dev():
    from conftest import webgpu_or_none

    d = webgpu_or_none()
    if d is None:
        pytest.skip("no WebGPU adapter on this machine")
    return d


def ulps(got, want):
    """|got - want| in f32 units in the last place of want (subnormals'
    spacing below the normal range)."""
    spacing = np.spacing(np.abs(want.astype(np.float32))).astype(np.float64)
    spacing = np.maximum(spacing, 2.0**-149)
    return np.abs(got.astype(np.float64) - want) / spacing


def any_finite_f32(rng, n):
    """Finite f32s with uniformly random bit patterns: every exponent,
    subnormals included, both signs."""
    x = rng.integers(0, 0x7F800000, n, dtype=np.uint32).view(np.float32)
    return x * np.where(rng.random(n) < 0.5, np.float32(-1), np.float32(1))


def run(dev, name, *args):
    return getattr(wt, name)(*(wt.tensor(a, device=dev) for a in args)).numpy()


@pytest.mark.parametrize("name,bound", [("sin", 4), ("cos", 4), ("tan", 8)])
def test_trig_over_the_whole_range(dev, name, bound):
    # Past |x| = 8192 Payne-Hanek reduction: f32(x mod pi/4) needs up to 2^-61.
    x = any_finite_f32(np.random.default_rng(1), N)
    want = getattr(np, name)(x.astype(np.float64))
    err = ulps(run(dev, name, x), want)
    worst = int(np.argmax(err))
    assert err.max() <= bound, f"{name}({x[worst]!r}) off by {err[worst]:.1f} ulp"


@pytest.mark.parametrize("name,np_name", [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan")])
def test_inverse_trig(dev, name, np_name):
    rng = np.random.default_rng(2)
    x = (rng.random(N) * 2 - 1).astype(np.float32) if name != "atan" else any_finite_f32(rng, N)
    want = getattr(np, np_name)(x.astype(np.float64))
    err = ulps(run(dev, name, x), want)
    assert err.max() <= 6, f"{name}({x[int(np.argmax(err))]!r}) off by {err.max():.1f} ulp"


def test_atan2_over_magnitudes(dev):
    rng = np.random.default_rng(3)
    a, b = any_finite_f32(rng, N), any_finite_f32(rng, N)
    want = np.arctan2(a.astype(np.float64), b.astype(np.float64))
    err = ulps(run(dev, "atan2", a, b), want)
    # Results below the normal range may be flushed (WGSL permits it).
    err[np.abs(want) < np.finfo(np.float32).tiny] = 0
    k = int(np.argmax(err))
    assert err.max() <= 6, f"atan2({a[k]!r}, {b[k]!r}) off by {err[k]:.1f} ulp"


def test_pow_keeps_the_bits_of_large_exponents(dev):
    # exp(b log a) in f32 is 2e-6 off at 10^10; pow carries b log2(a) as a pair.
    rng = np.random.default_rng(4)
    a = (np.abs(rng.standard_normal(N)) * 10.0 ** rng.integers(-12, 12, N)).astype(np.float32)
    b = (rng.standard_normal(N) * 12).astype(np.float32)
    a[:4], b[:4] = [10, 10, 3, 1e-40], [10, -10, 80, 0.75]
    with np.errstate(all="ignore"):
        want = np.power(a.astype(np.float64), b.astype(np.float64))
        normal = (np.abs(want) >= np.finfo(np.float32).tiny) & (np.abs(want) <= np.finfo(np.float32).max)
    got = run(dev, "pow", a, b)
    err = ulps(got[normal], want[normal])
    k = int(np.argmax(err))
    assert err.max() <= 4, f"pow({a[normal][k]!r}, {b[normal][k]!r}) off by {err[k]:.1f} ulp"
    assert np.all(np.isinf(got[np.abs(want) > np.finfo(np.float32).max]))


@pytest.mark.parametrize("name", ["log", "log2", "log10"])
def test_logs_of_subnormals(dev, name):
    # Drivers may flush subnormals to zero: the logs read them from the bits.
    x = np.random.default_rng(5).integers(1, 0x800000, 4096, dtype=np.uint32).view(np.float32)
    want = getattr(np, name)(x.astype(np.float64))
    err = ulps(run(dev, name, x), want)
    assert err.max() <= 4, f"{name}({x[int(np.argmax(err))]!r}) off by {err.max():.1f} ulp"


@pytest.mark.parametrize("name", ["log", "log2", "log10", "log1p"])
def test_logs_near_one(dev, name):
    # The builtin log is only absolutely accurate near 1 (WGSL allows 2^-21):
    # log(1 + 1e-4) was 1e-3 relative off; the logs use a series there.
    rng = np.random.default_rng(6)
    x = np.concatenate([1 + rng.standard_normal(N // 2) * 1e-3, rng.uniform(0.5, 2.0, N // 2)]).astype(np.float32)
    if name == "log1p":
        x = x - np.float32(1)
    want = getattr(np, name)(x.astype(np.float64))
    err = ulps(run(dev, name, x), want)
    k = int(np.argmax(err))
    assert err.max() <= 4, f"{name}({x[k]!r}) off by {err[k]:.1f} ulp"
