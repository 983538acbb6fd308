package core

import "math"

// The trigonometric, hyperbolic and inverse functions of complex numbers
// by C99 Annex G: ccosh, csinh and ctanh directly (their large real parts
// scaled through e^(|a|/2) or, for ctanh, Kahan's formula), csin, ccos and
// ctan through them (sin z = -i sinh(iz), cos z = cosh(iz), tan z =
// -i tanh(iz)), and the inverse functions by Kahan's formulas ("Branch
// cuts for complex elementary functions"), whose square roots of 1 - z and
// 1 + z keep every digit near the branch points, with log(2z) for |z| so
// large that the rest is below rounding.

// hyperbolicParts gives cosh a · c and sinh a · s: for |a| > 20 as
// e^|a|/2 · c and sign a · e^|a|/2 · s (e^-|a| is below rounding there),
// e^|a| scaled where it alone would overflow.
func hyperbolicParts(a, c, s, z *Tensor) (*Tensor, *Tensor) {
	big := cmp("gt", un("abs", a), 20)
	as := where(big, scalarLike(0, z), a)
	e := newExpScaled(un("abs", where(big, a, scalarLike(0, z))), z)
	sign := bin("copysign", scalarLike(1, z), a)
	cc := where(big, e.times(c, 0.5), bin("mul", un("cosh", as), c))
	ss := where(big, bin("mul", sign, e.times(s, 0.5)), bin("mul", un("sinh", as), s))
	return cc, ss
}

// ccosh is cosh a cos b + i sinh a sin b.
func ccosh(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	re, im := hyperbolicParts(a, un("cos", b), un("sin", b), z)
	im = where(cmp("eq", b, 0), bin("mul", b, bin("copysign", scalarLike(1, z), a)), im)
	odd := not(isFinite(b))
	re = where(and(odd, isInf(a)), scalarLike(math.Inf(1), z), re)
	im = where(and(odd, cmp("eq", a, 0)), scalarLike(0, z), im)
	return Complex(re, im)
}

// csinh is sinh a cos b + i cosh a sin b.
func csinh(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	im, re := hyperbolicParts(a, un("sin", b), un("cos", b), z)
	im = where(cmp("eq", b, 0), b, im)
	odd := not(isFinite(b))
	// C99 (and glibc): sinh(±inf + i(inf or NaN)) = +inf + NaN i, sinh(±0 + i(inf or NaN)) = ±0 + NaN i
	re = where(and(odd, isInf(a)), scalarLike(math.Inf(1), z), where(and(odd, cmp("eq", a, 0)), a, re))
	return Complex(re, im)
}

// ctanh as glibc computes it: sinh a cosh a / d + i sin b cos b / d,
// d = sinh^2 a + cos^2 b, for |a| <= 20; sign a + 4 sin b cos b e^(-2|a|) i beyond.
func ctanh(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	big := cmp("gt", un("abs", a), 20)
	as := where(big, scalarLike(0, z), a)
	sh, ch, s, c := un("sinh", as), un("cosh", as), un("sin", b), un("cos", b)
	d := bin("add", bin("mul", sh, sh), bin("mul", c, c))
	re := where(big, bin("copysign", scalarLike(1, z), a), bin("div", bin("mul", sh, ch), d))
	e := un("exp", mulK(un("abs", where(big, a, scalarLike(0, z))), -2))
	im := where(big, bin("mul", mulK(bin("mul", s, c), 4), e), bin("div", bin("mul", s, c), d))
	im = where(cmp("eq", b, 0), b, im)
	// C99: tanh(±inf + iy) = ±1 ± 0i for every y; tanh(0 + i(inf or NaN)) = 0 + NaN i.
	infA := isInf(a)
	odd := not(isFinite(b))
	im = where(infA, bin("copysign", scalarLike(0, z), where(isFinite(b), bin("mul", s, c), b)), im)
	// and tanh(a + i(inf or NaN)) = NaN + NaN i for finite nonzero a
	re = where(and(odd, cmp("eq", a, 0)), a, where(and(odd, isFinite(a)), scalarLike(math.NaN(), z), re))
	return Complex(re, im)
}

