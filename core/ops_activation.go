package core

import (
	"fmt"
	"math"
)

// Activation functions. GELU's backward is a fused internal op: it runs on
// every transformer layer, and written with registry ops it would be a dozen
// kernels.

func geluApproximateAttr() AttrSpec {
	return AttrSpec{Name: "approximate", Kind: AttrString, Default: "none", Enum: []string{"none", "tanh"},
		Doc: "none: x·Φ(x) with the exact normal CDF; tanh: the tanh approximation"}
}

func leakyRelu(x, slope float64) float64 {
	if x > 0 {
		return x
	}
	return x * slope
}

func elu(x, alpha float64) float64 {
	if x > 0 {
		return x
	}
	return alpha * math.Expm1(x)
}

// softplus is log1p(exp(beta·x)) / beta, and x itself past the threshold,
// where exp would overflow and the curve is the line to f32 precision.
func softplus(x, beta, threshold float64) float64 {
	if x*beta > threshold {
		return x
	}
	return math.Log1p(math.Exp(x*beta)) / beta
}

func init() {
	MustRegister(
		unaryDef(unarySpec{name: "sigmoid", doc: "Logistic function 1 / (1 + exp(-x)); integers give f32.",
			category: "activation", result: unaryFloat,
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				return ew("mul", g, ew("mul", out, ew("sub", ewConst(out, 1), out)))
			}}),
		unaryDef(unarySpec{name: "relu", doc: "max(x, 0); NaN stays NaN; integers keep their dtype.",
			category: "activation", result: unaryKeep, dtypes: numeric, smooth: ewAwayFromKinks,
			// From the output, as torch's threshold_backward does: out > 0
			// exactly where x > 0 (NaN in neither), and a graph that no
			// longer needs x can fold relu into the op that made x.
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				return ew("where", ew("gt", out, ewConst(out, 0)), g, ewConst(g, 0))
			}}),
		unaryDef(unarySpec{name: "leaky_relu", doc: "x for x > 0, negative_slope * x otherwise.",
			category: "activation", result: unaryKeep, dtypes: floatsOnly, smooth: ewAwayFromKinks,
			attrs: []AttrSpec{{Name: "negative_slope", Kind: AttrFloat, Default: 0.01, Doc: "slope for x <= 0"}},
			extra: []Sample{{Name: "slope_0.2", Inputs: []Gen{ewAwayFromKinks(F32, 2, 5)}, Attrs: Attrs{"negative_slope": 0.2}}},
			pointwise: &Pointwise{
				F: func(a Attrs) func(float64) float64 {
					slope := a.Float("negative_slope")
					return func(x float64) float64 { return leakyRelu(x, slope) }
				},
				Expr: func(v []string, _ string, a Attrs, s ScalarSlots) string {
					s.SetF(0, a.Float("negative_slope"))
					return fmt.Sprintf("select(pf(0u) * %s, %s, %s > 0.0)", v[0], v[0], v[0])
				},
				Cost: 1,
			},
			grad: func(x, out, g *Tensor, a Attrs) *Tensor {
				slope := ew("mul", g, ewConst(g, a.Float("negative_slope")))
				return ew("where", ew("gt", x, ewConst(x, 0)), g, slope)
			}}),
		unaryDef(unarySpec{name: "elu", doc: "x for x > 0, alpha * (exp(x) - 1) otherwise.",
			category: "activation", result: unaryKeep, dtypes: floatsOnly,
			attrs: []AttrSpec{{Name: "alpha", Kind: AttrFloat, Default: 1.0, Doc: "scale of the negative part"}},
			extra: []Sample{{Name: "alpha_0.5", Inputs: []Gen{ewAwayFromKinks(F32, 3, 4)}, Attrs: Attrs{"alpha": 0.5}}},
			pointwise: &Pointwise{
				F: func(a Attrs) func(float64) float64 {
					alpha := a.Float("alpha")
					return func(x float64) float64 { return elu(x, alpha) }
				},
				// NaN takes the x branch: alpha·expm1(NaN) is NaN anyway, but
				// a driver may fold the select the other way.
				Expr: func(v []string, _ string, a Attrs, s ScalarSlots) string {
					s.SetF(0, a.Float("alpha"))
					return fmt.Sprintf("select(pf(0u) * m_expm1(%s), %s, %s > 0.0 || is_nan(%s))", v[0], v[0], v[0], v[0])
				},
			},
			// below 0 the derivative alpha*exp(x) is out + alpha
			grad: func(x, out, g *Tensor, a Attrs) *Tensor {
				neg := ew("mul", g, ew("add", out, ewConst(out, a.Float("alpha"))))
				return ew("where", ew("gt", x, ewConst(x, 0)), g, neg)
			}}),
		unaryDef(unarySpec{name: "gelu", doc: "Gaussian error linear unit x·Φ(x) (approximate=\"tanh\" for the tanh form).",
			category: "activation", result: unaryKeep, dtypes: floatsOnly,
			attrs: []AttrSpec{geluApproximateAttr()},
			extra: []Sample{
				{Name: "tanh", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"approximate": "tanh"}},
				{Name: "f64_size1", Inputs: []Gen{GU(F64, -4, 4, 1, 7)}, Attrs: Attrs{"approximate": "tanh"}},
			},
			grad: func(x, out, g *Tensor, a Attrs) *Tensor {
				return call1("_gelu_backward", Attrs{"approximate": a.String("approximate")}, g, x)
			}}),
		unaryDef(unarySpec{name: "silu", doc: "x * sigmoid(x) (swish).",
			category: "activation", result: unaryKeep, dtypes: floatsOnly,
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return siluGrad(x, g) }}),
		unaryDef(unarySpec{name: "softplus", doc: "log(1 + exp(beta*x)) / beta, and x itself where beta*x > threshold.",
			category: "activation", result: unaryKeep, dtypes: floatsOnly,
			attrs: []AttrSpec{
				{Name: "beta", Kind: AttrFloat, Default: 1.0, Doc: "sharpness"},
				{Name: "threshold", Kind: AttrFloat, Default: 20.0, Doc: "beta*x above which the op is linear"},
			},
			extra: []Sample{{Name: "beta2_threshold3", Inputs: []Gen{ewAwayFromKinks(F32, 3, 4)},
				Attrs: Attrs{"beta": 2.0, "threshold": 3.0}}},
			pointwise: &Pointwise{
				F: func(a Attrs) func(float64) float64 {
					beta, threshold := a.Float("beta"), a.Float("threshold")
					return func(x float64) float64 { return softplus(x, beta, threshold) }
				},
				Expr: func(v []string, _ string, a Attrs, s ScalarSlots) string {
					s.SetF(0, a.Float("beta"))
					s.SetF(1, a.Float("threshold"))
					return fmt.Sprintf("select(m_log1p(m_exp(%s * pf(0u))) / pf(0u), %s, %s * pf(0u) > pf(1u))", v[0], v[0], v[0])
				},
			},
			grad: func(x, out, g *Tensor, a Attrs) *Tensor {
				z := ew("mul", x, ewConst(x, a.Float("beta")))
				smooth := ew("mul", g, ew("sigmoid", z))
				return ew("where", ew("gt", z, ewConst(z, a.Float("threshold"))), g, smooth)
			}}),
		&OpDef{
			Name: "_gelu_backward", Category: "activation", Internal: true,
			Doc:    "Gradient of gelu: grad * d gelu(x)/dx, fused.",
			Inputs: []InputSpec{{Name: "grad", DTypes: floatsOnly}, {Name: "x", DTypes: floatsOnly}}, Outputs: []string{"dx"},
			Attrs: []AttrSpec{geluApproximateAttr()}, Promote: true,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if !in[0].Shape.Equal(in[1].Shape) {
					return nil, fmt.Errorf("grad shape %v differs from x shape %v", in[0].Shape, in[1].Shape)
				}
				return InferSame(in, a)
			},
			Samples: []Sample{
				{Name: "none", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}},
				{Name: "tanh", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}, Attrs: Attrs{"approximate": "tanh"}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}},
				{Name: "f64_wide", Inputs: []Gen{G(F64, 8), GU(F64, -6, 6, 8)}},
				{Name: "f16", Inputs: []Gen{G(F16, 6), G(F16, 6)}, Attrs: Attrs{"approximate": "tanh"}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 2), G(F32, 0, 2)}},
			},
		},
	)
}

// siluGrad is g times SiLU's derivative at x: d/dx x·s(x) = s·(1 + x·(1 - s)).
func siluGrad(x, g *Tensor) *Tensor {
	s := ew("sigmoid", x)
	inner := ew("add", ewConst(x, 1), ew("mul", x, ew("sub", ewConst(s, 1), s)))
	return ew("mul", g, ew("mul", s, inner))
}
