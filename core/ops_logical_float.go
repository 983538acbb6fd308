package core

// isfinite and signbit, the array API standard's remaining tests of float
// values, defined by other ops (Compose): every backend runs those, so
// neither needs a kernel of its own.

// composedTest is a bool-valued test of x, composed of other ops.
func composedTest(name, doc string, test func(x *Tensor) *Tensor) *OpDef {
	def := unaryDef(unarySpec{name: name, doc: doc, category: "logical", result: unaryBool,
		extra: []Sample{{Name: "special_f64", Inputs: []Gen{G(F64, 12).WithKind("special")}}}})
	def.Inputs[0].NoGrad = true // a bool result has no gradient
	def.Compose = func(in []*Tensor, _ Attrs) ([]*Tensor, error) {
		out := test(in[0])
		return []*Tensor{out}, out.Err()
	}
	return def
}

func init() {
	MustRegister(
		composedTest("isfinite", "True where x is neither NaN nor ±inf (always for integers).",
			func(x *Tensor) *Tensor { return ew("logical_not", ew("logical_or", ew("isnan", x), ew("isinf", x))) }),
		// copysign(1, x) reads the sign bit, so -0 and a NaN with its sign
		// bit set count as negative, as in NumPy and PyTorch.
		composedTest("signbit", "True where the sign bit of x is set: negative values, -0 and negative NaNs.",
			func(x *Tensor) *Tensor { return ew("lt", ew("copysign", ewConst(x, 1), x), ewConst(x, 0)) }),
	)
}