// timesI is i*z = -b + ia; timesMinusI is -i*z = b - ia.
func timesI(z *Tensor) *Tensor      { return Complex(un("neg", imagPart(z)), realPart(z)) }
func timesMinusI(z *Tensor) *Tensor { return Complex(imagPart(z), un("neg", realPart(z))) }

// csin is -i sinh(iz), with glibc's sin(a ± inf i) = NaN + inf i for an infinite or NaN a.
func csin(z *Tensor) *Tensor {
	w := timesMinusI(csinh(timesI(z)))
	odd := and(not(isFinite(realPart(z))), isInf(imagPart(z)))
	return Complex(realPart(w), where(odd, scalarLike(math.Inf(1), z), imagPart(w)))
}
func ccos(z *Tensor) *Tensor { return ccosh(timesI(z)) }
func ctan(z *Tensor) *Tensor { return timesMinusI(ctanh(timesI(z))) }

// hugeArg is where |z| is so large (past 1e8) that the inverse functions
// are their leading terms: log(2z) and the like.
func hugeArg(z *Tensor) *Tensor { return cmp("gt", cabs(z), 1e8) }

// tame is z where keep holds and 0 elsewhere: the inputs of a region's
// formula, so that the region not taken computes nothing that overflows
// (and sends no NaN through the gradient of the where).
func tame(z, keep *Tensor) *Tensor {
	zero := scalarLike(0, z)
	return Complex(where(keep, realPart(z), zero), where(keep, imagPart(z), zero))
}

func cpick(c, x, y *Tensor) *Tensor {
	return Complex(where(c, realPart(x), realPart(y)), where(c, imagPart(x), imagPart(y)))
}

// casinh: Kahan's asin(w) for w = iz is atan(Re w / Re(s1 s2)) + i asinh(Im(conj(s1) s2)),
// s1 = sqrt(1 - w), s2 = sqrt(1 + w); asinh z = -i asin(iz). For huge |z|
// asinh z = log(2|a| + 2ib) with a's sign.
func casinh(z *Tensor) *Tensor {
	huge := hugeArg(z)
	re, im := kahanAsin(timesI(tame(z, not(huge))))
	small := Complex(im, un("neg", re))
	a := realPart(z)
	w := cpick(huge, asinhHuge(z), small)
	// C99: asinh(NaN ± 0i) = NaN ± 0i
	return Complex(realPart(w), where(and(isNaN(a), cmp("eq", imagPart(z), 0)), imagPart(z), imagPart(w)))
}

// asinhHuge is asinh z for huge |z|: log(2|a| + 2ib) with a's sign.
func asinhHuge(z *Tensor) *Tensor {
	a := realPart(z)
	l := clog(Complex(un("abs", a), imagPart(z)))
	return Complex(bin("copysign", addK(realPart(l), math.Ln2), a), imagPart(l))
}

// kahanAsin is asin(w) by Kahan's formula, as its parts.
func kahanAsin(w *Tensor) (*Tensor, *Tensor) {
	s1 := csqrt(addReal(Complex(un("neg", realPart(w)), un("neg", imagPart(w))), 1))
	s2 := csqrt(addReal(w, 1))
	r1, i1, r2, i2 := realPart(s1), imagPart(s1), realPart(s2), imagPart(s2)
	re := bin("atan2", realPart(w), bin("sub", bin("mul", r1, r2), bin("mul", i1, i2)))
	im := un("asinh", bin("sub", bin("mul", r1, i2), bin("mul", i1, r2)))
	return re, im
}

func casin(z *Tensor) *Tensor { return timesMinusI(casinh(timesI(z))) }

// cacos: Kahan's 2 atan2(Re s1, Re s2) + i asinh(Im(conj(s2) s1)),
// s1 = sqrt(1 - z), s2 = sqrt(1 + z); pi/2 - asin z for huge |z|.
func cacos(z *Tensor) *Tensor {
	huge := hugeArg(z)
	t := tame(z, not(huge))
	s1 := csqrt(addReal(Complex(un("neg", realPart(t)), un("neg", imagPart(t))), 1))
	s2 := csqrt(addReal(t, 1))
	r1, i1, r2, i2 := realPart(s1), imagPart(s1), realPart(s2), imagPart(s2)
	small := Complex(mulK(bin("atan2", r1, r2), 2), un("asinh", bin("sub", bin("mul", r2, i1), bin("mul", i2, r1))))
	s := timesMinusI(asinhHuge(timesI(z))) // asin z
	big := Complex(bin("sub", scalarLike(math.Pi/2, z), realPart(s)), un("neg", imagPart(s)))
	w := cpick(huge, big, small)
	// C99: acos(±0 + NaN i) = pi/2 + NaN i
	zeroNaN := and(cmp("eq", realPart(z), 0), isNaN(imagPart(z)))
	return Complex(where(zeroNaN, scalarLike(math.Pi/2, z), realPart(w)), imagPart(w))
}

