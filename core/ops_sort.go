package core

import "fmt"

// Sorting and selection. Orders are total and deterministic on every
// backend: NaN sorts above +inf (as in torch), equal elements keep their
// index order (a stable sort), topk with sorted=false returns the chosen
// elements in index order, and unique with sorted=false returns values in
// order of first occurrence.

func init() {
	MustRegister(sortDef(), argsortDef(), topkDef(), uniqueDef())
}

func sortAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "axis", Kind: AttrInt, Default: -1, Doc: "axis to sort along"},
		{Name: "descending", Kind: AttrBool, Default: false, Doc: "largest first"},
		{Name: "stable", Kind: AttrBool, Default: true, Doc: "keep equal elements in index order; the sort is always stable, so both values give that order"},
	}
}

// sortAxis normalises axis for x; a scalar sorts as one element.
func sortAxis(s Shape, a Attrs) (int, error) {
	if len(s) == 0 {
		_, err := NormAxis(a.Int("axis"), 1)
		return 0, err
	}
	return NormAxis(a.Int("axis"), len(s))
}

// scatterSortedGrad sends the gradient of selected values back to the
// positions they came from.
func scatterSortedGrad(g *GradCtx) ([]*Tensor, error) {
	x, idx, gr := g.Inputs[0], g.Outputs[1], g.Grads[0]
	if x.Rank() == 0 {
		return []*Tensor{gr.Reshape(x.shape)}, nil
	}
	ax, _ := sortAxis(x.shape, g.Attrs)
	return []*Tensor{call1("scatter_add", Attrs{"axis": ax}, ZerosLike(x), idx, gr)}, nil
}

func inferSorted(in []Meta, a Attrs) ([]Meta, error) {
	if _, err := sortAxis(in[0].Shape, a); err != nil {
		return nil, err
	}
	s := in[0].Shape
	return []Meta{{Shape: s.Clone(), DType: in[0].DType}, {Shape: s.Clone(), DType: I64}}, nil
}

func sortSamples() []Sample {
	return []Sample{
		{Name: "last", Inputs: []Gen{G(F32, 3, 5)}},
		{Name: "axis0_descending", Inputs: []Gen{G(F32, 4, 3)}, Attrs: Attrs{"axis": 0, "descending": true}},
		{Name: "ties_stable", Inputs: []Gen{GV(F32, []float64{2, 1, 2, 0, 1, 2, 1}, 7)}, NoGrad: true},
		{Name: "ties_descending", Inputs: []Gen{GV(F32, []float64{1, 3, 1, 3, 2}, 5)}, Attrs: Attrs{"descending": true}, NoGrad: true},
		{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided()}, Attrs: Attrs{"axis": 0}},
		{Name: "special", Inputs: []Gen{G(F32, 2, 6).WithKind("special")}, NoGrad: true},
		{Name: "i32_3d", Inputs: []Gen{GI(I32, -5, 5, 2, 3, 4)}, Attrs: Attrs{"axis": 1}},
		{Name: "empty", Inputs: []Gen{G(F32, 2, 0)}},
	}
}

func sortDef() *OpDef {
	return &OpDef{
		Name: "sort", Category: "sort", Doc: "Sorted values along axis and the i64 positions they came from (stable; NaN sorts last).",
		Inputs:   []InputSpec{{Name: "x", DTypes: AllDTypes}},
		Outputs:  []string{"values", "indices"},
		Attrs:    sortAttrs(),
		Infer:    inferSorted,
		Backward: scatterSortedGrad,
		Samples:  append(sortSamples(), Sample{Name: "f16_scalar", Inputs: []Gen{G(F16)}}),
	}
}

func argsortDef() *OpDef {
	return &OpDef{
		Name: "argsort", Category: "sort", Doc: "i64 positions that sort x along axis (stable; NaN sorts last).",
		Inputs: []InputSpec{{Name: "x", DTypes: AllDTypes}},
		Attrs:  sortAttrs(),
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			m, err := inferSorted(in, a)
			if err != nil {
				return nil, err
			}
			return m[1:], nil
		},
		Samples: append(sortSamples(), Sample{Name: "u8", Inputs: []Gen{GI(U8, 0, 255, 2, 5)}},
			Sample{Name: "bool", Inputs: []Gen{{Shape: Shape{7}, DType: Bool, Kind: "bool"}}}),
	}
}

