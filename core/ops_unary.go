package core

import "math"

// Elementwise unary ops. Every op is declared through a unarySpec so that its
// dtype rule, backward rule and samples fit in a few lines, and so that whole
// families behave alike (every transcendental op promotes integers the same
// way, every op gets the same layout and edge-value samples).

// unaryResult is the dtype rule of a unary op.
type unaryResult uint8

const (
	unaryKeep  unaryResult = iota // the input's dtype (abs, floor, clamp)
	unaryFloat                    // floats keep their dtype, integers and bool give f32, as in PyTorch
	unaryBool                     // bool (isnan, logical_not)
)

// unarySpec is the table row a unary op is built from.
type unarySpec struct {
	name, doc string
	category  string // "unary" when empty
	result    unaryResult
	dtypes    []DType // accepted input dtypes; nil accepts every dtype
	attrs     []AttrSpec
	check     func(in Meta, a Attrs) error // validation the attribute specs cannot express

	// smooth generates sample inputs where the op is differentiable and well
	// conditioned; nil means standard normal values.
	smooth func(d DType, shape ...int) Gen
	// ints is the integer sample for ops that accept integers; the zero value
	// means integers in [-5, 5).
	ints        Gen
	sampleAttrs Attrs    // attributes of the generated samples
	extra       []Sample // more samples; one named like a generated sample replaces it

	grad func(x, out, g *Tensor, a Attrs) *Tensor

	// pointwise is the op's arithmetic, from which every backend derives
	// its kernel (core.Pointwise); nil where the backends register kernels.
	pointwise *Pointwise
}

func unaryDef(s unarySpec) *OpDef {
	cat := s.category
	if cat == "" {
		cat = "unary"
	}
	def := &OpDef{
		Name: s.name, Category: cat, Doc: s.doc,
		Inputs: []InputSpec{{Name: "x", DTypes: s.dtypes}}, Outputs: []string{"y"},
		Attrs: s.attrs, Infer: s.infer, Samples: s.samples(), Pointwise: s.pointwise,
	}
	if s.check == nil { // s.infer is then one of the rules runKernel computes in place
		switch s.result {
		case unaryKeep:
			def.inline = inferSame
		case unaryBool:
			def.inline = inferSameBool
		case unaryFloat:
			def.inline = inferSameFloat
		}
	}
	if s.grad != nil {
		grad := s.grad
		def.Backward = func(c *GradCtx) ([]*Tensor, error) {
			return []*Tensor{grad(c.Inputs[0], c.Outputs[0], c.Grad(0), c.Attrs)}, nil
		}
	}
	return def
}

func (s unarySpec) infer(in []Meta, a Attrs) ([]Meta, error) {
	if s.check != nil {
		if err := s.check(in[0], a); err != nil {
			return nil, err
		}
	}
	d := in[0].DType
	switch {
	case s.result == unaryBool:
		d = Bool
	case s.result == unaryFloat && !d.IsFloat():
		d = F32
	}
	return []Meta{{Shape: in[0].Shape.Clone(), DType: d}}, nil
}

func (s unarySpec) accepts(d DType) bool {
	if s.dtypes == nil {
		return true
	}
	for _, x := range s.dtypes {
		if x == d {
			return true
		}
	}
	return false
}