// cacosh: Kahan's asinh(Re(conj(s1) s2)) + 2i atan2(Im s1, Re s2),
// s1 = sqrt(z - 1), s2 = sqrt(z + 1); log(2z) for huge |z|.
func cacosh(z *Tensor) *Tensor {
	huge := hugeArg(z)
	t := tame(z, not(huge))
	s1, s2 := csqrt(addReal(t, -1)), csqrt(addReal(t, 1))
	r1, i1, r2, i2 := realPart(s1), imagPart(s1), realPart(s2), imagPart(s2)
	small := Complex(un("asinh", bin("add", bin("mul", r1, r2), bin("mul", i1, i2))), mulK(bin("atan2", i1, r2), 2))
	l := clog(z)
	big := Complex(addK(realPart(l), math.Ln2), imagPart(l))
	w := cpick(huge, big, small)
	// glibc: acosh(±0 + NaN i) = NaN + pi/2 i
	zeroNaN := and(cmp("eq", realPart(z), 0), isNaN(imagPart(z)))
	return Complex(realPart(w), where(zeroNaN, scalarLike(math.Pi/2, z), imagPart(w)))
}

// catanh is log1p(4a/((1-a)^2 + b^2))/4 + i atan2(2b, (1-a)(1+a) - b^2)/2,
// the real part as a difference of logs of hypots near z = ±1 (where the
// log1p would cancel or its quotient overflow), and 1/z ± i pi/2 for huge |z|.
func catanh(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	h := cabs(z)
	huge := cmp("gt", h, 1e8)
	t := tame(z, not(huge))
	ta, tb := realPart(t), imagPart(t)
	oneM := bin("sub", scalarLike(1, z), ta)
	d := bin("add", bin("mul", oneM, oneM), bin("mul", tb, tb))
	// log1p(4a/d) where 4a/d is small; where it is not, z is near ±1 and
	// the difference of the logs of |1 + z| and |1 - z| loses nothing.
	dq := where(cmp("eq", d, 0), scalarLike(1, z), d)
	q := bin("div", mulK(ta, 4), dq)
	near := or(cmp("eq", d, 0), cmp("gt", un("abs", q), 0.5))
	re := mulK(un("log1p", where(near, scalarLike(0, z), q)), 0.25)
	reNear := mulK(bin("sub", un("log", bin("hypot", addK(ta, 1), tb)), un("log", bin("hypot", oneM, tb))), 0.5)
	re = where(near, reNear, re)
	im := mulK(bin("atan2", mulK(tb, 2), bin("sub", bin("mul", oneM, addK(ta, 1)), bin("mul", tb, tb))), 0.5)
	// huge: Re(1/z) = (a/h)/h, Im = ±pi/2 - (b/h)/h (0 when h is infinite)
	hq := where(huge, h, scalarLike(1, z))
	fin := isFinite(h)
	bigRe := where(fin, bin("div", bin("div", a, hq), hq), bin("copysign", scalarLike(0, z), a))
	bigIm := bin("sub", bin("copysign", scalarLike(math.Pi/2, z), b), where(fin, bin("div", bin("div", b, hq), hq), scalarLike(0, z)))
	bigIm = where(isNaN(b), b, bigIm)
	re, im = where(huge, bigRe, re), where(huge, bigIm, im)
	// C99: atanh(±0 + NaN i) = ±0 + NaN i
	re = where(and(cmp("eq", a, 0), isNaN(b)), a, re)
	return Complex(re, im)
}

func catan(z *Tensor) *Tensor { return timesMinusI(catanh(timesI(z))) }