func topkDef() *OpDef {
	return &OpDef{
		Name: "topk", Category: "sort", Doc: "The k largest (or smallest) values along axis and their i64 positions (NaN counts as largest).",
		Inputs:  []InputSpec{{Name: "x", DTypes: numeric}},
		Outputs: []string{"values", "indices"},
		Attrs: []AttrSpec{
			{Name: "k", Kind: AttrInt, Required: true, Doc: "number of elements to keep"},
			{Name: "axis", Kind: AttrInt, Default: -1, Doc: "axis to select along"},
			{Name: "largest", Kind: AttrBool, Default: true, Doc: "keep the largest (else the smallest)"},
			{Name: "sorted", Kind: AttrBool, Default: true, Doc: "return the values sorted (largest first when largest); false keeps index order"},
		},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			s := in[0].Shape
			ax, err := sortAxis(s, a)
			if err != nil {
				return nil, err
			}
			n, k := 1, a.Int("k")
			if len(s) > 0 {
				n = s[ax]
			}
			if k < 0 || k > n {
				return nil, fmt.Errorf("k %d out of range for axis %d of size %d", k, ax, n)
			}
			out := s.Clone()
			if len(s) > 0 {
				out[ax] = k
			}
			return []Meta{{Shape: out, DType: in[0].DType}, {Shape: out.Clone(), DType: I64}}, nil
		},
		Backward: scatterSortedGrad,
		Samples: []Sample{
			{Name: "last", Inputs: []Gen{G(F32, 3, 6)}, Attrs: Attrs{"k": 2}},
			{Name: "smallest_axis0", Inputs: []Gen{G(F32, 5, 3)}, Attrs: Attrs{"k": 3, "axis": 0, "largest": false}},
			{Name: "unsorted", Inputs: []Gen{G(F32, 2, 7)}, Attrs: Attrs{"k": 4, "sorted": false}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided()}, Attrs: Attrs{"k": 3, "axis": 0}},
			{Name: "k0", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"k": 0}},
			{Name: "special", Inputs: []Gen{G(F32, 10).WithKind("special")}, Attrs: Attrs{"k": 4}, NoGrad: true},
			{Name: "i64_all", Inputs: []Gen{GI(I64, -1000, 1000, 2, 5)}, Attrs: Attrs{"k": 5}},
			{Name: "bf16", Inputs: []Gen{G(BF16, 6)}, Attrs: Attrs{"k": 2}},
		},
	}
}

func uniqueDef() *OpDef {
	return &OpDef{
		Name: "unique", Category: "sort",
		Doc:     "Distinct values of the flattened x, then (when asked) the i64 inverse indices (x's shape) and i64 counts; NaNs are all distinct.",
		Inputs:  []InputSpec{{Name: "x", DTypes: AllDTypes}},
		Outputs: []string{"values", "inverse_then_counts..."},
		Attrs: []AttrSpec{
			{Name: "sorted", Kind: AttrBool, Default: true, Doc: "ascending values; false keeps the order of first occurrence"},
			{Name: "return_inverse", Kind: AttrBool, Default: false, Doc: "also return, for every element, the position of its value"},
			{Name: "return_counts", Kind: AttrBool, Default: false, Doc: "also return how often each value occurs"},
		},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			out := []Meta{{Shape: Shape{-1}, DType: in[0].DType}}
			if a.Bool("return_inverse") {
				out = append(out, Meta{Shape: in[0].Shape.Clone(), DType: I64})
			}
			if a.Bool("return_counts") {
				out = append(out, Meta{Shape: Shape{-1}, DType: I64})
			}
			return out, nil
		},
		Dynamic: true,
		Samples: []Sample{
			{Name: "ints", Inputs: []Gen{GI(I64, 0, 5, 12)}, Attrs: Attrs{"return_inverse": true, "return_counts": true}},
			{Name: "first_occurrence", Inputs: []Gen{GV(F32, []float64{3, 1, 3, -2, 1, 7}, 2, 3)}, Attrs: Attrs{"sorted": false, "return_inverse": true, "return_counts": true}},
			{Name: "values_only_f64", Inputs: []Gen{GV(F64, []float64{0.5, -1, 0.5, 2}, 4)}},
			{Name: "counts_strided", Inputs: []Gen{GI(I32, 0, 3, 3, 4).AsStrided()}, Attrs: Attrs{"return_counts": true}},
			{Name: "bool_inverse", Inputs: []Gen{{Shape: Shape{6}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"return_inverse": true}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"return_inverse": true, "return_counts": true}},
			{Name: "scalar_u8", Inputs: []Gen{GV(U8, []float64{7})}, Attrs: Attrs{"return_counts": true}},
		},
	}
}
