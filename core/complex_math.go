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

// cexp is e^a (cos b + i sin b).
func cexp(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	e := un("exp", a)
	return Complex(bin("mul", e, un("cos", b)), bin("mul", e, un("sin", b)))
}

// clog is log|z| + i arg z (the principal branch).
func clog(z *Tensor) *Tensor {
	return Complex(un("log", cabs(z)), bin("atan2", imagPart(z), realPart(z)))
}

// csqrt is the principal square root: sqrt((|z|+a)/2) + i sign(b) sqrt((|z|-a)/2),
// the sign taken with copysign so that -0 imaginary parts keep their side
// of the branch cut.
func csqrt(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	r := cabs(z)
	half := scalarLike(0.5, z)
	re := un("sqrt", bin("mul", bin("add", r, a), half))
	im := un("sqrt", bin("mul", bin("sub", r, a), half))
	return Complex(re, bin("copysign", im, b))
}

// cexpm1 is e^z - 1 without cancelling for small z: (expm1(a) cos b - 2 sin^2(b/2)) + i e^a sin b.
func cexpm1(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	sh := un("sin", bin("mul", b, scalarLike(0.5, z)))
	re := bin("sub", bin("mul", un("expm1", a), un("cos", b)), bin("mul", scalarLike(2, z), bin("mul", sh, sh)))
	return Complex(re, bin("mul", un("exp", a), un("sin", b)))
}

// csin is sin a cosh b + i cos a sinh b; ccos is cos a cosh b - i sin a sinh b.
func csin(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	return Complex(bin("mul", un("sin", a), un("cosh", b)), bin("mul", un("cos", a), un("sinh", b)))
}

func ccos(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	return Complex(bin("mul", un("cos", a), un("cosh", b)), un("neg", bin("mul", un("sin", a), un("sinh", b))))
}

// csinh is sinh a cos b + i cosh a sin b; ccosh is cosh a cos b + i sinh a sin b.
func csinh(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	return Complex(bin("mul", un("sinh", a), un("cos", b)), bin("mul", un("cosh", a), un("sin", b)))
}

func ccosh(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	return Complex(bin("mul", un("cosh", a), un("cos", b)), bin("mul", un("sinh", a), un("sin", b)))
}

// ctanh is sinh(2a)/(cosh 2a + cos 2b) + i sin(2b)/(cosh 2a + cos 2b), with
// tanh(a) as the real part where |a| is so large that cosh overflows.
func ctanh(z *Tensor) *Tensor {
	a2, b2 := bin("mul", realPart(z), scalarLike(2, z)), bin("mul", imagPart(z), scalarLike(2, z))
	den := bin("add", un("cosh", a2), un("cos", b2))
	big := bin("gt", un("abs", realPart(z)), scalarLike(20, z))
	re := call1("where", nil, big, un("tanh", realPart(z)), bin("div", un("sinh", a2), den))
	im := call1("where", nil, big, bin("mul", un("sin", b2), scalarLike(0, z)), bin("div", un("sin", b2), den))
	return Complex(re, im)
}

// timesI is i*z = -b + ia; timesMinusI is -i*z = b - ia.
func timesI(z *Tensor) *Tensor      { return Complex(un("neg", imagPart(z)), realPart(z)) }
func timesMinusI(z *Tensor) *Tensor { return Complex(imagPart(z), un("neg", realPart(z))) }

func cone(z *Tensor) *Tensor { return Complex(scalarLike(1, z), scalarLike(0, z)) }

// addReal is z + v for a real v: the imaginary part is left as it is, so
// a -0 keeps its side of a branch cut (adding 1+0i would turn it into +0).
func addReal(z *Tensor, v float64) *Tensor {
	return Complex(bin("add", realPart(z), scalarLike(v, z)), imagPart(z))
}

// clog1p is log(1 + z) without cancelling for small z:
// 0.5 log1p(a(2 + a) + b^2) + i atan2(b, 1 + a).
func clog1p(z *Tensor) *Tensor {
	a, b := realPart(z), imagPart(z)
	t := bin("add", bin("mul", a, bin("add", a, scalarLike(2, z))), bin("mul", b, b))
	return Complex(bin("mul", un("log1p", t), scalarLike(0.5, z)), bin("atan2", b, bin("add", a, scalarLike(1, z))))
}

// scale is z times a real constant.
func scale(z *Tensor, v float64) *Tensor {
	k := scalarLike(v, z)
	return Complex(bin("mul", realPart(z), k), bin("mul", imagPart(z), k))
}

// The inverse functions through log1p forms (principal branches, with C99's
// sides of the cuts for signed zeros, as NumPy):
// asinh z = log1p(z + z^2/(1 + sqrt(1 + z^2))).
func casinh(z *Tensor) *Tensor {
	z2 := cmul(z, z)
	return clog1p(bin("add", z, cdiv(z2, addReal(csqrt(addReal(z2, 1)), 1))))
}

// acosh z = log(z + sqrt(z + 1) sqrt(z - 1)).
func cacosh(z *Tensor) *Tensor {
	return clog(bin("add", z, cmul(csqrt(addReal(z, 1)), csqrt(addReal(z, -1)))))
}

// atanh z = (log1p(z) - log1p(-z)) / 2.
func catanh(z *Tensor) *Tensor {
	return scale(bin("sub", clog1p(z), clog1p(un("neg", z))), 0.5)
}

func casin(z *Tensor) *Tensor { return timesMinusI(casinh(timesI(z))) }
func catan(z *Tensor) *Tensor { return timesMinusI(catanh(timesI(z))) }

func cacos(z *Tensor) *Tensor {
	s := casin(z)
	return Complex(bin("sub", scalarLike(math.Pi/2, z), realPart(s)), un("neg", imagPart(s)))
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
