package core

// More elementwise binary ops with broadcasting and promotion (the arithmetic
// four live in ops_binary.go), and where, which selects between two tensors.

// ewDivisionSamples keep divisors away from zero except in the by_zero case;
// integer divisors are never zero (that is an error, as in PyTorch).
func ewDivisionSamples() []Sample {
	return []Sample{
		{Name: "mixed_signs", Inputs: []Gen{GU(F32, -10, 10, 3, 4), GV(F32, []float64{3, -2.5, 1.5, -0.7}, 4)}},
		{Name: "broadcast", Inputs: []Gen{GU(F32, -10, 10, 2, 3, 1), GU(F32, 0.5, 3, 4)}},
		{Name: "strided", Inputs: []Gen{GU(F32, -10, 10, 4, 3).AsStrided(), GU(F32, -3, -0.5, 4, 3)}},
		{Name: "f64", Inputs: []Gen{GU(F64, -10, 10, 5), GU(F64, -3, -0.5, 5)}},
		{Name: "ints", Inputs: []Gen{GI(I32, -20, 20, 3, 4), GV(I32, []float64{3, -3, 7, -1}, 4)}, NoGrad: true},
		{Name: "i64_u8", Inputs: []Gen{GI(I64, -50, 50, 6), GI(U8, 1, 9, 6)}, NoGrad: true},
		{Name: "by_zero", Inputs: []Gen{GV(F32, []float64{1, -1, 0}, 3), GV(F32, []float64{0}, 1)}, NoGrad: true},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3), GU(F32, 1, 2, 3)}},
	}
}

// ewExtremumGrad routes the gradient of maximum or minimum to the input that
// wins; aLoses and bLoses name the comparison of (a, b) under which a, resp.
// b, loses. Ties split the gradient evenly, as in PyTorch.
func ewExtremumGrad(aLoses, bLoses string) func(*GradCtx) ([]*Tensor, error) {
	share := func(a, b, g *Tensor, loses string) *Tensor {
		tieOrWin := ew("where", ew("eq", a, b), ew("mul", g, ewConst(g, 0.5)), g)
		return ewZeroWhere(ew(loses, a, b), tieOrWin)
	}
	return binaryGrad(
		func(a, b, _, g *Tensor) *Tensor { return share(a, b, g, aLoses) },
		func(a, b, _, g *Tensor) *Tensor { return share(a, b, g, bLoses) })
}

func ewExtremumSamples() []Sample {
	return []Sample{
		{Name: "same", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}},
		{Name: "broadcast", Inputs: []Gen{G(F32, 2, 3, 1), G(F32, 4)}},
		{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}},
		{Name: "f64_scalar", Inputs: []Gen{G(F64, 5), G(F64)}},
		{Name: "ints", Inputs: []Gen{GI(I32, -9, 9, 6), GI(I64, -9, 9, 6)}, NoGrad: true},
		{Name: "nan", Inputs: []Gen{G(F32, 12).WithKind("special"), G(F32, 12)}, NoGrad: true},
		{Name: "ties", Inputs: []Gen{GV(F32, []float64{1, 2, 3, 4}, 4), GV(F32, []float64{1, 0, 3, 5}, 4)}, NoGrad: true},
		{Name: "bool", Inputs: []Gen{ewBoolGen(6), ewBoolGen(6)}, NoGrad: true},
	}
}

// ewInferWhere broadcasts cond, a and b; the result has a and b's common dtype.
func ewInferWhere(in []Meta, _ Attrs) ([]Meta, error) {
	s, err := BroadcastShapes(in[0].Shape, in[1].Shape, in[2].Shape)
	if err != nil {
		return nil, err
	}
	d, err := Promote(in[1].DType, in[2].DType)
	return []Meta{{Shape: s, DType: d}}, err
}

func ewWhereGrad(c *GradCtx) ([]*Tensor, error) {
	cond, g := c.Inputs[0], c.Grads[0]
	res := make([]*Tensor, 3)
	zero := ewConst(g, 0)
	if c.Need[1] {
		res[1] = SumToShape(ew("where", cond, g, zero), c.Inputs[1].shape)
	}
	if c.Need[2] {
		res[2] = SumToShape(ew("where", cond, zero, g), c.Inputs[2].shape)
	}
	return res, nil
}

