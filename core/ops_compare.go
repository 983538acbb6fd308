package core

// Comparisons (promote, then compare; NaN compares unequal to everything) and
// logical connectives (any dtypes, nonzero and NaN count as true). All give
// bool tensors and are not differentiable.

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

// ewConnectiveDef declares a connective. Its inputs are not promoted: truth does
// not depend on the dtype, and a cast would only cost a kernel.
func ewConnectiveDef(name, doc string) *OpDef {
	return &OpDef{
		Name: name, Category: "logical", Doc: doc,
		Inputs: []InputSpec{{Name: "a"}, {Name: "b"}}, Outputs: []string{"out"},
		Infer: InferBroadcastBool,
		Samples: []Sample{
			{Name: "bool", Inputs: []Gen{ewBoolGen(3, 4), ewBoolGen(3, 4)}},
			{Name: "broadcast", Inputs: []Gen{ewBoolGen(2, 3, 1), ewBoolGen(4)}},
			{Name: "strided", Inputs: []Gen{ewBoolGen(4, 3).AsStrided(), ewBoolGen(4, 3)}},
			{Name: "floats", Inputs: []Gen{GV(F32, []float64{0, 1.5, 0, -2, 0.25, 0}, 6), G(F32, 6).WithKind("special")}},
			{Name: "int_vs_f64", Inputs: []Gen{GI(I32, -1, 2, 2, 3), GV(F64, []float64{0, 0, 1e-300, -3}, 2, 3)}},
			{Name: "u8_vs_bool", Inputs: []Gen{GI(U8, 0, 3, 6), ewBoolGen(6)}},
			{Name: "empty", Inputs: []Gen{ewBoolGen(0, 2), G(F32, 2)}},
		},
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
		ewConnectiveDef("logical_and", "Both a and b are nonzero."),
		ewConnectiveDef("logical_or", "a or b (or both) is nonzero."),
		ewConnectiveDef("logical_xor", "Exactly one of a and b is nonzero."),
	)
}
