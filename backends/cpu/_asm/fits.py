"""Fits of the rational and polynomial approximations in math.go.

Run with NumPy (any recent version): python3 fits.py. It prints each fit's
coefficients (float32, highest degree first, as math.go's horner takes
them) and its worst error in float32 ulps, evaluated as the kernels do
(coefficients rounded to float32, Horner's rule with one rounding per FMA).
The kernels' own tests (backends/cpu/ew_simd_test.go) measure the
generated code against float64 references; this script only says where
the coefficients came from.
"""
import numpy as np

f32 = np.float32


def fma(a, b, c):
    """a*b + c rounded once to float32 (a*b of two float32 is exact in float64)."""
    return f32(np.float64(a) * np.float64(b) + np.float64(c))


def horner(coefs, z):
    """coefs lowest degree first; evaluated in float32 with FMAs."""
    p = np.full_like(z, f32(coefs[-1]))
    for c in coefs[-2::-1]:
        p = fma(p, z, f32(c))
    return p


def ulps(got, want):
    """|got - want| in float32 ulps of want (subnormals in the smallest normal's)."""
    e = np.maximum(np.floor(np.log2(np.abs(want) + 1e-300)), -126)
    return np.abs(got.astype(np.float64) - want) / 2.0 ** (e - 23)


def rational_fit(g, x, var, num_deg, den_deg, iters=60):
    """Near-minimax relative fit g ≈ P(var)/Q(var), Q(0) = 1: linearised
    least squares (Sanathanan-Koerner) with Lawson's reweighting."""
    scale = var.max()
    u = var / scale
    w = np.ones_like(u)
    q_prev = np.ones_like(u)
    for _ in range(iters):
        a = np.hstack([np.vander(u, num_deg + 1, increasing=True),
                       -(g[:, None] * np.vander(u, den_deg + 1, increasing=True)[:, 1:])])
        rw = np.sqrt(w) / (g * q_prev)
        coef, *_ = np.linalg.lstsq(a * rw[:, None], g * rw, rcond=None)
        p = coef[:num_deg + 1]
        q = np.concatenate([[1.0], coef[num_deg + 1:]])
        q_prev = np.polyval(q[::-1], u)
        err = np.abs((np.polyval(p[::-1], u) / q_prev - g) / g)
        w = w * err
        w /= w.sum()
    return p / scale ** np.arange(num_deg + 1), q / scale ** np.arange(den_deg + 1)


def show(name, coefs):
    print(f"{name}: " + ", ".join(repr(float(f32(c))) for c in coefs[::-1]))


def tanh_fit():
    """tanh(x) = x·P(x²)/Q(x²) for |x| <= 9, past which tanh rounds to 1;
    the quotient (which overshoots 1 by 2 ulps near the clamp) is clamped
    to [-1, 1]."""
    clamp = 9.0
    x = clamp * np.sin(np.linspace(0, np.pi / 2, 20000))[1:]
    p, q = rational_fit(np.tanh(x) / x, x, x * x, 6, 3)
    show("tanh P", p)
    show("tanh Q", q)
    xs = np.concatenate([np.linspace(-12, 12, 2000001), 2.0 ** np.linspace(-40, 3, 200001)]).astype(f32)
    xc = np.clip(xs, -clamp, clamp)
    z = f32(xc * xc)
    got = np.clip(f32(f32(xc * horner(p, z)) / horner(q, z)), -1, 1)
    print(f"tanh: worst {ulps(got, np.tanh(xs.astype(np.float64))).max():.2f} ulps, "
          f"largest |result| {np.abs(got).max()!r}")


def exp2_q_fit(f):
    """Q's six coefficients in 2^f = 1 + f·Q(f) over the points f (none at 0), by iteratively
    reweighted least squares towards minimax relative error; and the relative error at each point."""
    g = (2.0 ** f - 1) / f
    w = np.ones_like(f)
    for _ in range(80):
        v = np.vander(f, 6, increasing=True) * f[:, None] / 2.0 ** f[:, None]
        c, *_ = np.linalg.lstsq(v * np.sqrt(w)[:, None], (g * f / 2.0 ** f) * np.sqrt(w), rcond=None)
        err = np.abs(np.vander(f, 6, increasing=True) @ c * f + 1 - 2.0 ** f) / 2.0 ** f
        w = w * err
        w /= w.sum()
    return c, err


