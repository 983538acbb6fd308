package core

import "math"

// The arithmetic of complex tensors, written with real registry ops over
// the parts (see ops_complex.go): every backend runs it, autograd records
// the real ops.

func un(op string, x *Tensor) *Tensor     { return call1(op, nil, x) }
func bin(op string, a, b *Tensor) *Tensor { return call1(op, nil, a, b) }
func realPart(z *Tensor) *Tensor          { return call1("real", nil, z) }
func imagPart(z *Tensor) *Tensor          { return call1("imag", nil, z) }
func pairsOf(z *Tensor) *Tensor           { return call1("view_as_real", nil, z) }
func fromPairs(p *Tensor) *Tensor         { return call1("view_as_complex", nil, p) }

// scalarLike is v in x's real dtype on x's device.
func scalarLike(v float64, x *Tensor) *Tensor {
	return Scalar(v, x.dtype.RealDType(), x.Device())
}

// cmul is (a+ib)(c+id) = (ac - bd) + i(ad + bc).
func cmul(x, y *Tensor) *Tensor {
	a, b, c, d := realPart(x), imagPart(x), realPart(y), imagPart(y)
	return Complex(bin("sub", bin("mul", a, c), bin("mul", b, d)), bin("add", bin("mul", a, d), bin("mul", b, c)))
}

// cdiv divides with the divisor scaled by its larger part first, so that
// |c|^2 + |d|^2 neither overflows nor underflows where the quotient is
// representable (the idea of Smith's algorithm; a zero divisor gives NaN or
// infinities as in NumPy).
func cdiv(x, y *Tensor) *Tensor {
	a, b, c, d := realPart(x), imagPart(x), realPart(y), imagPart(y)
	s := bin("maximum", un("abs", c), un("abs", d))
	cs, ds := bin("div", c, s), bin("div", d, s)
	den := bin("mul", bin("add", bin("mul", cs, cs), bin("mul", ds, ds)), s)
	re := bin("div", bin("add", bin("mul", a, cs), bin("mul", b, ds)), den)
	im := bin("div", bin("sub", bin("mul", b, cs), bin("mul", a, ds)), den)
	return Complex(re, im)
}

func cabs(z *Tensor) *Tensor { return bin("hypot", realPart(z), imagPart(z)) }

// The elementary functions follow C99 Annex G (its special values, and
// algorithms that neither overflow nor cancel where the result is
// representable, as glibc and FreeBSD's msun compute them), which is what
// NumPy returns and the array API standard's special cases ask. Every
// function is real ops over the parts with where selecting the regions
// (see complex_trig.go for the trigonometric and inverse functions).

func where(c, a, b *Tensor) *Tensor { return call1("where", nil, c, a, b) }
func and(a, b *Tensor) *Tensor      { return bin("logical_and", a, b) }
func or(a, b *Tensor) *Tensor       { return bin("logical_or", a, b) }
func not(a *Tensor) *Tensor         { return un("logical_not", a) }
func isNaN(x *Tensor) *Tensor       { return un("isnan", x) }
func isInf(x *Tensor) *Tensor       { return un("isinf", x) }
func isFinite(x *Tensor) *Tensor    { return un("isfinite", x) }

// cmp compares x with the constant v: op is gt, lt, ge, le, eq or ne.
func cmp(op string, x *Tensor, v float64) *Tensor { return bin(op, x, scalarLike(v, x)) }

// mulK, addK are x*v and x+v for a constant v.
func mulK(x *Tensor, v float64) *Tensor { return bin("mul", x, scalarLike(v, x)) }
func addK(x *Tensor, v float64) *Tensor { return bin("add", x, scalarLike(v, x)) }

