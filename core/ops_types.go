package core

import "math"

func init() {
	nan, inf := math.NaN(), math.Inf(1)
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
			Name: "cast", Category: "types", Doc: "Convert to another dtype. Floats to integers truncate toward zero and saturate at the target's range, NaN giving 0 (PyTorch and NumPy leave NaN and out-of-range values undefined; see numerics.FloatToInt); integers to narrower integers wrap; anything to bool tests nonzero (NaN is true).",
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
				// The rule at the edges: NaN, infinities, values past the
				// range (saturate), fractions beside the ends (truncate).
				{Name: "f32_to_i32_special", Inputs: []Gen{GV(F32, []float64{nan, inf, -inf, 3e9, -3e9, 2147483520, -2147483648, 1.9, -1.9, 0}, 10)},
					Attrs: Attrs{"dtype": I32}, NoGrad: true},
				{Name: "f32_to_u8_special", Inputs: []Gen{GV(F32, []float64{nan, inf, -inf, 300, -5, 255.9, -0.9, 7.5}, 8)},
					Attrs: Attrs{"dtype": U8}, NoGrad: true},
				{Name: "f32_to_i8_special", Inputs: []Gen{GV(F32, []float64{200, -200, nan, -128.9, 127.9, -1.5}, 6)},
					Attrs: Attrs{"dtype": I8}, NoGrad: true},
				{Name: "f32_to_i16_special", Inputs: []Gen{GV(F32, []float64{40000, -40000, inf, nan, -32768.5, 32767.5}, 6)},
					Attrs: Attrs{"dtype": I16}, NoGrad: true},
				{Name: "f32_to_u32_special", Inputs: []Gen{GV(F32, []float64{5e9, -1, nan, inf, 4294967040, 1.5}, 6)},
					Attrs: Attrs{"dtype": U32}, NoGrad: true},
				// Within i32, which WebGPU holds i64 in; i64's own ends are
				// core's unit tests.
				{Name: "f32_to_i64_special", Inputs: []Gen{GV(F32, []float64{nan, -2147483648, 2147483520, -1.5, 1.5, 0}, 6)},
					Attrs: Attrs{"dtype": I64}, NoGrad: true},
				{Name: "f64_to_i32_special", Inputs: []Gen{GV(F64, []float64{nan, -inf, 2147483647.9, -2147483648.9, 1e300}, 5)},
					Attrs: Attrs{"dtype": I32}, NoGrad: true},
			},
		},
	)
}