def exp_fit():
    """e^r on |r| <= ln2/2 (exp's reduced range) as a degree-6 polynomial
    with constant term exactly 1, for Horner's rule: fitted as 2^f = 1 +
    f·Q(f) on |f| <= 1/2, near-minimax in relative error, then scaled."""
    f = 0.5 * np.cos(np.linspace(0, np.pi, 4001))
    f = f[np.abs(f) > 1e-9]
    c, err = exp2_q_fit(f)
    p = np.concatenate([[1.0], c]) * np.log2(np.e) ** np.arange(7)  # e^r = 2^(r·log2(e))
    rs = np.linspace(-np.log(2) / 2, np.log(2) / 2, 200001).astype(f32)
    print(f"exp: fit error {err.max() / 2**-24:.3f} ulps, in float32 "
          f"{ulps(horner(p, rs), np.exp(rs.astype(np.float64))).max():.2f} ulps")
    show("exp", p)
    return p


def exp2_unit_fit():
    """2^f on [0, 1) as a degree-5 polynomial with constant term exactly 1
    (so 2^0 is exactly 1), near-minimax in relative error: the small-head
    attention tile's weights 2^(x - floor(x))·2^floor(x)
    (backends/cpu/attention_small_amd64.s, where VREDUCEPS gives the
    fraction). Degree 5, not exp_fit's 6: the tile is bound by its FMA
    pipes, and the sixth term bought 1.05 ulps against 2.1 for one
    multiply-add a key. Iteratively reweighted least squares on a uniform
    grid, keeping the iteration with the smallest worst error."""
    f = np.linspace(0, 1, 400001)
    y = 2.0**f
    a = np.vstack([f**k for k in range(1, 6)]).T
    w = 1 / y
    c, *_ = np.linalg.lstsq(a * w[:, None], (y - 1) * w, rcond=None)
    best = None
    for _ in range(300):
        r = (a @ c + 1 - y) / y
        wt = w * (np.abs(r) / np.abs(r).max() + 1e-4) ** 0.5
        c, *_ = np.linalg.lstsq(a * wt[:, None], (y - 1) * wt, rcond=None)
        m = np.abs((a @ c + 1 - y) / y).max()
        if best is None or m < best[0]:
            best = (m, c.copy())
    p = np.concatenate([[1.0], best[1]])
    fs = np.linspace(0, 1, 400001).astype(f32)
    fs = fs[fs < 1]
    print(f"exp2 on [0, 1): fit error {best[0] / 2**-24:.3f} ulps, in float32 "
          f"{ulps(horner(p, fs), 2.0 ** fs.astype(np.float64)).max():.2f} ulps")
    show("exp2", p)
    print("exp2 bits: " + ", ".join(hex(f32(c).view(np.uint32)) for c in p[::-1]))


def gauss_tail_fit():
    """Φ(-y) = erfc(y/√2)/2 = t·exp(-y²/2 + P(t - c)), t = 1/(1 + k·y), for
    0 <= y <= 15 (past which Φ(-y) underflows): P of degree 8, near-minimax
    in absolute error (a relative error of Φ) by Lawson's reweighting of a
    Chebyshev least-squares fit, k chosen on a grid for the smallest error,
    P written around c, the middle of t's range, where its Horner sum
    rounds least."""
    from scipy.special import log_ndtr
    ymax, deg = 15.0, 8
    best = None
    for k in np.linspace(0.35, 0.45, 11):
        k = float(f32(k))
        tmin = 1 / (1 + k * ymax)
        t = (tmin + 1) / 2 + (1 - tmin) / 2 * np.cos(np.linspace(0, np.pi, 4000))
        y = (1 / t - 1) / k
        g = log_ndtr(-y) - np.log(t) + y * y / 2
        w = np.ones_like(t)
        for _ in range(80):
            v = np.polynomial.chebyshev.chebvander((2 * t - 1 - tmin) / (1 - tmin), deg)
            c, *_ = np.linalg.lstsq(v * np.sqrt(w)[:, None], g * np.sqrt(w), rcond=None)
            err = np.abs(v @ c - g)
            w = w * err
            w /= w.sum()
        if best is None or err.max() < best[0]:
            best = (err.max(), k, tmin, c)
    err, k, tmin, c = best
    mid = float(f32((1 + tmin) / 2))
    mono = np.polynomial.Chebyshev(c, domain=[tmin, 1]).convert(kind=np.polynomial.Polynomial)
    p = mono(np.polynomial.Polynomial([mid, 1])).coef
    print(f"gaussTail k = {k!r}, c = {mid!r}, fit error {err / 2**-24:.2f} ulps")
    show("gaussTail P", p)
    # gelu(x) = x·Φ(x), evaluated as the kernel does (exp's own error left out).
    xs = np.concatenate([np.linspace(-16, 6, 2000001), -(2.0 ** np.linspace(-30, 3.8, 200001)),
                         2.0 ** np.linspace(-30, 2, 20001)]).astype(f32)
    y = np.minimum(np.abs(xs), f32(ymax))
    t = f32(f32(1) / fma(y, f32(k), f32(1)))
    arg = f32(np.float64(horner(p, f32(t - f32(mid)))) - np.float64(y) * np.float64(f32(y * f32(0.5))))
    tail = f32(f32(np.exp(np.float64(arg))) * t)
    got = f32(xs * np.where(xs < 0, tail, f32(1 - tail)))
    want = xs.astype(np.float64) * np.exp(log_ndtr(xs.astype(np.float64)))
    u = ulps(got, want) - 0.75 * xs.astype(np.float64) ** 2
    print(f"gelu: worst {u.max():.2f} ulps beyond the argument's rounding (0.75x² ulps) at x = {xs[u.argmax()]}")


