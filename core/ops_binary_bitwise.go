package core

// The array API standard's bitwise ops on integers (and, for and/or/xor,
// bools). They have kernels of their own, not a Pointwise description:
// Pointwise computes in float64, which cannot hold every int64, and the
// GPU expressions (backends/lower) need the integer compute types. Shift
// counts outside [0, bits) follow PyTorch: a left shift gives 0, a right
// shift fills with the sign bit.

// bitwiseLogical and bitwiseInts are the dtypes the two families take.
var (
	bitwiseLogical = []DType{I64, I32, U32, I16, I8, U8, U16, U64, Bool}
	bitwiseInts    = []DType{I64, I32, U32, I16, I8, U8, U16, U64}
)

// bitwiseSamples are integer samples of every width; shifts keep their
// counts below the narrowest operand's width in all but "wide_counts".
func bitwiseSamples(shift bool) []Sample {
	ss := []Sample{
		{Name: "i32", Inputs: []Gen{GI(I32, -1000, 1000, 3, 4), GI(I32, 0, 12, 3, 4)}},
		{Name: "broadcast", Inputs: []Gen{GI(I64, -500, 500, 2, 3, 1), GI(I64, 0, 9, 4)}},
		{Name: "scalar", Inputs: []Gen{GI(I32, -50, 50, 2, 3), GV(I32, []float64{3})}},
		{Name: "strided", Inputs: []Gen{GI(I32, -99, 99, 4, 3).AsStrided(), GI(I32, 0, 7, 4, 3)}},
		{Name: "u8", Inputs: []Gen{GI(U8, 0, 256, 8), GI(U8, 0, 8, 8)}},
		{Name: "i8_i16", Inputs: []Gen{GI(I8, -128, 128, 6), GI(I16, 0, 7, 6)}},
		{Name: "u32", Inputs: []Gen{GV(U32, []float64{0, 1, 4294967295, 2147483648, 65535, 12345}, 6), GI(U32, 0, 16, 6)}},
		{Name: "empty", Inputs: []Gen{GI(I32, 0, 5, 0, 3), GI(I32, 0, 5, 3)}},
	}
	if shift {
		return append(ss, Sample{Name: "wide_counts",
			Inputs: []Gen{GV(I32, []float64{1, -1, 7, -8, 1 << 20, -3}, 6), GV(I32, []float64{31, 31, 32, 40, 11, 63}, 6)}})
	}
	return append(ss,
		Sample{Name: "bool", Inputs: []Gen{ewBoolGen(2, 5), ewBoolGen(5)}},
		Sample{Name: "negative", Inputs: []Gen{GI(I64, -1<<20, 1<<20, 7), GI(I64, -1<<20, 0, 7)}})
}

// bitwiseDef is one binary bitwise op: its operands are promoted to one
// integer (or bool) dtype, the result has it, and there is no gradient.
func bitwiseDef(name, doc string, dtypes []DType) *OpDef {
	def := binaryDef(name, doc, nil, bitwiseSamples(len(dtypes) == len(bitwiseInts)))
	def.Inputs = []InputSpec{{Name: "a", DTypes: dtypes, NoGrad: true}, {Name: "b", DTypes: dtypes, NoGrad: true}}
	for i := range def.Samples {
		def.Samples[i].NoGrad = true
	}
	return def
}

// bitwiseInvert is ~x: logical not for bools, x ^ all-ones for integers
// (one op, bitwise_xor, on every backend; an unsigned dtype's all-ones is
// its maximum, a signed one's is -1).
func bitwiseInvert(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	x := in[0]
	var out *Tensor
	switch d := x.dtype; {
	case d == Bool:
		out = ew("logical_not", x)
	case d.IsSigned():
		out = ew("bitwise_xor", x, ewConst(x, -1))
	default:
		out = ew("bitwise_xor", x, ewConst(x, float64(uint64(1)<<(8*d.Size())-1)))
	}
	return []*Tensor{out}, out.Err()
}

func init() {
	MustRegister(
		bitwiseDef("bitwise_and", "a & b on integers and bools, with broadcasting.", bitwiseLogical),
		bitwiseDef("bitwise_or", "a | b on integers and bools, with broadcasting.", bitwiseLogical),
		bitwiseDef("bitwise_xor", "a ^ b on integers and bools, with broadcasting.", bitwiseLogical),
		bitwiseDef("bitwise_left_shift", "a << b on integers, wrapping like the dtype; a count outside [0, bits) gives 0.", bitwiseInts),
		bitwiseDef("bitwise_right_shift", "a >> b on integers, filling with the sign bit; a count outside [0, bits) shifts every bit out.", bitwiseInts),
		&OpDef{
			Name: "bitwise_invert", Category: "binary", Outputs: []string{"y"},
			Doc:     "~x: every bit flipped on integers, logical not on bools.",
			Inputs:  []InputSpec{{Name: "x", DTypes: bitwiseLogical, NoGrad: true}},
			Infer:   InferSame,
			Compose: bitwiseInvert,
			Samples: []Sample{
				{Name: "i32", Inputs: []Gen{GI(I32, -1000, 1000, 3, 4)}, NoGrad: true},
				{Name: "i64", Inputs: []Gen{GI(I64, -1<<20, 1<<20, 5)}, NoGrad: true},
				{Name: "u8", Inputs: []Gen{GI(U8, 0, 256, 6)}, NoGrad: true},
				{Name: "u32", Inputs: []Gen{GV(U32, []float64{0, 1, 4294967295, 2147483648}, 4)}, NoGrad: true},
				{Name: "i16", Inputs: []Gen{GI(I16, -300, 300, 6)}, NoGrad: true},
				{Name: "bool", Inputs: []Gen{ewBoolGen(2, 3)}, NoGrad: true},
				{Name: "strided", Inputs: []Gen{GI(I32, -9, 9, 4, 3).AsStrided()}, NoGrad: true},
			},
		},
	)
}
