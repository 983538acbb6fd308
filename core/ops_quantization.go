package core

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/oprules"
)

// Affine quantisation to 8-bit integers, per tensor or per channel, with the
// arithmetic of torch.quantize_per_tensor / quantize_per_channel: the scale is
// used as f32 and values are multiplied by its f32 reciprocal before rounding
// half to even, so results match PyTorch bit for bit on f32 inputs.

func quantAttrs(extra ...AttrSpec) []AttrSpec {
	return append([]AttrSpec{
		{Name: "scale", Kind: AttrFloats, Required: true, Doc: "step between quantised values: one, or one per channel of axis"},
		{Name: "zero_point", Kind: AttrInts, Doc: "integer that represents 0: one, or one per channel; absent means 0"},
		{Name: "axis", Kind: AttrInt, Doc: "channel axis for per-channel parameters; absent means per tensor"},
	}, extra...)
}

func init() {
	MustRegister(
		&OpDef{
			Name: "quantize", Category: "quantization",
			Doc:    "clamp(round_half_even(x/scale) + zero_point) to i8 or u8, per tensor or per channel.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}},
			Attrs:  quantAttrs(AttrSpec{Name: "dtype", Kind: AttrDType, Default: I8, Doc: "quantised dtype: i8 or u8"}),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if _, err := oprules.ParseQuantParams(in[0].Shape, a.DType("dtype"), a); err != nil {
					return nil, err
				}
				return []Meta{{Shape: in[0].Shape.Clone(), DType: a.DType("dtype")}}, nil
			},
			Samples: []Sample{
				{Name: "per_tensor", Inputs: []Gen{GU(F32, -3, 3, 3, 4)}, Attrs: Attrs{"scale": []float64{0.05}, "zero_point": []int{3}}},
				{Name: "u8", Inputs: []Gen{GU(F32, -1, 5, 10)}, Attrs: Attrs{"scale": []float64{0.02}, "zero_point": []int{40}, "dtype": U8}},
				{Name: "saturate", Inputs: []Gen{GV(F32, []float64{-1e6, -200, 1e6, 3.5e38, math.Copysign(0, -1), 2.5, 3.5}, 7)},
					Attrs: Attrs{"scale": []float64{1}, "zero_point": []int{-1}}},
				{Name: "ties", Inputs: []Gen{GV(F32, []float64{0.25, 0.75, 1.25, -0.25, -0.75, 1.75}, 6)}, Attrs: Attrs{"scale": []float64{0.5}}},
				{Name: "per_channel", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"scale": []float64{0.01, 0.02, 0.05}, "zero_point": []int{0, -5, 7}, "axis": 1}},
				{Name: "per_channel_u8_last", Inputs: []Gen{G(F32, 5, 2)}, Attrs: Attrs{"scale": []float64{0.03, 0.1}, "zero_point": []int{128, 100}, "axis": -1, "dtype": U8}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided()}, Attrs: Attrs{"scale": []float64{0.04, 0.02, 0.01, 0.1}, "zero_point": []int{1, 2, 3, 4}, "axis": 0}},
				{Name: "f64_empty", Inputs: []Gen{G(F64, 0, 3)}, Attrs: Attrs{"scale": []float64{0.1}}},
			},
		},
		&OpDef{
			Name: "dequantize", Category: "quantization", Doc: "(q - zero_point) * scale as f32, per tensor or per channel.",
			Inputs: []InputSpec{{Name: "q", DTypes: []DType{I8, U8}}},
			Attrs:  quantAttrs(),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if _, err := oprules.ParseQuantParams(in[0].Shape, in[0].DType, a); err != nil {
					return nil, err
				}
				return []Meta{{Shape: in[0].Shape.Clone(), DType: F32}}, nil
			},
			Samples: []Sample{
				{Name: "per_tensor", Inputs: []Gen{GI(I8, -128, 128, 3, 4)}, Attrs: Attrs{"scale": []float64{0.05}, "zero_point": []int{3}}},
				{Name: "u8", Inputs: []Gen{GI(U8, 0, 256, 10)}, Attrs: Attrs{"scale": []float64{0.02}, "zero_point": []int{40}}},
				{Name: "per_channel", Inputs: []Gen{GI(I8, -128, 128, 2, 3, 2)}, Attrs: Attrs{"scale": []float64{0.01, 0.02, 0.3}, "zero_point": []int{0, -5, 7}, "axis": 1}},
				{Name: "strided_u8", Inputs: []Gen{GI(U8, 0, 256, 4, 3).AsStrided()}, Attrs: Attrs{"scale": []float64{0.5, 0.25, 0.125, 1}, "zero_point": []int{0, 10, 128, 255}, "axis": 0}},
				{Name: "no_zero_point", Inputs: []Gen{GI(I8, -128, 128, 5)}, Attrs: Attrs{"scale": []float64{0.1}}},
				{Name: "empty", Inputs: []Gen{GI(I8, -5, 5, 0)}, Attrs: Attrs{"scale": []float64{0.1}}},
			},
		},
		&OpDef{
			Name: "dequantize_int8x4", Category: "quantization",
			Doc: "Four i8 per u32 word (little-endian bytes) times a per-row f32 scale: packed (rows, words) and " +
				"scale (rows) give f32 (rows, 4*words). Int8 weights packed this way take a byte an element on " +
				"every backend (WebGPU holds an i8 tensor in 32-bit words).",
			Inputs: []InputSpec{{Name: "packed", DTypes: []DType{U32}}, {Name: "scale", DTypes: []DType{F32}}},
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				p, s := in[0].Shape, in[1].Shape
				if len(p) != 2 || len(s) != 1 || s[0] != p[0] {
					return nil, fmt.Errorf("packed %v and scale %v: want packed (rows, words) and scale (rows)", p, s)
				}
				return []Meta{{Shape: Shape{p[0], 4 * p[1]}, DType: F32}}, nil
			},
			// Byte c%4 of word c/4 of row r: the word shifted so that the
			// byte is on top, then arithmetically back down (which
			// sign-extends it), times the row's scale.
			GPUBody: &ElementBody{Body: func(t BodyTypes, _ Attrs, _ BodySlots) string {
				return `
	let r = i / odim(1u);
	let c = i % odim(1u);
	let word = x0u(r * dim0(1u) + c / 4u);
	let b = bitcast<i32>(word << (24u - 8u * (c % 4u))) >> 24u;
	return ` + t.Float + `(b) * x1(r);`
			}},
			Samples: []Sample{
				{Name: "rows", Inputs: []Gen{GI(U32, 0, math.MaxUint32, 3, 2), GU(F32, 0.01, 0.1, 3)}},
				{Name: "extremes", Inputs: []Gen{GV(U32, []float64{0x80ff017f, 0x7f7f8080, 0, 0xffffffff}, 2, 2), GV(F32, []float64{1, 0.5}, 2)}},
				{Name: "strided", Inputs: []Gen{GI(U32, 0, math.MaxUint32, 4, 3).AsStrided(), GU(F32, 0.5, 2, 4)}},
				{Name: "empty", Inputs: []Gen{GI(U32, 0, 9, 0, 5), G(F32, 0)}},
			},
		},
	)
}
