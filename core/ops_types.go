package core

func init() {
	MustRegister(
		&OpDef{
			Name: "contiguous", Category: "types", Doc: "Dense row-major copy of a (possibly strided) tensor.",
			Inputs: []InputSpec{{Name: "x"}}, Infer: InferSame,
			Backward: func(g *GradCtx) ([]*Tensor, error) { return []*Tensor{g.Grads[0]}, nil },
			Samples: []Sample{
				{Name: "strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}},
				{Name: "i32", Inputs: []Gen{GI(I32, -5, 5, 2, 3).AsStrided()}},
			},
		},
		&OpDef{
			Name: "cast", Category: "types", Doc: "Convert to another dtype (floats to ints truncate toward zero, like NumPy astype).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "dtype", Kind: AttrDType, Required: true, Doc: "target dtype"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				return []Meta{{Shape: in[0].Shape.Clone(), DType: a.DType("dtype")}}, nil
			},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				if !g.Outputs[0].dtype.IsFloat() {
					return []*Tensor{nil}, nil
				}
				return []*Tensor{g.Grads[0].Cast(g.Inputs[0].dtype)}, nil
			},
			Samples: []Sample{
				{Name: "f32_to_f64", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"dtype": F64}},
				{Name: "f32_to_f16", Inputs: []Gen{G(F32, 5)}, Attrs: Attrs{"dtype": F16}},
				{Name: "f32_to_bf16", Inputs: []Gen{G(F32, 5)}, Attrs: Attrs{"dtype": BF16}},
				{Name: "f32_to_i32", Inputs: []Gen{GU(F32, -50, 50, 7)}, Attrs: Attrs{"dtype": I32}, NoGrad: true},
				{Name: "i64_to_f32", Inputs: []Gen{GI(I64, -100, 100, 6)}, Attrs: Attrs{"dtype": F32}},
				{Name: "f32_to_bool", Inputs: []Gen{GV(F32, []float64{0, 1, -2, 0.5}, 4)}, Attrs: Attrs{"dtype": Bool}, NoGrad: true},
				{Name: "i32_to_u8", Inputs: []Gen{GI(I32, 0, 255, 6)}, Attrs: Attrs{"dtype": U8}},
			},
		},
	)
}
