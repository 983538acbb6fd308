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

// nextafter is C's: x when x equals y (so y's zero when both are zeros),
// else one ulp of the dtype toward y (Go's functions return x for equal
// operands, which differs only for signed zeros).
func nextafter(x, y float64) float64 {
	if x == y {
		return y
	}
	return math.Nextafter(x, y)
}

func nextafter32(x, y float32) float32 {
	if x == y {
		return y
	}
	return math.Nextafter32(x, y)
}

// nextafterExpr steps x's bits by one toward y: down in magnitude when the
// signs differ or |y| < |x|, up otherwise; from a zero to the smallest
// subnormal with y's sign. Everything works on bit patterns, so a device
// that flushes subnormal arithmetic to zero still returns them.
func nextafterExpr(a, b, ct string) string {
	if ct == "f64" { // CUDA's double: its math library has it
		return "nextafter(" + a + ", " + b + ")"
	}
	ux, uy := "bitcast<u32>("+a+")", "bitcast<u32>("+b+")"
	ax, ay := "("+ux+" & 0x7fffffffu)", "("+uy+" & 0x7fffffffu)"
	down := fmt.Sprintf("((%s ^ %s) & 0x80000000u) != 0u || %s < %s", ux, uy, ay, ax)
	stepped := fmt.Sprintf("bitcast<f32>(select(%s + 1u, %s - 1u, %s))", ux, ux, down)
	fromZero := fmt.Sprintf("select(%s, bitcast<f32>((%s & 0x80000000u) | 1u), %s == 0u)", stepped, uy, ax)
	equal := fmt.Sprintf("select(%s, %s, %s == %s || (%s | %s) == 0u)", fromZero, b, ux, uy, ax, ay)
	return fmt.Sprintf("select(%s, %s + %s, is_nan(%s) || is_nan(%s))", equal, a, b, a, b)
}

// nextafterSamples cover the bit-pattern edges: signed zeros, subnormals,
// the largest finite values and the infinities.
func nextafterSamples() []Sample {
	negZero, big := math.Copysign(0, -1), float64(math.MaxFloat32)
	edges := []float64{0, negZero, 1e-45, -1e-45, big, math.Inf(1), math.Inf(-1), 1, 1, math.NaN(), 0, -2, 1.5e-38}
	toward := []float64{negZero, 0, 0, 1, math.Inf(1), 0, 0, 1, 2, 1, -1, -3, 0}
	return []Sample{
		{Name: "same", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}, NoGrad: true},
		{Name: "broadcast", Inputs: []Gen{G(F32, 2, 3, 1), G(F32, 4)}, NoGrad: true},
		{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}, NoGrad: true},
		{Name: "f64", Inputs: []Gen{G(F64, 5), G(F64, 5)}, NoGrad: true},
		{Name: "edges", Inputs: []Gen{GV(F32, edges, 13), GV(F32, toward, 13)}, NoGrad: true},
		{Name: "edges_f64", Inputs: []Gen{GV(F64, edges, 13), GV(F64, toward, 13)}, NoGrad: true},
		{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special"), G(F32, 12).WithKind("special")}, NoGrad: true},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3)}, NoGrad: true},
	}
}

func init() {
	MustRegister(
		&OpDef{
			Name: "nextafter", Category: "binary", Outputs: []string{"out"},
			Doc:     "The next value of the dtype (f32 or f64) after a toward b, with broadcasting; b when a equals b, NaN when either is NaN.",
			Inputs:  []InputSpec{{Name: "a", DTypes: []DType{F32, F64}, NoGrad: true}, {Name: "b", DTypes: []DType{F32, F64}, NoGrad: true}},
			Promote: true, Infer: InferBroadcast,
			Pointwise: &Pointwise{
				F2:      func(Attrs) func(a, b float64) float64 { return nextafter },
				Single2: func(Attrs) func(a, b float32) float32 { return nextafter32 },
				Expr: func(args []string, ct string, _ Attrs, _ ScalarSlots) string {
					return nextafterExpr(args[0], args[1], ct)
				},
				Cost: 2,
			},
			Samples: nextafterSamples(),
		},
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