// samples gives every unary op the same coverage: a typical case, a strided
// view, f64 with a size-1 dim, an empty tensor, edge values, f16, and an
// integer input where integers are accepted (bf16 otherwise). Ops with
// attributes swap some of these for attribute variants, so that each op keeps
// to eight samples.
func (s unarySpec) samples() []Sample {
	smooth := s.smooth
	if smooth == nil {
		smooth = G
	}
	out := []Sample{
		{Name: "typical", Inputs: []Gen{smooth(F32, 3, 4)}},
		{Name: "strided", Inputs: []Gen{smooth(F32, 4, 3).AsStrided()}},
		{Name: "f64_size1", Inputs: []Gen{smooth(F64, 1, 5)}},
		{Name: "empty", Inputs: []Gen{smooth(F32, 0, 3)}},
		{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special")}, NoGrad: true},
		{Name: "f16", Inputs: []Gen{smooth(F16, 6)}},
	}
	if s.accepts(I32) {
		ints := s.ints
		if ints.DType == Invalid {
			ints = GI(I32, -5, 5, 2, 3)
		}
		out = append(out, Sample{Name: "ints", Inputs: []Gen{ints}, NoGrad: true})
	} else {
		out = append(out, Sample{Name: "bf16", Inputs: []Gen{smooth(BF16, 6)}})
	}
	for i := range out {
		out[i].Attrs = s.sampleAttrs
	}
extras:
	for _, e := range s.extra {
		for i := range out {
			if out[i].Name == e.Name {
				out[i] = e
				continue extras
			}
		}
		out = append(out, e)
	}
	return out
}

// ewRange generates uniform sample inputs in [lo, hi).
func ewRange(lo, hi float64) func(DType, ...int) Gen {
	return func(d DType, shape ...int) Gen { return GU(d, lo, hi, shape...) }
}

// ewKinkFree are sample values of both signs that stay at least 0.1 away from
// every integer and half-integer, where abs, relu, floor, round and friends
// have kinks or jumps, so finite differences see a smooth function.
var ewKinkFree = []float64{-2.7, -1.35, -0.6, -0.2, 0.3, 0.8, 1.4, 2.2, -3.1, 0.35, -0.85, 1.85}

func ewAwayFromKinks(d DType, shape ...int) Gen { return GV(d, ewKinkFree, shape...) }

// ew calls a registry op without attributes, so backward rules read like
// the formulas they implement.
func ew(op string, in ...*Tensor) *Tensor { return call1(op, nil, in...) }

// ewConst is a rank-0 constant with t's dtype and device.
func ewConst(t *Tensor, v float64) *Tensor { return Scalar(v, t.dtype, t.Device()) }

// ewZeroWhere is g with zeros where mask is true.
func ewZeroWhere(mask, g *Tensor) *Tensor { return ew("where", mask, ewConst(g, 0), g) }

func ewZeroGrad(x, _, _ *Tensor, _ Attrs) *Tensor { return ZerosLike(x) }

func init() {
	MustRegister(
		unaryDef(unarySpec{name: "neg", doc: "-x; unsigned integers wrap around.",
			result: unaryKeep, dtypes: numeric,
			extra: []Sample{{Name: "u8_wraps", Inputs: []Gen{GI(U8, 0, 10, 5)}, NoGrad: true}},
			grad:  func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("neg", g) }}),
		unaryDef(unarySpec{name: "abs", doc: "|x|; the most negative integer stays as it is (two's complement).",
			result: unaryKeep, dtypes: numeric, smooth: ewAwayFromKinks,
			extra: []Sample{{Name: "i8_limits", Inputs: []Gen{GV(I8, []float64{-128, -3, 0, 5, 127}, 5)}, NoGrad: true},
				{Name: "c64", Inputs: []Gen{G(C64, 2, 3)}}},
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, ew("sign", x)) }}),
		unaryDef(unarySpec{name: "sign", doc: "-1, 0 or 1 by the sign of x (0 for NaN and -0, like PyTorch).",
			result: unaryKeep, smooth: ewAwayFromKinks,
			extra: []Sample{{Name: "bool", Inputs: []Gen{{Shape: Shape{5}, DType: Bool, Kind: "bool"}}, NoGrad: true}},
			grad:  ewZeroGrad}),
		unaryDef(unarySpec{name: "exp", doc: "e to the power x; integers give f32.",
			result: unaryFloat, smooth: ewRange(-3, 3),
			extra: []Sample{{Name: "c64", Inputs: []Gen{G(C64, 2, 3)}}},
			grad:  func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, out) }}),
		unaryDef(unarySpec{name: "expm1", doc: "exp(x) - 1, accurate near 0; integers give f32.",
			result: unaryFloat, smooth: ewRange(-2, 2),
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, ew("add", out, ewConst(out, 1))) }}),
		unaryDef(unarySpec{name: "log", doc: "Natural logarithm; integers give f32.",
			result: unaryFloat, smooth: ewRange(0.5, 3), ints: GI(I32, 1, 10, 2, 3),
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("div", g, x) }}),
		unaryDef(unarySpec{name: "log1p", doc: "log(1 + x), accurate near 0; integers give f32.",
			result: unaryFloat, smooth: ewRange(-0.5, 3), ints: GI(I32, 0, 10, 2, 3),
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("div", g, ew("add", x, ewConst(x, 1))) }}),
		unaryDef(unarySpec{name: "sqrt", doc: "Square root (NaN below 0); integers give f32.",
			result: unaryFloat, smooth: ewRange(0.5, 3), ints: GI(I32, 0, 10, 2, 3),
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("div", g, ew("mul", out, ewConst(out, 2))) }}),
		unaryDef(unarySpec{name: "rsqrt", doc: "1 / sqrt(x); integers give f32.",
			result: unaryFloat, smooth: ewRange(0.5, 3), ints: GI(I32, 1, 10, 2, 3),
			// d/dx x^-1/2 = -x^-3/2 / 2 = -out / (2x)
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				return ew("mul", g, ew("mul", ew("div", out, x), ewConst(x, -0.5)))
			}}),
		unaryDef(unarySpec{name: "square", doc: "x * x; integers wrap around on overflow.",
			result: unaryKeep, dtypes: numeric,
			extra: []Sample{{Name: "u8_wraps", Inputs: []Gen{GV(U8, []float64{20, 3, 0, 255}, 4)}, NoGrad: true}},
			grad:  func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, ew("mul", x, ewConst(x, 2))) }}),
		unaryDef(unarySpec{name: "reciprocal", doc: "1 / x; integers give f32.",
			result: unaryFloat, smooth: ewRange(0.5, 2), ints: GI(I32, 1, 10, 2, 3),
			extra: []Sample{{Name: "negative", Inputs: []Gen{GU(F32, -2, -0.5, 4)}}},
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				return ew("neg", ew("mul", g, ew("square", out)))
			}}),
		unaryDef(unarySpec{name: "sin", doc: "Sine (radians); integers give f32.",
			result: unaryFloat,
			grad:   func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, ew("cos", x)) }}),
		unaryDef(unarySpec{name: "cos", doc: "Cosine (radians); integers give f32.",
			result: unaryFloat,
			grad:   func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("neg", ew("mul", g, ew("sin", x))) }}),
		unaryDef(unarySpec{name: "tan", doc: "Tangent (radians); integers give f32.",
			result: unaryFloat, smooth: ewRange(-1.2, 1.2), ints: GI(I32, -1, 2, 2, 3),
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				return ew("mul", g, ew("add", ew("square", out), ewConst(out, 1)))
			}}),
		unaryDef(unarySpec{name: "tanh", doc: "Hyperbolic tangent; integers give f32.",
			result: unaryFloat,
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				return ew("mul", g, ew("sub", ewConst(out, 1), ew("square", out)))
			}}),
		unaryDef(unarySpec{name: "erf", doc: "Gauss error function; integers give f32.",
			result: unaryFloat,
			grad: func(x, out, g *Tensor, _ Attrs) *Tensor {
				gauss := ew("exp", ew("neg", ew("square", x)))
				return ew("mul", g, ew("mul", gauss, ewConst(x, 2/math.SqrtPi)))
			}}),
	)
}
