package core

import (
	"math"

	"github.com/webtensor/webtensor/core/numerics"
)

// The inverse trigonometric and hyperbolic functions, base-2 and base-10
// logarithms and trunc: the array API standard's remaining unary math.
// Each is described by its arithmetic (Pointwise), from which every backend
// builds its kernel; the GPU expressions avoid the shader builtins whose
// accuracy the WGSL spec leaves loose (asin, acos, sinh, ...) and use the
// shared helpers that the CPU's tolerance already holds for (m_atan2,
// m_log1p, m_expm1).

// pointwise1 describes a one-input op by its float64 function and its GPU
// expression over the input v (attribute-free).
func pointwise1(f func(x float64) float64, expr func(v string) string) *Pointwise {
	return &Pointwise{
		F:    func(Attrs) func(float64) float64 { return f },
		Expr: func(args []string, _ string, _ Attrs, _ ScalarSlots) string { return expr(args[0]) },
	}
}

// withSignOf gives r (>= 0 or NaN), the value at |x|, the sign of x for an
// odd function; below 1e-30 the function is x itself, which keeps -0 (and
// needs no bit casts, so it holds for f32 and CUDA's f64 alike).
func withSignOf(r, x string) string {
	return tinyIsItself("select("+r+", -("+r+"), "+x+" < 0.0)", x)
}

// tinyIsItself is r, or x itself where |x| < 1e-30, for a function that
// is x to first order there (asin, atan): it keeps -0 and subnormals
// exact where a driver's atan2 does not (SwiftShader, Chromium's software
// WebGPU, gives atan2(-0, 1) = pi).
func tinyIsItself(r, x string) string {
	return "select(" + r + ", " + x + ", abs(" + x + ") < 1e-30)"
}

// oneMinusSquare is (1 - x)(1 + x), 1 - x² without cancellation near ±1.
func oneMinusSquare(v string) string { return "((1.0 - " + v + ") * (1.0 + " + v + "))" }

// unaryInverse is a float-result op with Pointwise math and gradient
// g * d(x), d written with other ops.
func unaryInverse(name, doc string, smooth func(DType, ...int) Gen, ints Gen, pw *Pointwise, d func(x, out *Tensor) *Tensor) *OpDef {
	def := unaryDef(unarySpec{name: name, doc: doc, result: unaryFloat, smooth: smooth, ints: ints,
		grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, d(x, out)) }})
	def.Pointwise = pw
	return def
}

// invSqrt is 1 / sqrt(t).
func invSqrt(t *Tensor) *Tensor { return ew("rsqrt", t) }

