package core

import (
	"fmt"
	"math"
)

// Whole-slice indexing (index_select, index_add, embedding), masks
// (masked_fill, masked_select), nonzero and one_hot. Index values are
// checked by the kernels: an index outside [0, size) is an error that names
// the index and the size, as in torch.

func init() {
	MustRegister(indexSelectDef(), indexAddDef(), embeddingDef(), oneHotDef(),
		maskedFillDef(), maskedSelectDef(), maskedSelectGradDef(), nonzeroDef())
}

// selectedShape is x's shape with the axis replaced by the index count; a
// 1-D or 0-d index is required.
func selectedShape(x, idx Shape, a Attrs) (int, Shape, error) {
	ax, err := indexedAxis(x, a)
	if err != nil {
		return 0, nil, err
	}
	if len(idx) > 1 {
		return 0, nil, fmt.Errorf("index must be 1-D, got shape %v", idx)
	}
	out := x.Clone()
	out[ax] = idx.Numel()
	return ax, out, nil
}

func indexSelectDef() *OpDef {
	return &OpDef{
		Name: "index_select", Category: "index", Doc: "Whole slices of x at the given positions along axis (torch.index_select).",
		Inputs: []InputSpec{{Name: "x"}, {Name: "index", DTypes: intIndex, NoGrad: true}},
		Attrs:  []AttrSpec{indexAxisAttr()},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			_, out, err := selectedShape(in[0].Shape, in[1].Shape, a)
			if err != nil {
				return nil, err
			}
			return []Meta{{Shape: out, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x, idx := g.Inputs[0], g.Inputs[1]
			ax, _ := indexedAxis(x.shape, g.Attrs)
			return []*Tensor{call1("index_add", Attrs{"axis": ax}, ZerosLike(x), idx.Reshape(Shape{idx.Numel()}), g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "rows_repeated", Inputs: []Gen{G(F32, 4, 3), GV(I64, []float64{3, 0, 3, 1}, 4)}},
			{Name: "cols", Inputs: []Gen{G(F32, 2, 5), GI(I32, 0, 5, 3)}, Attrs: Attrs{"axis": -1}},
			{Name: "scalar_index_3d", Inputs: []Gen{G(F32, 2, 3, 2), GV(I64, []float64{2})}, Attrs: Attrs{"axis": 1}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 3, 4).AsStrided(), GI(I64, 0, 3, 5)}},
			{Name: "empty_index", Inputs: []Gen{G(F32, 3, 2), GI(I64, 0, 3, 0)}},
			{Name: "bool", Inputs: []Gen{{Shape: Shape{3, 2}, DType: Bool, Kind: "bool"}, GI(U8, 0, 3, 4)}},
			{Name: "bf16", Inputs: []Gen{G(BF16, 4, 2), GI(I64, 0, 4, 3)}},
		},
	}
}

// inferIndexAdd checks that src is x with the axis sized to the index count
// and that alpha fits an integer x.
func inferIndexAdd(in []Meta, a Attrs) ([]Meta, error) {
	x, idx, src := in[0], in[1], in[2]
	ax, want, err := selectedShape(x.Shape, idx.Shape, a)
	if err != nil {
		return nil, err
	}
	if src.DType != x.DType {
		return nil, fmt.Errorf("src has dtype %s, x has %s: they must match", src.DType, x.DType)
	}
	if !src.Shape.Equal(want) {
		return nil, fmt.Errorf("src has shape %v, want %v (x %v with axis %d sized to the %d indices)", src.Shape, want, x.Shape, ax, idx.Shape.Numel())
	}
	if alpha := a.Float("alpha"); !x.DType.IsFloat() && alpha != math.Trunc(alpha) {
		return nil, fmt.Errorf("alpha %v must be an integer for %s tensors", alpha, x.DType)
	}
	return []Meta{{Shape: x.Shape.Clone(), DType: x.DType}}, nil
}

func indexAddDef() *OpDef {
	return &OpDef{
		Name: "index_add", Category: "index", Doc: "Copy of x with alpha*src[i] added to the slice index[i] along axis (torch.index_add).",
		Inputs: []InputSpec{{Name: "x", DTypes: numeric}, {Name: "index", DTypes: intIndex, NoGrad: true}, {Name: "src", DTypes: numeric}},
		Attrs: []AttrSpec{indexAxisAttr(),
			{Name: "alpha", Kind: AttrFloat, Default: 1.0, Doc: "scale of src"}},
		Infer: inferIndexAdd,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			idx, gr := g.Inputs[1], g.Grads[0]
			ax, _ := indexedAxis(gr.shape, g.Attrs)
			res := []*Tensor{gr, nil, nil}
			if g.Need[2] {
				res[2] = call1("index_select", Attrs{"axis": ax}, gr, idx)
				if alpha := g.Attrs.Float("alpha"); alpha != 1 {
					res[2] = call1("mul", nil, res[2], Scalar(alpha, gr.dtype, gr.Device()))
				}
			}
			return res, nil
		},
		TolScale: 2,
		Samples: []Sample{
			{Name: "rows_duplicates", Inputs: []Gen{G(F32, 3, 4), GV(I64, []float64{0, 2, 0}, 3), G(F32, 3, 4)}},
			{Name: "cols_alpha", Inputs: []Gen{G(F32, 2, 4), GI(I32, 0, 4, 5), G(F32, 2, 5)}, Attrs: Attrs{"axis": 1, "alpha": -0.5}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided(), GI(I64, 0, 4, 2), G(F64, 2, 3).AsStrided()}},
			{Name: "empty_index", Inputs: []Gen{G(F32, 3, 2), GI(I64, 0, 3, 0), G(F32, 0, 2)}},
			{Name: "i64_alpha", Inputs: []Gen{GI(I64, -50, 50, 3, 2), GI(I64, 0, 3, 4), GI(I64, -50, 50, 4, 2)}, Attrs: Attrs{"alpha": 3}},
			{Name: "f16", Inputs: []Gen{G(F16, 3), GI(I64, 0, 3, 3), G(F16, 3)}},
		},
	}
}

