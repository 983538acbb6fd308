package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Vectorised float32 transcendentals. The polynomials are Cephes' single
// precision ones (log, sin, cos: about 1 ulp on their reduced ranges),
// fits of our own for exp and tanh (fits.py) and, for erf, the Taylor
// series near 0 and Numerical Recipes' Chebyshev fit of erfc (fractional
// error below 1.2e-7) elsewhere; every result is a few ulp from the float64
// reference, far inside the registry's float32 tolerance (1e-4 relative).
// Special values follow Go's math package: NaN propagates, infinities and
// signed zeros come out as the reference's. These kernels are bound by
// their vector instructions, not by memory, so fewer instructions is what
// makes them faster.

// horner evaluates c[0]*x^(k) + ... + c[k] by Horner's rule with FMAs.
func (s *isa) horner(x VecVirtual, c ...float64) VecVirtual {
	p := s.load(cf(float32(c[0])))
	for _, k := range c[1:] {
		VFMADD213PS(cf(float32(k)), x, p) // p = x*p + k
	}
	return p
}

// abs clears the sign bits.
func (s *isa) abs(x VecVirtual) VecVirtual {
	a := s.vec()
	VANDPS(cu(0x7fffffff), x, a)
	return a
}

// signOf keeps only the sign bits.
func (s *isa) signOf(x VecVirtual) VecVirtual {
	g := s.vec()
	VANDPS(cu(0x80000000), x, g)
	return g
}

// round rounds to the nearest integer, ties to even.
func (s *isa) round(x, d VecVirtual) {
	if s.wide {
		VRNDSCALEPS(U8(0), x, d)
	} else {
		VROUNDPS(U8(0), x, d)
	}
}

// exp is e^x. x is clamped to [-104, 88.8] (beyond which the result is 0
// or +Inf anyway) with the clamp letting NaN through; x = n ln2 + r with
// |r| <= ln2/2 in two parts (Cody-Waite); e^r by a degree-6 polynomial
// (fits.py: 0.84 ulp on that range) in six FMAs, two fewer than Cephes'
// r + r²P(r) + 1; the scaling by 2^n in two halves so that results in the
// subnormal range round once, as the reference's do.
func (s *isa) exp(x VecVirtual) VecVirtual {
	// VMAXPS and VMINPS return their first operand (x) on NaN.
	t := s.load(cf(-104))
	VMAXPS(x, t, t)
	hi := s.load(cf(88.8))
	VMINPS(t, hi, t)
	return s.expIn(t)
}

// expIn is e^t for t already in [-104, 88.8] (or NaN); it overwrites t.
// With AVX-512 a lane at -104 (whose result rounds to 0) is zeroed by the
// scaling's mask rather than scaled into the subnormals: a result that
// underflows costs a microcode assist of the whole instruction (a
// 128-float softmax row with a third of it masked by -3.4e38, as BERT
// masks padding, took 610 ns instead of 39). Results in the subnormal
// range above it still round there, assist and all.
func (s *isa) expIn(t VecVirtual) VecVirtual {
	var keep Register
	if s.wide {
		keep = s.cmp(cmpNLEU, t, cf(-104)) // t > -104, or NaN
	}
	n := s.vec()
	VMULPS(cf(math.Log2E), t, n)
	s.round(n, n)
	r := t
	VFNMADD231PS(cf(0.693359375), n, r) // r -= n*C1
	VFNMADD231PS(cf(-2.12194440e-4), n, r)
	p := s.horner(r, 0.0013843653723597527, 0.00837415549904108, 0.04166800156235695,
		0.16666431725025177, 0.4999999403953552, 1.0, 1.0)
	if s.wide {
		VSCALEFPS_Z(n, p, keep, p) // p * 2^n, rounding subnormals once
		return p
	}
	ni, n1, n2 := s.vec(), s.vec(), s.vec()
	VCVTPS2DQ(n, ni)
	VPSRAD(U8(1), ni, n1)
	VPSUBD(n1, ni, n2)
	VPADDD(cu(127), n1, n1)
	VPSLLD(U8(23), n1, n1)
	VPADDD(cu(127), n2, n2)
	VPSLLD(U8(23), n2, n2)
	VMULPS(n1, p, p)
	VMULPS(n2, p, p)
	return p
}

