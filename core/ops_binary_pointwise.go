package core

import (
	"fmt"
	"math"
)

// hypot, copysign and logaddexp: the array API standard's remaining
// two-input float math, each described by its arithmetic (Pointwise), from
// which every backend builds its kernel. The GPU expressions spell out the
// IEEE special cases (an infinity wins over NaN in hypot, equal infinities
// in logaddexp) that a naive formula turns into NaN.

// pointwise2 describes a two-input op by its float64 function and its GPU
// expression over a and b in the compute type ct.
func pointwise2(f func(a, b float64) float64, expr func(a, b, ct string) string) *Pointwise {
	return &Pointwise{
		F2:   func(Attrs) func(a, b float64) float64 { return f },
		Expr: func(args []string, ct string, _ Attrs, _ ScalarSlots) string { return expr(args[0], args[1], ct) },
	}
}

// floatBinary is a broadcasting two-input op whose integer inputs give f32.
func floatBinary(name, doc string, pw *Pointwise, da, db func(a, b, out, g *Tensor) *Tensor) *OpDef {
	def := withInfer(binaryDef(name, doc, binaryGrad(da, db), binarySamples(
		Sample{Name: "ints", Inputs: []Gen{GI(I32, -3, 3, 6), GI(I32, -3, 3, 6)}, NoGrad: true},
		Sample{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special"), G(F32, 12).WithKind("special")}, NoGrad: true},
		Sample{Name: "f16", Inputs: []Gen{G(F16, 6), G(F16, 6)}},
	)), inferFloatResult)
	def.Pointwise = pw
	return def
}

// hypotExpr is max·sqrt(1 + (min/max)²) over |a| and |b|, which neither
// overflows nor underflows where a² + b² would; 0 when both are 0, NaN
// when either is NaN unless the other is infinite, then +inf.
func hypotExpr(a, b, _ string) string {
	hi := fmt.Sprintf("max(abs(%s), abs(%s))", a, b)
	r := fmt.Sprintf("(min(abs(%s), abs(%s)) / %s)", a, b, hi)
	scaled := fmt.Sprintf("select(%s * sqrt(1.0 + %s * %s), %s, %s == 0.0)", hi, r, r, hi, hi)
	finite := fmt.Sprintf("select(%s, %s + %s, is_nan(%s) || is_nan(%s))", scaled, a, b, a, b)
	return fmt.Sprintf("select(%s, select(abs(%s), abs(%s), is_inf(%s)), is_inf(%s) || is_inf(%s))", finite, b, a, a, a, b)
}

// copysignExpr moves b's sign bit (of -0 and NaN too) onto |a|.
func copysignExpr(a, b, ct string) string {
	if ct == "f64" { // CUDA's double: its math library has it
		return "copysign(" + a + ", " + b + ")"
	}
	return fmt.Sprintf("bitcast<f32>((bitcast<u32>(%s) & 0x7fffffffu) | (bitcast<u32>(%s) & 0x80000000u))", a, b)
}

// logaddexpExpr is max + log1p(exp(-|a - b|)); equal infinities give
// themselves (the difference would be NaN), NaN gives NaN.
func logaddexpExpr(a, b, _ string) string {
	hi := fmt.Sprintf("max(%s, %s)", a, b)
	v := fmt.Sprintf("select(%s + m_log1p(m_exp(-abs(%s - %s))), %s, %s == %s && is_inf(%s))", hi, a, b, hi, a, b, a)
	return fmt.Sprintf("select(%s, %s + %s, is_nan(%s) || is_nan(%s))", v, a, b, a, b)
}

func logaddexp(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	hi := math.Max(a, b)
	if math.IsInf(hi, 0) && a == b {
		return hi
	}
	return hi + math.Log1p(math.Exp(-math.Abs(a-b)))
}

func init() {
	MustRegister(
		floatBinary("hypot", "sqrt(a² + b²) without overflow or underflow, elementwise with broadcasting; integers give f32.",
			pointwise2(math.Hypot, hypotExpr),
			func(a, b, out, g *Tensor) *Tensor { return ew("div", ew("mul", g, a), out) },
			func(a, b, out, g *Tensor) *Tensor { return ew("div", ew("mul", g, b), out) }),
		floatBinary("copysign", "|a| with the sign (bit) of b, -0 and NaN included, with broadcasting; integers give f32.",
			pointwise2(math.Copysign, copysignExpr),
			// d|a|·s/da is s·sign(a) = out / a, and 0 at a = 0 (PyTorch's rule)
			func(a, b, out, g *Tensor) *Tensor {
				return ewZeroWhere(ew("eq", a, ewConst(a, 0)), ew("mul", g, ew("div", out, a)))
			},
			func(a, b, out, g *Tensor) *Tensor { return ew("mul", g, ewConst(g, 0)) }),
		floatBinary("logaddexp", "log(exp(a) + exp(b)) without overflow, with broadcasting; integers give f32.",
			pointwise2(logaddexp, logaddexpExpr),
			func(a, b, out, g *Tensor) *Tensor { return ew("mul", g, ew("sigmoid", ew("sub", a, b))) },
			func(a, b, out, g *Tensor) *Tensor { return ew("mul", g, ew("sigmoid", ew("sub", b, a))) }),
	)
}