func embeddingDef() *OpDef {
	return &OpDef{
		Name: "embedding", Category: "index", Doc: "Rows of weight [num, dim] at indices of any shape; output indices.shape + [dim].",
		Inputs: []InputSpec{{Name: "weight"}, {Name: "indices", DTypes: intIndex, NoGrad: true}},
		Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
			w := in[0].Shape
			if len(w) != 2 {
				return nil, fmt.Errorf("weight must be 2-D [num, dim], got shape %v", w)
			}
			out := append(in[1].Shape.Clone(), w[1])
			return []Meta{{Shape: out, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			w, idx := g.Inputs[0], g.Inputs[1]
			rows := g.Grads[0].Reshape(Shape{idx.Numel(), w.shape[1]})
			return []*Tensor{call1("index_add", Attrs{"axis": 0}, ZerosLike(w), idx.Reshape(Shape{idx.Numel()}), rows), nil}, nil
		},
		TolScale: 2,
		Samples: []Sample{
			{Name: "batch", Inputs: []Gen{G(F32, 5, 3), GI(I64, 0, 5, 2, 4)}},
			{Name: "vector", Inputs: []Gen{G(F32, 4, 2), GV(I32, []float64{3, 3, 0}, 3)}},
			{Name: "scalar_index", Inputs: []Gen{G(F32, 3, 4), GV(I64, []float64{1})}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided(), GI(I64, 0, 4, 5)}},
			{Name: "empty", Inputs: []Gen{G(F32, 3, 2), GI(I64, 0, 3, 0, 2)}},
			{Name: "f16", Inputs: []Gen{G(F16, 6, 2), GI(U8, 0, 6, 3)}},
		},
	}
}