// log is Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by
// a degree-8 polynomial, e ln2 added in two parts. Subnormal x is scaled
// by 2^23 first; 0 gives -Inf, negative x and NaN give NaN, +Inf gives +Inf.
func (s *isa) log(x VecVirtual) VecVirtual {
	sub := s.cmp(cmpLT, x, cf(0x1p-126))
	scaled := s.vec()
	VMULPS(cf(0x1p23), x, scaled)
	xs := s.blend(sub, scaled, x)
	e := s.blend(sub, cf(-23), s.zero())
	ei := s.vec()
	VPSRLD(U8(23), xs, ei)
	VPSUBD(cu(126), ei, ei)
	ef := s.vec()
	VCVTDQ2PS(ei, ef)
	VADDPS(ef, e, e)
	m := s.vec()
	s.pand(cu(0x007fffff), xs, m)
	s.por(cu(0x3f000000), m, m) // m in [0.5, 1)
	low := s.cmp(cmpLT, m, cf(0.707106781186547524))
	t := s.vec()
	VSUBPS(cf(1), m, t)
	VADDPS(m, t, m) // 2m - 1
	m = s.blend(low, m, t)
	one := s.load(cf(1))
	e = s.blend(low, s.sub(e, one), e)
	z := s.vec()
	VMULPS(m, m, z)
	y := s.horner(m, 7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
		1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
	VMULPS(m, y, y)
	VMULPS(z, y, y)
	VFMADD231PS(cf(-2.12194440e-4), e, y) // y += e*C2
	VFMADD231PS(cf(-0.5), z, y)
	VADDPS(m, y, y)
	VFMADD231PS(cf(0.693359375), e, y)
	y = s.blend(s.cmp(cmpEQ, x, cf(float32(math.Inf(1)))), x, y)
	y = s.blend(s.cmp(cmpEQ, x, s.zero()), cf(float32(math.Inf(-1))), y)
	return s.blend(s.cmp(cmpNGEU, x, s.zero()), cu(0x7fc00000), y)
}

// sub is a - b in a new register.
func (s *isa) sub(a, b VecVirtual) VecVirtual {
	d := s.vec()
	VSUBPS(b, a, d)
	return d
}

// tanh is x·P(x²)/Q(x²), a (6, 3) rational fit of tanh(x)/x (fits.py;
// under 5 ulps in float32), for |x| clamped to 9, past which tanh rounds
// to ±1; the quotient, which overshoots 1 by up to 2 ulps near the clamp,
// is clamped to [-1, 1]. One division and ten FMAs: Cephes' two branches
// (a polynomial below 0.625, 1 - 2/(e^{2|x|} + 1) above) cost twice the
// instructions, and the kernel was bound by them, not by memory. Odd, so
// -0 stays -0; NaN passes the clamps (VMAXPS and VMINPS return their first
// operand on NaN).
func (s *isa) tanh(x VecVirtual) VecVirtual {
	xc := s.clamp(x, 9)
	z := s.vec()
	VMULPS(xc, xc, z)
	p := s.horner(z, -8.490217806144534e-14, 5.278589718105131e-11, -2.0226659458444374e-08,
		1.1154682397318538e-05, 0.003103993134573102, 0.13084043562412262, 1.0)
	q := s.horner(z, 0.0002546198375057429, 0.024495325982570648, 0.46417370438575745, 1.0)
	VMULPS(xc, p, p)
	VDIVPS(q, p, p)
	return s.clamp(p, 1)
}

// clamp is x limited to [-c, c], NaN kept.
func (s *isa) clamp(x VecVirtual, c float32) VecVirtual {
	lo := s.load(cf(-c))
	VMAXPS(x, lo, lo)
	hi := s.load(cf(c))
	VMINPS(lo, hi, hi)
	return hi
}

// sigmoid is 1/(1 + e^-|x|) for x >= 0 and e^-|x|/(1 + e^-|x|) below:
// no overflow, and the negative tail keeps its relative accuracy down to
// the subnormals (1/(1 + e^-x) gives 0 from x = -88.8).
func (s *isa) sigmoid(x VecVirtual) VecVirtual {
	e := s.exp(s.negAbs(x))
	one := s.load(cf(1))
	d := s.vec()
	VADDPS(cf(1), e, d)
	VDIVPS(d, one, one) // 1/(1+e)
	VMULPS(one, e, e)   // e/(1+e)
	return s.blend(s.cmp(cmpGE, x, s.zero()), one, e)
}

// negAbs is -|x|.
func (s *isa) negAbs(x VecVirtual) VecVirtual {
	d := s.vec()
	VORPS(cu(0x80000000), x, d)
	return d
}

// silu is x·sigmoid(x).
func (s *isa) silu(x VecVirtual) VecVirtual {
	y := s.sigmoid(x)
	VMULPS(x, y, y)
	return y
}

// geluTanh is x·sigmoid(2u), u = √(2/π)(x + 0.044715x³), as the reference.
func (s *isa) geluTanh(x VecVirtual) VecVirtual {
	const k = 2 * 0.7978845608028654
	x2 := s.vec()
	VMULPS(x, x, x2)
	u := s.load(cf(k * 0.044715))
	VFMADD213PS(cf(k), x2, u) // k + k·0.044715x²
	VMULPS(x, u, u)           // 2u
	y := s.sigmoid(u)
	VMULPS(x, y, y)
	return y
}

// erfParts gives, for a = |z|, erf(a) for a < 0.5 by its Taylor series
// (8 terms, exact to float32 there) and erfc(a) (erfcFit) elsewhere.
func (s *isa) erfParts(a VecVirtual) (small Register, erfSmall, erfcBig VecVirtual) {
	small = s.cmp(cmpLT, a, cf(0.5))
	z := s.vec()
	VMULPS(a, a, z)
	erfSmall = s.horner(z, -1.4925650358406251e-05, 0.00012055332981789664, -0.0008548327023450852,
		0.005223977625442188, -0.026866170645131252, 0.11283791670955126, -0.37612638903183754, 1.1283791670955126)
	VMULPS(a, erfSmall, erfSmall)
	return small, erfSmall, s.erfcFit(a, nil)
}

// erfcFit is erfc(a), a >= 0, as t·exp(-a² + P(t)), t = 1/(1 + a/2)
// (Numerical Recipes' erfcc, fractional error below 1.2e-7 everywhere),
// with -a² + P(t) formed in one FMA so that the tail keeps its relative
// accuracy. halfSq, when not nil, is x with a = |x|/√2 (gelu's argument):
// -a² is then formed as -(x·x)/2 from x·x split exactly in two by an FMA,
// since the rounding of a itself would cost 2a² ulps in the tail.
func (s *isa) erfcFit(a, halfSq VecVirtual) VecVirtual {
	t := s.load(cf(0.5))
	VFMADD213PS(cf(1), a, t) // 1 + a/2
	one := s.load(cf(1))
	VDIVPS(t, one, t)
	p := s.horner(t, 0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
		0.09678418, 0.37409196, 1.00002368, -1.26551223)
	if halfSq == nil {
		VFNMADD231PS(a, a, p) // p - a*a, rounded once
	} else {
		// |x| past 20 underflows anyway; clamped, x·x cannot overflow
		// into inf - inf (VMINPS returns its first operand on NaN).
		x := s.load(cf(20))
		VMINPS(s.abs(halfSq), x, x)
		hi, lo := s.vec(), s.vec()
		VMULPS(x, x, hi)
		VMOVUPS(hi, lo)
		VFMSUB231PS(x, x, lo)        // x*x - hi, exactly
		VFNMADD231PS(cf(0.5), hi, p) // p - hi/2
		VFNMADD231PS(cf(0.5), lo, p) // p - lo/2
	}
	ec := s.exp(p)
	VMULPS(t, ec, ec)
	return ec
}

// erf is odd: computed on |x|, sign restored.
func (s *isa) erf(x VecVirtual) VecVirtual {
	small, es, ec := s.erfParts(s.abs(x))
	big := s.load(cf(1))
	VSUBPS(ec, big, big)
	y := s.blend(small, es, big)
	VORPS(s.signOf(x), y, y)
	return y
}

// gelu is x·Φ(x).
func (s *isa) gelu(x VecVirtual) VecVirtual {
	y := s.normCDF(x)
	VMULPS(x, y, y)
	return y
}

// normCDF is Φ(x): Φ(-|x|) from gaussTail, which keeps its relative
// accuracy down the negative tail (no 1 + erf cancellation), and 1 minus
// it for x >= 0.
func (s *isa) normCDF(x VecVirtual) VecVirtual {
	e := s.gaussTail(s.abs(x))
	other := s.load(cf(1))
	VSUBPS(e, other, other)
	return s.blend(s.cmp(cmpLT, x, s.zero()), e, other)
}

// gaussTail is Φ(-y) = erfc(y/√2)/2 for y >= 0 (or NaN), clamped to 15,
// past which it rounds to 0 (so that gelu(-inf) is -inf·0 = NaN): t·exp(-y²/2 + P(t - c)), t = 1/(1 + ky), P of
// degree 8 (fits.py: 1.4 ulps), written around c, the middle of t's range,
// where its Horner sum rounds least. -y²/2 + P is one FMA of y and y/2
// (exact), so the argument is rounded once, and it needs none of exp's
// clamps. Thirty-odd instructions where Numerical Recipes' erfc (degree 9
// in t, exp clamped, x² split in two) took nearly fifty: gelu is bound by
// its instructions.
func (s *isa) gaussTail(y VecVirtual) VecVirtual {
	yc := s.load(cf(15))
	VMINPS(y, yc, yc) // VMINPS returns its first operand (y) on NaN
	t := s.load(cf(0.4000000059604645))
	VFMADD213PS(cf(1), yc, t) // 1 + k·y
	one := s.load(cf(1))
	VDIVPS(t, one, t)
	u := s.vec()
	VSUBPS(cf(0.5714285969734192), t, u)
	p := s.horner(u, 0.18988406658172607, -0.10434912145137787, -0.21179978549480438, 0.23001961410045624,
		0.1325928419828415, -0.38029196858406067, -0.09083301573991776, 1.2204517126083374, -1.1760040521621704)
	h := s.vec()
	VMULPS(cf(0.5), yc, h)
	VFNMADD231PS(h, yc, p) // P - y·y/2, rounded once
	e := s.expIn(p)
	VMULPS(t, e, e)
	return e
}

// geluSlope is the exact gelu's derivative Φ(x) + x·φ(x), with
// φ(x) = e^{-x²/2}/√(2π) and -x²/2 formed exactly as in erfParts.
func (s *isa) geluSlope(x VecVirtual) VecVirtual {
	cdf := s.normCDF(x)
	xc := s.load(cf(20))
	VMINPS(s.abs(x), xc, xc) // past 20 the density underflows anyway
	hi, lo := s.vec(), s.vec()
	VMULPS(xc, xc, hi)
	VMOVUPS(hi, lo)
	VFMSUB231PS(xc, xc, lo) // xc*xc - hi, exactly
	arg := s.zero()
	VFNMADD231PS(cf(0.5), hi, arg)
	VFNMADD231PS(cf(0.5), lo, arg)
	pdf := s.exp(arg)
	VMULPS(cf(float32(1/math.Sqrt(2*math.Pi))), pdf, pdf)
	VFMADD231PS(pdf, x, cdf) // cdf + x*pdf
	return cdf
}

// geluTanhSlope is the tanh form's derivative as the reference writes it:
// s + 2x·s(1-s)·√(2/π)(1 + 3·0.044715x²) with s = sigmoid(2u), in which
// 1 + tanh and 1 - tanh² do not cancel in the negative tail.
func (s *isa) geluTanhSlope(x VecVirtual) VecVirtual {
	const k = 0.7978845608028654
	// x is clamped to ±20, past which s(1 - s) is 0 anyway, so that the
	// cubic cannot overflow into 0·inf.
	xc := s.load(cf(-20))
	VMAXPS(x, xc, xc) // VMAXPS and VMINPS return their first operand (x) on NaN
	hi := s.load(cf(20))
	VMINPS(xc, hi, xc)
	x2 := s.vec()
	VMULPS(xc, xc, x2)
	u := s.load(cf(2 * k * 0.044715))
	VFMADD213PS(cf(2*k), x2, u) // 2k + 2k·0.044715x²
	VMULPS(xc, u, u)            // 2u
	sg := s.sigmoid(u)
	one := s.load(cf(1))
	VSUBPS(sg, one, one) // 1 - s
	VMULPS(sg, one, one) // s(1-s)
	q := s.load(cf(6 * k * 0.044715))
	VFMADD213PS(cf(2*k), x2, q) // 2k(1 + 3·0.044715x²)
	VMULPS(xc, q, q)
	VFMADD231PS(q, one, sg) // s + s(1-s)·q
	// At ±inf the reference's 2x·s(1-s) is inf·0: NaN.
	return s.blend(s.cmp(cmpEQ, s.abs(x), cf(float32(math.Inf(1)))), cu(0x7fc00000), sg)
}

// trigBound is the largest |x| the three-part reduction below keeps
// accurate (y·C1 stays exact); lanes past it, infinities and NaN are
// reported and the Go side recomputes them with math.Sin/Cos.
const trigBound = 65536

// sincos is Cephes' sinf/cosf: x reduced by the nearest even multiple j
// of π/4 in three parts, then the sine or cosine polynomial by j, with
// the sign by j (and x for sin). Lanes with |x| > trigBound or NaN are
// ORed into flag.
func (s *isa) sincos(x VecVirtual, cos bool, flag GPVirtual) VecVirtual {
	a := s.abs(x)
	s.orInto(s.cmp(cmpNLEU, a, cf(trigBound)), flag)
	j := s.vec()
	VMULPS(cf(4/math.Pi), a, j)
	VCVTTPS2DQ(j, j)
	VPADDD(cu(1), j, j)
	s.pand(cu(0xfffffffe), j, j)
	jf := s.vec()
	VCVTDQ2PS(j, jf)
	r := a
	VFNMADD231PS(cf(0.78515625), jf, r)
	VFNMADD231PS(cf(2.4187564849853515625e-4), jf, r)
	VFNMADD231PS(cf(3.77489497744594108e-8), jf, r)
	z := s.vec()
	VMULPS(r, r, z)
	ps := s.horner(z, -1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
	VMULPS(z, ps, ps)
	VFMADD213PS(r, r, ps) // r + r*z*S(z)
	pc := s.horner(z, 2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
	VMULPS(z, pc, pc)
	VMULPS(z, pc, pc)
	VFNMADD231PS(cf(0.5), z, pc) // - z/2
	VADDPS(cf(1), pc, pc)
	// j is 0, 2, 4 or 6 (mod 8): bit 1 picks the other polynomial, bit 2
	// (of j + 2 for the cosine) flips the sign.
	sel := s.bitMask(j, 2)
	sign := s.vec()
	var y VecVirtual
	if cos {
		y = s.blend(sel, ps, pc)
		VPADDD(cu(2), j, sign)
		s.pand(cu(4), sign, sign)
		VPSLLD(U8(29), sign, sign)
	} else {
		y = s.blend(sel, pc, ps)
		s.pand(cu(4), j, sign)
		VPSLLD(U8(29), sign, sign)
		s.pxor(s.signOf(x), sign, sign)
	}
	s.pxor(sign, y, y)
	return y
}

// bitMask is the mask of lanes of the integer vector v with bit set.
func (s *isa) bitMask(v VecVirtual, bit uint32) Register {
	if s.wide {
		k := K()
		VPTESTMD(cu(bit), v, k)
		return k
	}
	m := YMM()
	s.pand(cu(bit), v, m)
	VPCMPEQD(cu(bit), m, m)
	return m
}

// unaryMath lists the functions emitted as dst[i] = f(src[i]).
var unaryMath = []struct {
	name   string
	unroll int
	f      func(s *isa, x VecVirtual) VecVirtual
}{
	{"Exp", 1, (*isa).exp},
	{"Log", 1, (*isa).log},
	{"Tanh", 1, (*isa).tanh},
	{"Sigmoid", 1, (*isa).sigmoid},
	{"Silu", 1, (*isa).silu},
	{"Gelu", 1, (*isa).gelu},
	{"GeluTanh", 1, (*isa).geluTanh},
	{"Erf", 1, (*isa).erf},
	{"Sqrt", 4, func(s *isa, x VecVirtual) VecVirtual { d := s.vec(); VSQRTPS(x, d); return d }},
	{"Neg", 4, func(s *isa, x VecVirtual) VecVirtual { d := s.vec(); VXORPS(cu(0x80000000), x, d); return d }},
	{"Abs", 4, (*isa).abs},
	{"Square", 4, func(s *isa, x VecVirtual) VecVirtual { d := s.vec(); VMULPS(x, x, d); return d }},
	// relu keeps -0 and NaN (neither is < 0), as PyTorch's does.
	{"Relu", 4, func(s *isa, x VecVirtual) VecVirtual { return s.blend(s.cmp(cmpLT, x, s.zero()), s.zero(), x) }},
}

// unaryWide are the functions of unaryMath that write a vector themselves
// with AVX-512 (gelu's pieces and the general path it falls back to,
// gelu_pieces.go); n makes their labels unique.
var unaryWide = map[string]func(s *isa, x VecVirtual, dst Mem, n int){"Gelu": (*isa).geluWideBody}

// streamingUnary names the ops of unaryMath that are a few instructions
// a vector, so memory-bound, and also get a kernel with non-temporal
// stores (outputStore says why); they are the last of unaryMath, in
// order, as ewUn lists them.
var streamingUnary = []string{"Sqrt", "Neg", "Abs", "Square", "Relu"}

// genUnaryMath writes name's kernel, dst[i] = f(src[i]).
func genUnaryMath(s *isa, name string, f func(s *isa, x VecVirtual) VecVirtual, unroll int, out outputStore) {
	TEXT(out.kernel(s, name), NOSPLIT, "func(dst, src *float32, n int)")
	Pragma("noescape")
	Doc(out.doc(s, name, "sets dst[i] = "+name+"(src[i])."))
	dst, src := arrayParam("dst", 4), arrayParam("src", 4)
	n := GP64()
	Load(Param("n"), n)
	bodies := 0
	s.loops(n, []*stream{dst, src}, unroll, func(j int) {
		x := s.load(src.at(s, j))
		if wide := unaryWide[name]; wide != nil && s.wide {
			wide(s, x, dst.at(s, j), bodies)
			bodies++
			return
		}
		out.store(f(s, x), dst.at(s, j))
	})
	out.ret()
}

func genUnary(s *isa) {
	for _, u := range unaryMath {
		genUnaryMath(s, u.name, u.f, u.unroll, cachedStores)
	}
	for _, u := range unaryMath[len(unaryMath)-len(streamingUnary):] {
		genUnaryMath(s, u.name, u.f, u.unroll, streamingStores)
	}
	for _, cos := range []bool{false, true} {
		name := "Sin"
		if cos {
			name = "Cos"
		}
		TEXT("ew"+name+"F32"+s.name, NOSPLIT, "func(dst, src *float32, n int) int")
		Pragma("noescape")
		Doc("ew"+name+"F32"+s.name+" sets dst[i] = "+name+"(src[i]); a nonzero result says some |src[i]| was",
			"past trigBound or NaN, and those elements are to be recomputed.")
		dst, src := arrayParam("dst", 4), arrayParam("src", 4)
		n := GP64()
		Load(Param("n"), n)
		flag := GP64()
		XORQ(flag, flag)
		s.loops(n, []*stream{dst, src}, 1, func(j int) {
			VMOVUPS(s.sincos(s.load(src.at(s, j)), cos, flag), dst.at(s, j))
		})
		Store(flag, ReturnIndex(0))
		RET()
	}
}