// maxPart is the largest finite value of z's real dtype.
func maxPart(z *Tensor) float64 {
	if z.dtype.RealDType() == F32 {
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// expScaled is e^a as e^r·2^n with a = n ln 2 + r, |r| <= ln 2 / 2 (Cody
// and Waite's reduction, ln 2 in two parts so that n ln 2 loses nothing),
// 2^n in three exact factors pow(2, m): times scales a factor c by e^a so
// that a finite product stays finite where e^a alone overflows, and its
// error does not grow with |a| as that of WGSL's exp may (its bound is
// 3 + 2|x| ulps). Past ±clip, where every product overflows or
// underflows, a is clipped.
type expScaled struct{ er, p1, p2, p3 *Tensor }

func newExpScaled(a, z *Tensor) expScaled {
	// fdlibm's ln2_hi and ln2_lo (e_exp.c; e_expf.c for f32): n·hi is
	// exact for |n| < 2^20 (2^9), and hi + lo is ln 2 to twice the precision.
	hi, lo, clip := 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1500.0
	if z.dtype.RealDType() == F32 {
		hi, lo, clip = float64(math.Float32frombits(0x3f317200)), float64(math.Float32frombits(0x35bfbe8e)), 250
	}
	ac := where(cmp("gt", a, clip), scalarLike(clip, z), where(cmp("lt", a, -clip), scalarLike(-clip, z), a))
	n := un("round", mulK(ac, 1/math.Ln2))
	r := bin("sub", bin("sub", ac, mulK(n, hi)), mulK(n, lo))
	n1 := un("trunc", mulK(n, 1.0/3))
	n2 := un("trunc", mulK(bin("sub", n, n1), 0.5))
	n3 := bin("sub", bin("sub", n, n1), n2)
	two := scalarLike(2, z)
	return expScaled{un("exp", r), bin("pow", two, n1), bin("pow", two, n2), bin("pow", two, n3)}
}

// times is k·e^a·c, c after the first factor (a subnormal c times e^r·k
// could round to 0).
func (e expScaled) times(c *Tensor, k float64) *Tensor {
	out := bin("mul", bin("mul", mulK(e.er, k), e.p1), c)
	return bin("mul", bin("mul", out, e.p2), e.p3)
}

// cexp is e^a (cos b + i sin b), e^a scaled; e^a + 0i for a zero b, and
// C99's values for infinite a.
func cexp(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	e := newExpScaled(a, z)
	re := e.times(un("cos", b), 1)
	im := where(cmp("eq", b, 0), b, e.times(un("sin", b), 1))
	odd := not(isFinite(b))
	re = where(and(odd, cmp("eq", a, math.Inf(-1))), scalarLike(0, z), re)
	im = where(and(odd, cmp("eq", a, math.Inf(-1))), scalarLike(0, z), im)
	re = where(and(odd, cmp("eq", a, math.Inf(1))), scalarLike(math.Inf(1), z), re)
	return Complex(re, im)
}

// clog is log|z| + i arg z (the principal branch). log|z| is
// log1p(a^2 + b^2 - 1)/2 near the unit circle (no cancellation against
// log 1), and log of a scaled hypot for the largest and smallest |z|.
func clog(z *Tensor) *Tensor {
	x, y := realPart(z), imagPart(z)
	return Complex(logAbs(x, y, z), bin("atan2", y, x))
}

func logAbs(x, y, z *Tensor) *Tensor {
	ax, ay := un("abs", x), un("abs", y)
	hi, lo := bin("maximum", ax, ay), bin("minimum", ax, ay)
	// near 1: (hi - 1)(hi + 1) is exact enough for hi in [0.5, 2] (hi - 1 exactly)
	near := and(cmp("ge", hi, 0.5), cmp("le", hi, 2))
	hiN := where(near, hi, scalarLike(1, z))
	u := bin("add", bin("mul", addK(hiN, -1), addK(hiN, 1)), bin("mul", lo, lo))
	nearV := mulK(un("log1p", where(near, u, scalarLike(0, z))), 0.5)
	// far from 1: log|z| of z scaled by 2^60 (tiny |z|) or 1/4 (huge |z|)
	const k = 0x1p60
	small, big := cmp("lt", hi, 1/k), cmp("gt", hi, maxPart(z)/4)
	s := where(small, scalarLike(k, z), where(big, scalarLike(0.25, z), scalarLike(1, z)))
	shift := where(small, scalarLike(-60*math.Ln2, z), where(big, scalarLike(2*math.Ln2, z), scalarLike(0, z)))
	far := bin("add", un("log", bin("hypot", bin("mul", x, s), bin("mul", y, s))), shift)
	return where(near, nearV, far)
}

// csqrt is the principal square root (C99's csqrt): with d = |z|,
// sqrt((d + |a|)/2) on the larger side and b/(2 that) on the other, the
// inputs scaled where d + |a| would overflow or underflow; the special
// values of C99 (an infinite b gives inf + ib, whatever a).
func csqrt(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	hi := bin("maximum", un("abs", a), un("abs", b))
	const k = 0x1p60
	big, small := cmp("gt", hi, maxPart(z)/4), cmp("lt", hi, 1/k)
	scaleIn := where(big, scalarLike(0.25, z), where(small, scalarLike(k*k, z), scalarLike(1, z)))
	scaleOut := where(big, scalarLike(2, z), where(small, scalarLike(1/k, z), scalarLike(1, z)))
	as, bs := bin("mul", a, scaleIn), bin("mul", b, scaleIn)
	t := un("sqrt", mulK(bin("add", bin("hypot", as, bs), un("abs", as)), 0.5))
	t0 := where(cmp("eq", t, 0), scalarLike(1, z), t)
	other := un("abs", bin("div", mulK(bs, 0.5), t0))
	other = where(cmp("eq", t, 0), scalarLike(0, z), other)
	pos := cmp("ge", a, 0)
	re := bin("mul", where(pos, t, other), scaleOut)
	im := bin("copysign", bin("mul", where(pos, other, t), scaleOut), b)
	// C99's infinities: a = +inf gives inf + 0i (NaN b: inf + NaN i),
	// a = -inf gives 0 + inf i (NaN b: NaN + inf i), b = inf gives inf + ib.
	nanB := isNaN(b)
	re = where(cmp("eq", a, math.Inf(1)), a, where(cmp("eq", a, math.Inf(-1)), where(nanB, b, scalarLike(0, z)), re))
	im = where(cmp("eq", a, math.Inf(1)), where(nanB, b, bin("copysign", scalarLike(0, z), b)),
		where(cmp("eq", a, math.Inf(-1)), bin("copysign", scalarLike(math.Inf(1), z), b), im))
	infB := isInf(b)
	return Complex(where(infB, scalarLike(math.Inf(1), z), re), where(infB, b, im))
}

// cexpm1 is e^z - 1 as NumPy computes it, (expm1(a) cos b - 2 sin^2(b/2)) +
// i e^a sin b, with e^a scaled as in cexp where a alone would overflow the
// dtype but not float64 (NumPy's complex64 result is its complex128 one);
// but a zero b stays the imaginary part whatever a is, as the standard's
// special cases say (expm1(inf + 0j) is inf + 0j, where NumPy's inf·sin 0
// gives NaN).
func cexpm1(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	const top = 709.78 // e^a overflows float64 past it
	s, c := un("sin", b), un("cos", b)
	sh := un("sin", mulK(b, 0.5))
	small := bin("sub", bin("mul", un("expm1", a), c), mulK(bin("mul", sh, sh), 2))
	wide := and(cmp("gt", a, 10), cmp("le", a, top))
	e := newExpScaled(a, z)
	re := where(wide, addK(e.times(c, 1), -1), small)
	im := where(cmp("gt", a, top), bin("mul", un("exp", a), s), e.times(s, 1))
	im = where(cmp("eq", b, 0), b, im)
	return Complex(re, im)
}

// cone is 1 + 0i in z's dtype.
func cone(z *Tensor) *Tensor { return Complex(scalarLike(1, z), scalarLike(0, z)) }

// addReal is z + v for a real v: the imaginary part is left as it is, so
// a -0 keeps its side of a branch cut (adding 1+0i would turn it into +0).
func addReal(z *Tensor, v float64) *Tensor {
	return Complex(bin("add", realPart(z), scalarLike(v, z)), imagPart(z))
}

// clog1p is log(1 + z): 0.5 log1p(a(2 + a) + b^2) + i atan2(b, 1 + a) for
// |z| < 1, where forming 1 + z would lose a's digits, and clog(1 + z)
// elsewhere (which neither overflows nor loses digits there).
func clog1p(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	in := cmp("lt", bin("maximum", un("abs", a), un("abs", b)), 1)
	as, bs := where(in, a, scalarLike(0, z)), where(in, b, scalarLike(0, z))
	t := bin("add", bin("mul", as, addK(as, 2)), bin("mul", bs, bs))
	w := clog(addReal(z, 1))
	return Complex(where(in, mulK(un("log1p", t), 0.5), realPart(w)), imagPart(w))
}

// scale is z times a real constant.
func scale(z *Tensor, v float64) *Tensor {
	k := scalarLike(v, z)
	return Complex(bin("mul", realPart(z), k), bin("mul", imagPart(z), k))
}

func clog2(z *Tensor) *Tensor  { return scale(clog(z), 1/math.Ln2) }
func clog10(z *Tensor) *Tensor { return scale(clog(z), 1/math.Ln10) }

// csign is z/|z|, and 0 where z is 0.
func csign(z *Tensor) *Tensor {
	r := cabs(z)
	zero := bin("eq", r, scalarLike(0, z))
	safe := call1("where", nil, zero, scalarLike(1, z), r)
	return Complex(call1("where", nil, zero, scalarLike(0, z), bin("div", realPart(z), safe)),
		call1("where", nil, zero, scalarLike(0, z), bin("div", imagPart(z), safe)))
}

// cpow is exp(y log x), with x^0 = 1 for every x (NumPy and PyTorch).
func cpow(x, y *Tensor) *Tensor {
	p := cexp(cmul(y, clog(x)))
	zero := call1("logical_and", nil, bin("eq", realPart(y), scalarLike(0, y)), bin("eq", imagPart(y), scalarLike(0, y)))
	return Complex(call1("where", nil, zero, scalarLike(1, p), realPart(p)), call1("where", nil, zero, scalarLike(0, p), imagPart(p)))
}

// cmatmul is (A + iB)(C + iD) = (AC - BD) + i(AD + BC), four real products.
func cmatmul(x, y *Tensor) *Tensor {
	a, b := realPart(x).Contiguous(), imagPart(x).Contiguous()
	c, d := realPart(y).Contiguous(), imagPart(y).Contiguous()
	mm := func(p, q *Tensor) *Tensor { return bin("matmul", p, q) }
	return Complex(bin("sub", mm(a, c), mm(b, d)), bin("add", mm(a, d), mm(b, c)))
}