func oneHotDef() *OpDef {
	return &OpDef{
		Name: "one_hot", Category: "index", Doc: "i64 tensor indices.shape + [num_classes] with a 1 at each index (num_classes -1: max index + 1).",
		Inputs: []InputSpec{{Name: "indices", DTypes: intIndex}},
		Attrs:  []AttrSpec{{Name: "num_classes", Kind: AttrInt, Default: -1, Doc: "number of classes; -1 infers max+1"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			n := a.Int("num_classes")
			if n < -1 {
				return nil, fmt.Errorf("num_classes must be -1 or non-negative, got %d", n)
			}
			return []Meta{{Shape: append(in[0].Shape.Clone(), n), DType: I64}}, nil
		},
		Dynamic: true,
		Samples: []Sample{
			{Name: "inferred", Inputs: []Gen{GI(I64, 0, 5, 2, 3)}},
			{Name: "given", Inputs: []Gen{GI(I32, 0, 3, 4)}, Attrs: Attrs{"num_classes": 6}},
			{Name: "scalar", Inputs: []Gen{GV(I64, []float64{2})}, Attrs: Attrs{"num_classes": 3}},
			{Name: "empty_given", Inputs: []Gen{GI(I64, 0, 3, 0)}, Attrs: Attrs{"num_classes": 3}},
			{Name: "u8_strided", Inputs: []Gen{GI(U8, 0, 4, 3, 2).AsStrided()}},
		},
	}
}

func maskedFillDef() *OpDef {
	return &OpDef{
		Name: "masked_fill", Category: "index", Doc: "x with value where mask is true; mask and x broadcast together.",
		Inputs: []InputSpec{{Name: "x"}, {Name: "mask", DTypes: []DType{Bool}, NoGrad: true}},
		Attrs:  []AttrSpec{{Name: "value", Kind: AttrFloat, Required: true, Doc: "fill value (converted to x's dtype)"}},
		Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
			s, err := BroadcastShapes(in[0].Shape, in[1].Shape)
			if err != nil {
				return nil, err
			}
			return []Meta{{Shape: s, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			return []*Tensor{call1("masked_fill", Attrs{"value": 0.0}, g.Grads[0], g.Inputs[1]), nil}, nil
		},
		Samples: []Sample{
			{Name: "same", Inputs: []Gen{G(F32, 3, 4), {Shape: Shape{3, 4}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": -1.5}},
			{Name: "mask_broadcast", Inputs: []Gen{G(F32, 2, 3), {Shape: Shape{3}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": 0}},
			{Name: "x_broadcast", Inputs: []Gen{G(F32, 1, 3), {Shape: Shape{2, 3}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": 2}},
			{Name: "strided_f64_inf", Inputs: []Gen{G(F64, 4, 3).AsStrided(), {Shape: Shape{4, 3}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": math.Inf(-1)}, NoGrad: true},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 3), {Shape: Shape{3}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": 1}},
			{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 5), {Shape: Shape{5}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": 7}},
			{Name: "bool", Inputs: []Gen{{Shape: Shape{4}, DType: Bool, Kind: "bool"}, {Shape: Shape{4}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"value": 1}},
		},
	}
}

func maskedSelectDef() *OpDef {
	return &OpDef{
		Name: "masked_select", Category: "index", Doc: "1-D tensor of the elements of x where mask is true, in row-major order; x and mask broadcast.",
		Inputs: []InputSpec{{Name: "x"}, {Name: "mask", DTypes: []DType{Bool}, NoGrad: true}},
		Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
			if _, err := BroadcastShapes(in[0].Shape, in[1].Shape); err != nil {
				return nil, err
			}
			return []Meta{{Shape: Shape{-1}, DType: in[0].DType}}, nil
		},
		Dynamic: true,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x, mask := g.Inputs[0], g.Inputs[1]
			s, _ := BroadcastShapes(x.shape, mask.shape)
			return []*Tensor{call1("_masked_select_grad", Attrs{"shape": []int(s)}, g.Grads[0], mask), nil}, nil
		},
		Samples: []Sample{
			{Name: "same", Inputs: []Gen{G(F32, 3, 4), {Shape: Shape{3, 4}, DType: Bool, Kind: "bool"}}},
			{Name: "mask_broadcast", Inputs: []Gen{G(F32, 2, 3), {Shape: Shape{3}, DType: Bool, Kind: "bool"}}},
			{Name: "x_broadcast", Inputs: []Gen{G(F32, 3), {Shape: Shape{2, 3}, DType: Bool, Kind: "bool"}}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided(), {Shape: Shape{4, 3}, DType: Bool, Kind: "bool"}}},
			{Name: "none_selected", Inputs: []Gen{G(F32, 3), GV(Bool, []float64{0}, 3)}},
			{Name: "i64", Inputs: []Gen{GI(I64, -99, 99, 6), {Shape: Shape{6}, DType: Bool, Kind: "bool"}}},
		},
	}
}

func maskedSelectGradDef() *OpDef {
	return &OpDef{
		Name: "_masked_select_grad", Category: "index", Internal: true,
		Doc:    "Zeros of shape with the values of g written, in order, where the broadcast mask is true (the gradient of masked_select).",
		Inputs: []InputSpec{{Name: "g"}, {Name: "mask", DTypes: []DType{Bool}, NoGrad: true}},
		Attrs:  []AttrSpec{{Name: "shape", Kind: AttrInts, Required: true, Doc: "broadcast shape of x and mask"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			s := Shape(a.Ints("shape"))
			if err := s.Validate(); err != nil {
				return nil, err
			}
			if b, err := BroadcastShapes(s, in[1].Shape); err != nil || !b.Equal(s) {
				return nil, fmt.Errorf("mask %v does not broadcast to shape %v", in[1].Shape, s)
			}
			if len(in[0].Shape) != 1 {
				return nil, fmt.Errorf("g must be 1-D, got shape %v", in[0].Shape)
			}
			return []Meta{{Shape: s.Clone(), DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			return []*Tensor{call1("masked_select", nil, g.Grads[0], g.Inputs[1]), nil}, nil
		},
		Samples: []Sample{
			{Name: "broadcast", Inputs: []Gen{G(F32, 4), GV(Bool, []float64{1, 0, 1}, 3)}, Attrs: Attrs{"shape": []int{2, 3}}},
			{Name: "f64", Inputs: []Gen{G(F64, 2), GV(Bool, []float64{0, 1, 1, 0}, 4)}, Attrs: Attrs{"shape": []int{4}}},
		},
	}
}

func nonzeroDef() *OpDef {
	return &OpDef{
		Name: "nonzero", Category: "index", Doc: "i64 [n, rank] coordinates of the non-zero elements of x in row-major order (NaN counts as non-zero).",
		Inputs: []InputSpec{{Name: "x"}},
		Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
			return []Meta{{Shape: Shape{-1, len(in[0].Shape)}, DType: I64}}, nil
		},
		Dynamic: true,
		Samples: []Sample{
			{Name: "bool", Inputs: []Gen{{Shape: Shape{3, 4}, DType: Bool, Kind: "bool"}}},
			{Name: "f32_zeros", Inputs: []Gen{GV(F32, []float64{0, 1.5, 0, -2, 0, 0}, 2, 3)}},
			{Name: "i32_3d_strided", Inputs: []Gen{GI(I32, -1, 2, 2, 3, 2).AsStrided()}},
			{Name: "scalar", Inputs: []Gen{GV(F64, []float64{3})}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}},
			{Name: "special", Inputs: []Gen{G(F32, 8).WithKind("special")}},
		},
	}
}