def gelu_pieces_fit():
    """Φ(x) on 16 pieces of width 0.375 centred at (i - 8)·0.375, one
    degree-6 polynomial in v = x - centre each, near-minimax in relative
    error: the fast path of gelu with AVX-512, which picks a piece's
    coefficients with VPERMPS. The kernel finds the piece by rounding
    x/0.375 + 8 + 2^23 (whose low bits are then the piece) and takes it
    for x in about [-3.09, 2.81]; lanes past that take the general path.
    Prints the tables as Go (gelu_pieces.go)."""
    from scipy.special import ndtr
    pieces, width, deg = 16, 0.375, 6
    tables = np.zeros((deg + 1, pieces))
    worst = 0.0
    for i in range(pieces):
        centre = (i - pieces // 2) * width
        v = (width / 2 + 0.002) * np.cos(np.linspace(0, np.pi, 3000))
        g = ndtr(centre + v)
        w = np.ones_like(v)
        for _ in range(60):
            a = np.vander(v, deg + 1, increasing=True) / g[:, None]
            c, *_ = np.linalg.lstsq(a * np.sqrt(w)[:, None], np.sqrt(w), rcond=None)
            err = np.abs(np.vander(v, deg + 1, increasing=True) @ c / g - 1)
            w = w * err
            w /= w.sum()
        tables[:, i] = c
        worst = max(worst, err.max())
    xs = np.concatenate([np.linspace(-3.5, 3.5, 3000001), -(2.0 ** np.linspace(-40, 1.6, 100001)),
                         2.0 ** np.linspace(-40, 1.6, 100001)]).astype(f32)
    m = fma(xs, f32(pieces / (pieces * width)), f32(pieces // 2 + 2**23))
    fast = (m.view(np.uint32) - np.uint32(0x4B000000)) < pieces
    xs, m = xs[fast], m[fast]
    piece = m.view(np.uint32) & (pieces - 1)
    v = f32(xs - fma(m, f32(width), f32(-(pieces // 2 + 2**23) * width)))
    t32 = tables.astype(f32)
    p = t32[deg][piece]
    for d in range(deg - 1, -1, -1):
        p = fma(p, v, t32[d][piece])
    u = ulps(f32(xs * p), xs.astype(np.float64) * ndtr(xs.astype(np.float64)))
    print(f"gelu pieces: fit error {worst / 2**-24:.2f} ulps, "
          f"gelu on [{xs.min()}, {xs.max()}] worst {u.max():.2f} ulps")
    print("var geluPieces = [7][16]float32{")
    for d in range(deg + 1):
        print("\t{" + ", ".join(repr(float(f32(c))) for c in tables[d]) + "},")
    print("}")


if __name__ == "__main__":
    tanh_fit()
    exp_fit()
    exp2_unit_fit()
    gauss_tail_fit()
    gelu_pieces_fit()
