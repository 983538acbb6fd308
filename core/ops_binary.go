package core

// Elementwise binary ops with NumPy broadcasting. Inputs are promoted to a
// common dtype before the kernel runs.

// binaryGrad builds a backward rule from the two partial derivatives, each
// written with registry ops; SumToShape undoes broadcasting afterwards.
func binaryGrad(da, db func(a, b, out, g *Tensor) *Tensor) func(*GradCtx) ([]*Tensor, error) {
	return func(c *GradCtx) ([]*Tensor, error) {
		a, b, out, g := c.Inputs[0], c.Inputs[1], c.Outputs[0], c.Grads[0]
		res := make([]*Tensor, 2)
		if c.Need[0] && da != nil {
			res[0] = SumToShape(da(a, b, out, g), a.shape)
		}
		if c.Need[1] && db != nil {
			res[1] = SumToShape(db(a, b, out, g), b.shape)
		}
		return res, nil
	}
}

func binarySamples(extra ...Sample) []Sample {
	base := []Sample{
		{Name: "same", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}},
		{Name: "broadcast", Inputs: []Gen{G(F32, 2, 3, 1), G(F32, 4)}},
		{Name: "scalar", Inputs: []Gen{G(F32, 2, 3), G(F32)}},
		{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}},
		{Name: "f64", Inputs: []Gen{G(F64, 5), G(F64, 5)}},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3)}},
	}
	return append(base, extra...)
}

func binaryDef(name, doc string, bw func(*GradCtx) ([]*Tensor, error), samples []Sample) *OpDef {
	return &OpDef{
		Name: name, Category: "binary", Doc: doc,
		Inputs:  []InputSpec{{Name: "a"}, {Name: "b"}},
		Promote: true, Infer: InferBroadcast, Backward: bw, Samples: samples,
	}
}

func init() {
	MustRegister(
		binaryDef("add", "a + b, elementwise with broadcasting.",
			binaryGrad(func(a, b, o, g *Tensor) *Tensor { return g }, func(a, b, o, g *Tensor) *Tensor { return g }),
			binarySamples(Sample{Name: "i32", Inputs: []Gen{GI(I32, -100, 100, 3, 2), GI(I32, -100, 100, 2)}},
				Sample{Name: "f16", Inputs: []Gen{G(F16, 6), G(F16, 6)}},
				Sample{Name: "bf16", Inputs: []Gen{G(BF16, 6), G(BF16, 6)}},
				Sample{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special"), G(F32, 12)}, NoGrad: true},
				Sample{Name: "mixed_dtypes", Inputs: []Gen{G(F32, 3), GI(I32, -3, 3, 3)}, NoGrad: true})),
		binaryDef("sub", "a - b, elementwise with broadcasting.",
			binaryGrad(func(a, b, o, g *Tensor) *Tensor { return g }, func(a, b, o, g *Tensor) *Tensor { return call1("neg", nil, g) }),
			binarySamples(Sample{Name: "i64", Inputs: []Gen{GI(I64, -100, 100, 4), GI(I64, -100, 100, 4)}})),
		binaryDef("mul", "a * b, elementwise with broadcasting.",
			binaryGrad(func(a, b, o, g *Tensor) *Tensor { return call1("mul", nil, g, b) },
				func(a, b, o, g *Tensor) *Tensor { return call1("mul", nil, g, a) }),
			binarySamples(Sample{Name: "i32", Inputs: []Gen{GI(I32, -100, 100, 5), GI(I32, -100, 100, 5)}},
				// The complex form (complex_math.go), and a real operand joining one.
				Sample{Name: "c64", Inputs: []Gen{G(C64, 3, 2), G(C64, 2)}},
				Sample{Name: "c128_real", Inputs: []Gen{G(C128, 4), G(F64, 4)}})),
		withInfer(binaryDef("div", "a / b, true division with broadcasting; integer inputs give f32.",
			binaryGrad(func(a, b, o, g *Tensor) *Tensor { return call1("div", nil, g, b) },
				func(a, b, o, g *Tensor) *Tensor {
					return call1("neg", nil, call1("div", nil, call1("mul", nil, g, o), b))
				}),
			[]Sample{
				{Name: "same", Inputs: []Gen{G(F32, 3, 4), GU(F32, 0.5, 2, 3, 4)}},
				{Name: "broadcast", Inputs: []Gen{G(F32, 2, 3, 1), GU(F32, -2, -0.5, 4)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5), GU(F64, 0.5, 2, 5)}},
				{Name: "by_zero", Inputs: []Gen{GV(F32, []float64{1, -1, 0}, 3), GV(F32, []float64{0}, 1)}, NoGrad: true},
				{Name: "ints", Inputs: []Gen{GI(I32, -9, 9, 4), GI(I32, 1, 5, 4)}},
				{Name: "c64", Inputs: []Gen{G(C64, 2, 3), G(C64, 2, 3)}},
			}), inferFloatResult),
	)
}

func withInfer(d *OpDef, f func([]Meta, Attrs) ([]Meta, error)) *OpDef { d.Infer = f; return d }

// inferFloatResult broadcasts and gives integer/bool inputs an f32 result
// (true division, transcendental functions).
func inferFloatResult(in []Meta, a Attrs) ([]Meta, error) {
	m, err := InferBroadcast(in, a)
	if err != nil {
		return nil, err
	}
	if !m[0].DType.IsFloat() {
		m[0].DType = F32
	}
	return m, nil
}
