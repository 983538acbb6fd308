package core

// Comparisons (promote, then compare; NaN compares unequal to everything).
// All give bool tensors and are not differentiable.

func ewCompareSamples() []Sample {
	ties := []float64{0, 1, 2, -1, 1, 0, 2.5, -1, 3, 0}
	return []Sample{
		{Name: "ties", Inputs: []Gen{GV(F32, ties, 3, 4), GV(F32, []float64{0, 2, 2, -1, 0, 0, 2.5, 1}, 3, 4)}},
		{Name: "broadcast", Inputs: []Gen{G(F32, 2, 3, 1), G(F32, 4)}},
		{Name: "strided", Inputs: []Gen{GV(F32, ties, 4, 3).AsStrided(), GV(F32, ties[3:], 4, 3)}},
		{Name: "special_f64", Inputs: []Gen{G(F64, 12).WithKind("special"), G(F64, 12).WithKind("special")}},
		{Name: "ints", Inputs: []Gen{GI(I64, -3, 3, 6), GI(I32, -3, 3, 6)}},
		{Name: "int_vs_float", Inputs: []Gen{GI(I32, -2, 3, 5), GV(F32, []float64{0, 0.5, -1, 1.5, 2}, 5)}},
		{Name: "bool", Inputs: []Gen{ewBoolGen(2, 3), ewBoolGen(3)}},
		{Name: "empty_scalar", Inputs: []Gen{G(F32, 0, 3), G(F32)}},
	}
}

func ewCompareDef(name, doc string) *OpDef {
	return &OpDef{
		Name: name, Category: "compare", Doc: doc,
		Inputs: []InputSpec{{Name: "a"}, {Name: "b"}}, Outputs: []string{"out"},
		Promote: true, Infer: InferBroadcastBool, Samples: ewCompareSamples(),
	}
}

func init() {
	MustRegister(
		ewCompareDef("eq", "a == b elementwise, with broadcasting."),
		ewCompareDef("ne", "a != b elementwise, with broadcasting (true where either is NaN)."),
		ewCompareDef("lt", "a < b elementwise, with broadcasting."),
		ewCompareDef("le", "a <= b elementwise, with broadcasting."),
		ewCompareDef("gt", "a > b elementwise, with broadcasting."),
		ewCompareDef("ge", "a >= b elementwise, with broadcasting."),
	)
}