func init() {
	MustRegister(
		ewWithDTypes(binaryDef("floor_divide", "a / b rounded toward -inf (Python's //); integer division by zero is an error (as is 0 ** -n, see pow).",
			nil, ewDivisionSamples()), numeric),
		ewWithDTypes(binaryDef("remainder", "a - b * floor(a / b): the result has the sign of b (Python's %); an integer remainder by zero is an error, as integer division by zero is.",
			binaryGrad(func(a, b, o, g *Tensor) *Tensor { return g },
				func(a, b, o, g *Tensor) *Tensor { return ew("neg", ew("mul", g, ew("floor_divide", a, b))) }),
			ewDivisionSamples()), numeric),
		ewWithDTypes(binaryDef("pow", "a to the power b; integer powers are exact and wrap, a negative integer exponent gives 1 / a^-b truncated toward zero (0 unless |a| = 1), and 0 to a negative integer power is an integer division by zero, an error like x // 0.",
			binaryGrad(powGradBase, powGradExponent),
			[]Sample{
				{Name: "positive_base", Inputs: []Gen{GU(F32, 0.5, 2, 3, 4), G(F32, 3, 4)}},
				{Name: "broadcast", Inputs: []Gen{GU(F32, 0.5, 2, 2, 3, 1), GU(F32, -2, 2, 4)}},
				{Name: "strided", Inputs: []Gen{GU(F32, 0.5, 2, 4, 3).AsStrided(), GU(F32, -1, 1, 4, 3)}},
				{Name: "f64", Inputs: []Gen{GU(F64, 0.5, 2, 5), GU(F64, -2, 2, 5)}},
				{Name: "negative_base_int_exponent", Inputs: []Gen{GU(F32, -2, -0.5, 5), GV(F32, []float64{2, 3, -1, 0, 1}, 5)}, NoGrad: true},
				{Name: "zero_base", Inputs: []Gen{GV(F32, []float64{0, 0, 0, 2}, 4), GV(F32, []float64{2, 0, -1, 0}, 4)}, NoGrad: true},
				{Name: "ints", Inputs: []Gen{GI(I32, -4, 5, 2, 4), GI(I32, -2, 4, 4)}, NoGrad: true},
				{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special"), G(F32, 12)}, NoGrad: true},
			}), numeric),
		binaryDef("maximum", "Elementwise maximum; NaN wins.", ewExtremumGrad("lt", "gt"), ewExtremumSamples()),
		binaryDef("minimum", "Elementwise minimum; NaN wins.", ewExtremumGrad("gt", "lt"), ewExtremumSamples()),
		withInfer(binaryDef("atan2", "Angle of the point (b, a) in radians, in [-pi, pi]; integers give f32.",
			binaryGrad(func(a, b, o, g *Tensor) *Tensor { return ew("div", ew("mul", g, b), atan2Denominator(a, b)) },
				func(a, b, o, g *Tensor) *Tensor {
					return ew("neg", ew("div", ew("mul", g, a), atan2Denominator(a, b)))
				}),
			[]Sample{
				{Name: "same", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}},
				{Name: "broadcast", Inputs: []Gen{G(F32, 2, 3, 1), G(F32, 4)}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5), G(F64, 5)}},
				{Name: "ints", Inputs: []Gen{GI(I32, -3, 3, 6), GI(I32, -3, 3, 6)}, NoGrad: true},
				{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special"), G(F32, 12).WithKind("special")}, NoGrad: true},
				{Name: "f16", Inputs: []Gen{G(F16, 6), G(F16, 6)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3)}},
			}), inferFloatResult),
		&OpDef{
			Name: "where", Category: "binary", Outputs: []string{"out"},
			Doc:    "a where cond is true, b elsewhere; all three broadcast, a and b are promoted.",
			Inputs: []InputSpec{{Name: "cond", DTypes: []DType{Bool}, NoGrad: true}, {Name: "a"}, {Name: "b"}},
			Infer:  ewInferWhere, Backward: ewWhereGrad,
			Samples: []Sample{
				{Name: "same", Inputs: []Gen{ewBoolGen(3, 4), G(F32, 3, 4), G(F32, 3, 4)}},
				{Name: "broadcast", Inputs: []Gen{ewBoolGen(3, 1), G(F32, 4), G(F32)}},
				{Name: "strided", Inputs: []Gen{ewBoolGen(4, 3), G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}},
				{Name: "f64", Inputs: []Gen{ewBoolGen(5), G(F64, 5), G(F64, 1)}},
				{Name: "mixed_dtypes", Inputs: []Gen{ewBoolGen(2, 3), G(F32, 2, 3), GI(I32, -5, 5, 3)}},
				{Name: "ints", Inputs: []Gen{ewBoolGen(6), GI(I64, -9, 9, 6), GI(I32, -9, 9, 6)}, NoGrad: true},
				{Name: "f16_bf16", Inputs: []Gen{ewBoolGen(4), G(F16, 4), G(BF16, 4)}},
				{Name: "empty", Inputs: []Gen{ewBoolGen(0, 3), G(F32, 3), G(F32, 0, 1)}},
				{Name: "scalar_other", Inputs: []Gen{ewBoolGen(2, 5), G(F32, 2, 5), G(F32)}},
				{Name: "scalar_first", Inputs: []Gen{ewBoolGen(7), G(F32), G(F32, 7)}},
			},
		},
	)
}

func ewWithDTypes(d *OpDef, dtypes []DType) *OpDef {
	for i := range d.Inputs {
		d.Inputs[i].DTypes = dtypes
	}
	return d
}

// powGradBase is b·a^(b-1), zero where b = 0 so that 0^0 has no NaN slope.
func powGradBase(a, b, _, g *Tensor) *Tensor {
	slope := ew("mul", b, ew("pow", a, ew("sub", b, ewConst(b, 1))))
	return ewZeroWhere(ew("eq", b, ewConst(b, 0)), ew("mul", g, slope))
}

// powGradExponent is a^b·ln a, zero where a = 0 and b >= 0 (PyTorch's
// convention, where the limit of a^b·ln a is 0).
func powGradExponent(a, b, out, g *Tensor) *Tensor {
	zeroBase := ew("logical_and", ew("eq", a, ewConst(a, 0)), ew("ge", b, ewConst(b, 0)))
	return ewZeroWhere(zeroBase, ew("mul", g, ew("mul", out, ew("log", a))))
}

func atan2Denominator(a, b *Tensor) *Tensor { return ew("add", ew("square", a), ew("square", b)) }
