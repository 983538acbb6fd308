package core

// Logical ops: the connectives (any dtypes, nonzero and NaN count as true),
// logical_not and the tests of values (isnan, isinf). All give bool tensors
// and are not differentiable.

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
		ewConnectiveDef("logical_and", "Both a and b are nonzero."),
		ewConnectiveDef("logical_or", "a or b (or both) is nonzero."),
		ewConnectiveDef("logical_xor", "Exactly one of a and b is nonzero."),
		unaryDef(unarySpec{name: "logical_not", doc: "True where x is zero (NaN counts as nonzero).",
			category: "logical", result: unaryBool,
			extra: []Sample{{Name: "bool", Inputs: []Gen{ewBoolGen(2, 3)}}}}),
		unaryDef(unarySpec{name: "isnan", doc: "True where x is NaN (never for integers).",
			category: "logical", result: unaryBool,
			extra: []Sample{{Name: "special_f16", Inputs: []Gen{G(F16, 12).WithKind("special")}}}}),
		unaryDef(unarySpec{name: "isinf", doc: "True where x is +inf or -inf (never for integers).",
			category: "logical", result: unaryBool,
			extra: []Sample{{Name: "special_f64", Inputs: []Gen{G(F64, 12).WithKind("special")}}}}),
	)
}