func init() {
	unit, ge1 := ewRange(-0.8, 0.8), ewRange(1.2, 4)
	MustRegister(
		unaryInverse("asin", "Inverse sine in [-pi/2, pi/2] (NaN outside [-1, 1]); integers give f32.", unit, GI(I32, -1, 2, 2, 3),
			pointwise1(math.Asin, func(v string) string {
				return tinyIsItself("m_atan2("+v+", sqrt("+oneMinusSquare(v)+"))", v)
			}),
			func(x, _ *Tensor) *Tensor {
				return invSqrt(ew("mul", ew("sub", ewConst(x, 1), x), ew("add", ewConst(x, 1), x)))
			}),
		unaryInverse("acos", "Inverse cosine in [0, pi] (NaN outside [-1, 1]); integers give f32.", unit, GI(I32, -1, 2, 2, 3),
			pointwise1(math.Acos, func(v string) string { return "m_atan2(sqrt(" + oneMinusSquare(v) + "), " + v + ")" }),
			func(x, _ *Tensor) *Tensor {
				return ew("neg", invSqrt(ew("mul", ew("sub", ewConst(x, 1), x), ew("add", ewConst(x, 1), x))))
			}),
		unaryInverse("atan", "Inverse tangent in [-pi/2, pi/2]; integers give f32.", nil, Gen{},
			pointwise1(math.Atan, func(v string) string { return tinyIsItself("m_atan2("+v+", 1.0)", v) }),
			func(x, _ *Tensor) *Tensor { return ew("reciprocal", ew("add", ew("square", x), ewConst(x, 1))) }),
		unaryInverse("sinh", "Hyperbolic sine; integers give f32.", ewRange(-4, 4), Gen{},
			pointwise1(math.Sinh, func(v string) string { return "(0.5 * (m_expm1(" + v + ") - m_expm1(-" + v + ")))" }),
			func(x, _ *Tensor) *Tensor { return ew("cosh", x) }),
		unaryInverse("cosh", "Hyperbolic cosine; integers give f32.", ewRange(-4, 4), Gen{},
			pointwise1(math.Cosh, func(v string) string { return "(0.5 * (m_exp(" + v + ") + m_exp(-" + v + ")))" }),
			func(x, _ *Tensor) *Tensor { return ew("sinh", x) }),
		// asinh(|x|) = log1p(|x| + x²/(1 + sqrt(1 + x²))) keeps full accuracy
		// near 0; past 1e18, where x² overflows f32, it is log(2|x|).
		unaryInverse("asinh", "Inverse hyperbolic sine; integers give f32.", ewRange(-4, 4), Gen{},
			pointwise1(math.Asinh, func(v string) string {
				a := "abs(" + v + ")"
				r := "select(m_log1p(" + a + " + " + a + " * " + a + " / (1.0 + sqrt(1.0 + " + a + " * " + a + "))), m_log(" +
					a + ") + 0.6931471805599453, " + a + " > 1e18)"
				return withSignOf(r, v)
			}),
			func(x, _ *Tensor) *Tensor { return invSqrt(ew("add", ew("square", x), ewConst(x, 1))) }),
		// acosh(x) = log1p((x - 1) + sqrt((x - 1)(x + 1))), log(2x) past 1e18.
		unaryInverse("acosh", "Inverse hyperbolic cosine (NaN below 1); integers give f32.", ge1, GI(I32, 1, 10, 2, 3),
			pointwise1(math.Acosh, func(v string) string {
				// Below 1 NaN, also where (x - 1)(x + 1) overflows (x < -1.8e19).
				return "select(select(m_log1p((" + v + " - 1.0) + sqrt((" + v + " - 1.0) * (" + v + " + 1.0))), m_log(" + v +
					") + 0.6931471805599453, " + v + " > 1e18), f_nan(), " + v + " < 1.0)"
			}),
			func(x, _ *Tensor) *Tensor {
				return invSqrt(ew("mul", ew("sub", x, ewConst(x, 1)), ew("add", x, ewConst(x, 1))))
			}),
		// atanh(x) = log1p(2x / (1 - x)) / 2: ±1 give ±inf, |x| > 1 NaN.
		unaryInverse("atanh", "Inverse hyperbolic tangent (±inf at ±1, NaN beyond); integers give f32.", unit, GI(I32, -1, 2, 2, 3),
			pointwise1(math.Atanh, func(v string) string { return "(0.5 * m_log1p(2.0 * " + v + " / (1.0 - " + v + ")))" }),
			func(x, _ *Tensor) *Tensor {
				return ew("reciprocal", ew("mul", ew("sub", ewConst(x, 1), x), ew("add", ewConst(x, 1), x)))
			}),
		unaryInverse("log2", "Base-2 logarithm; integers give f32.", ewRange(0.5, 3), GI(I32, 1, 10, 2, 3),
			pointwise1(math.Log2, func(v string) string { return "(m_log(" + v + ") * 1.4426950408889634)" }),
			func(x, _ *Tensor) *Tensor { return ew("reciprocal", ew("mul", x, ewConst(x, math.Ln2))) }),
		unaryInverse("log10", "Base-10 logarithm; integers give f32.", ewRange(0.5, 3), GI(I32, 1, 10, 2, 3),
			pointwise1(numerics.Log10, func(v string) string { return "(m_log(" + v + ") * 0.4342944819032518)" }),
			func(x, _ *Tensor) *Tensor { return ew("reciprocal", ew("mul", x, ewConst(x, math.Ln10))) }),
		truncDef(),
	)
}

// truncDef is trunc: rounding toward zero, integers unchanged, a zero
// gradient almost everywhere (as floor's).
func truncDef() *OpDef {
	def := unaryDef(unarySpec{name: "trunc", doc: "Rounds toward zero; integers are returned unchanged.",
		smooth: ewAwayFromKinks,
		grad:   func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, ewConst(g, 0)) }})
	def.Pointwise = &Pointwise{
		F: func(Attrs) func(float64) float64 { return math.Trunc },
		Expr: func(args []string, ct string, _ Attrs, _ ScalarSlots) string {
			if ct != "f32" && ct != "f64" {
				return args[0] // integers are already whole
			}
			return "trunc(" + args[0] + ")"
		},
		Cost: 1,
	}
	return def
}
