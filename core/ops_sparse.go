package core

import "fmt"

// Segment reductions (the message-passing primitives of graph learning) and
// products with a CSR sparse matrix. Index inputs are validated against the
// shapes here; their values (range, CSR structure) are read by kernels and
// checked by kernelkit.CheckSegmentIDs and CheckCSR, which every backend applies so
// that every device fails a bad index with the same message.

var segmentIDTypes = []DType{I64, I32}

func segmentAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "num_segments", Kind: AttrInt, Required: true, Doc: "number of output segments; ids must lie in [0, num_segments)"},
		{Name: "sorted", Kind: AttrBool, Default: false, Doc: "promise that segment_ids are non-decreasing (checked; enables a parallel path)"},
	}
}

// inferSegment gives data's shape with the first dim replaced by num_segments.
func inferSegment(in []Meta, a Attrs) ([]Meta, error) {
	data, ids := in[0], in[1]
	if len(data.Shape) == 0 {
		return nil, fmt.Errorf("data must have at least one dim, got a scalar")
	}
	if len(ids.Shape) != 1 || ids.Shape[0] != data.Shape[0] {
		return nil, fmt.Errorf("segment_ids must have shape [%d] (one id per row of data %v), got %v", data.Shape[0], data.Shape, ids.Shape)
	}
	s := a.Int("num_segments")
	if s < 0 {
		return nil, fmt.Errorf("num_segments must be non-negative, got %d", s)
	}
	out := append(Shape{s}, data.Shape[1:]...)
	return []Meta{{Shape: out, DType: data.DType}}, out.Validate()
}

func segmentInputs(dtypes []DType) []InputSpec {
	return []InputSpec{{Name: "data", DTypes: dtypes}, {Name: "segment_ids", DTypes: segmentIDTypes, NoGrad: true}}
}

func segmentSamples(extra ...Sample) []Sample {
	return append([]Sample{
		{Name: "unsorted", Inputs: []Gen{G(F32, 7, 3), GI(I64, 0, 4, 7)}, Attrs: Attrs{"num_segments": 5}},
		{Name: "sorted", Inputs: []Gen{G(F32, 6, 2), GV(I64, []float64{0, 0, 1, 1, 1, 3}, 6)}, Attrs: Attrs{"num_segments": 4, "sorted": true}},
		{Name: "vector_i32_ids", Inputs: []Gen{G(F32, 8), GI(I32, 0, 3, 8)}, Attrs: Attrs{"num_segments": 3}},
		{Name: "strided", Inputs: []Gen{G(F32, 5, 4).AsStrided(), GI(I64, 0, 2, 5)}, Attrs: Attrs{"num_segments": 2}},
		{Name: "f64_3d", Inputs: []Gen{G(F64, 4, 2, 3), GI(I64, 0, 3, 4)}, Attrs: Attrs{"num_segments": 3}},
		{Name: "size1", Inputs: []Gen{G(F32, 1, 1), GV(I64, []float64{2}, 1)}, Attrs: Attrs{"num_segments": 3}},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3), GI(I64, 0, 2, 0)}, Attrs: Attrs{"num_segments": 2}},
	}, extra...)
}

// segmentGather picks row segment_ids[i] of x for every i: the gradient of
// segment_sum, and the op whose gradient is segment_sum.
func segmentGather(x, ids *Tensor) *Tensor { return call1("_segment_gather", nil, x, ids) }

func segmentSum(x, ids *Tensor, segments int) *Tensor {
	return call1("segment_sum", Attrs{"num_segments": segments}, x, ids)
}

// segmentRowsView reshapes a per-row vector [N] to [N, 1, ...] so it
// broadcasts against a tensor of rank r.
func segmentRowsView(v *Tensor, r int) *Tensor {
	shape := make(Shape, r)
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = v.Numel()
	return v.Reshape(shape)
}

func segmentMeanGrad(g *GradCtx) ([]*Tensor, error) {
	data, ids, grad := g.Inputs[0], g.Inputs[1], g.Grad(0)
	ones := call1("ones_like", Attrs{"dtype": data.dtype}, ids)
	counts := segmentSum(ones, ids, g.Attrs.Int("num_segments"))
	perRow := segmentRowsView(segmentGather(counts, ids), data.Rank())
	return []*Tensor{call1("div", nil, segmentGather(grad, ids), perRow), nil}, nil
}

// csrRowsInfer checks the shapes of a CSR pattern and returns its row count.
func csrRowsInfer(indptr, indices Meta) (int, error) {
	if len(indptr.Shape) != 1 || indptr.Shape[0] < 1 {
		return 0, fmt.Errorf("indptr must be 1-D with rows+1 >= 1 entries, got shape %v", indptr.Shape)
	}
	if len(indices.Shape) != 1 {
		return 0, fmt.Errorf("indices must be 1-D, got shape %v", indices.Shape)
	}
	return indptr.Shape[0] - 1, nil
}

func csrSameDType(a, b Meta, what string) error {
	if a.DType != b.DType {
		return fmt.Errorf("%s have different dtypes: %s and %s", what, a.DType, b.DType)
	}
	return nil
}

func inferSpmm(in []Meta, _ Attrs) ([]Meta, error) {
	rows, err := csrRowsInfer(in[0], in[1])
	if err != nil {
		return nil, err
	}
	values, dense := in[2], in[3]
	if len(values.Shape) != 1 || values.Shape[0] != in[1].Shape[0] {
		return nil, fmt.Errorf("values must have shape [%d] like indices, got %v", in[1].Shape[0], values.Shape)
	}
	if len(dense.Shape) != 2 {
		return nil, fmt.Errorf("dense must be 2-D [cols, n], got shape %v", dense.Shape)
	}
	if err := csrSameDType(values, dense, "values and dense"); err != nil {
		return nil, err
	}
	return []Meta{{Shape: Shape{rows, dense.Shape[1]}, DType: dense.DType}}, nil
}

func inferSpmmTransposed(in []Meta, a Attrs) ([]Meta, error) {
	m, err := inferSpmm(in, a)
	if err != nil {
		return nil, err
	}
	if in[3].Shape[0] != m[0].Shape[0] {
		return nil, fmt.Errorf("dense has %d rows, the pattern has %d", in[3].Shape[0], m[0].Shape[0])
	}
	cols := a.Int("cols")
	if cols < 0 {
		return nil, fmt.Errorf("cols must be non-negative, got %d", cols)
	}
	m[0].Shape[0] = cols
	return m, nil
}

func inferSddmm(in []Meta, _ Attrs) ([]Meta, error) {
	rows, err := csrRowsInfer(in[0], in[1])
	if err != nil {
		return nil, err
	}
	a, b := in[2], in[3]
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return nil, fmt.Errorf("a and b must be 2-D, got shapes %v and %v", a.Shape, b.Shape)
	}
	if a.Shape[0] != rows {
		return nil, fmt.Errorf("a has %d rows, indptr describes %d", a.Shape[0], rows)
	}
	if a.Shape[1] != b.Shape[0] {
		return nil, fmt.Errorf("inner dims differ: %v x %v", a.Shape, b.Shape)
	}
	if err := csrSameDType(a, b, "a and b"); err != nil {
		return nil, err
	}
	return []Meta{{Shape: Shape{in[1].Shape[0]}, DType: a.DType}}, nil
}

func csrInputs(names ...string) []InputSpec {
	ins := []InputSpec{{Name: "indptr", DTypes: segmentIDTypes, NoGrad: true}, {Name: "indices", DTypes: segmentIDTypes, NoGrad: true}}
	for _, n := range names {
		ins = append(ins, InputSpec{Name: n, DTypes: floatsOnly})
	}
	return ins
}

func spmm(indptr, indices, values, dense *Tensor) *Tensor {
	return call1("spmm", nil, indptr, indices, values, dense)
}

func spmmTransposed(indptr, indices, values, dense *Tensor, cols int) *Tensor {
	return call1("_spmm_transposed", Attrs{"cols": cols}, indptr, indices, values, dense)
}

func sddmm(indptr, indices, a, b *Tensor) *Tensor { return call1("sddmm", nil, indptr, indices, a, b) }

func sparseT(t *Tensor) *Tensor { return call1("transpose", nil, t) }

// Two CSR patterns for samples: 3x4 with an empty row and unsorted columns,
// and 2x3 with a repeated column (duplicates add up).
var (
	csrPtrA, csrIdxA = GV(I64, []float64{0, 2, 2, 5}, 4), GV(I64, []float64{3, 0, 1, 3, 2}, 5)
	csrPtrB, csrIdxB = GV(I64, []float64{0, 3, 4}, 3), GV(I64, []float64{1, 1, 0, 2}, 4)
	csrPtrE, csrIdxE = GV(I64, []float64{0, 0, 0}, 3), GI(I64, 0, 1, 0)
)

func init() {
	MustRegister(
		&OpDef{
			Name: "segment_sum", Category: "sparse", Doc: "Sum of the rows of data that share a segment id; empty segments give 0.",
			Inputs: segmentInputs(numeric), Attrs: segmentAttrs(), Infer: inferSegment,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				return []*Tensor{segmentGather(g.Grad(0), g.Inputs[1]), nil}, nil
			},
			Samples: segmentSamples(Sample{Name: "i32_data", Inputs: []Gen{GI(I32, -50, 50, 6, 2), GI(I64, 0, 3, 6)}, Attrs: Attrs{"num_segments": 3}}),
		},
		&OpDef{
			Name: "segment_mean", Category: "sparse", Doc: "Mean of the rows of data that share a segment id; empty segments give 0.",
			Inputs: segmentInputs(floatsOnly), Attrs: segmentAttrs(), Infer: inferSegment,
			Backward: segmentMeanGrad, Samples: segmentSamples(),
		},
		&OpDef{
			Name: "segment_max", Category: "sparse", Doc: "Maximum of the rows of data that share a segment id (NaN propagates); empty segments give 0.",
			Inputs: segmentInputs(numeric), Attrs: segmentAttrs(), Infer: inferSegment,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				return []*Tensor{call1("_segment_max_grad", nil, g.Inputs[0], g.Inputs[1], g.Outputs[0], g.Grad(0)), nil}, nil
			},
			Samples: segmentSamples(
				Sample{Name: "ties", Inputs: []Gen{GV(F32, []float64{1, 3, 3, -2, 3, 0}, 6, 1), GV(I64, []float64{0, 0, 0, 1, 1, 1}, 6)}, Attrs: Attrs{"num_segments": 2}, NoGrad: true},
				Sample{Name: "special", Inputs: []Gen{G(F32, 12).WithKind("special"), GI(I64, 0, 4, 12)}, Attrs: Attrs{"num_segments": 4}, NoGrad: true},
				Sample{Name: "i32_data", Inputs: []Gen{GI(I32, -50, 50, 6, 2), GI(I64, 0, 3, 6)}, Attrs: Attrs{"num_segments": 4}}),
		},
		&OpDef{
			Name: "_segment_gather", Category: "sparse", Doc: "Row segment_ids[i] of x for every i (gradient of segment_sum).", Internal: true,
			Inputs: []InputSpec{{Name: "x"}, {Name: "segment_ids", DTypes: segmentIDTypes, NoGrad: true}},
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				if len(in[0].Shape) == 0 || len(in[1].Shape) != 1 {
					return nil, fmt.Errorf("x must have at least one dim and segment_ids must be 1-D, got %v and %v", in[0].Shape, in[1].Shape)
				}
				return []Meta{{Shape: append(Shape{in[1].Shape[0]}, in[0].Shape[1:]...), DType: in[0].DType}}, nil
			},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				return []*Tensor{segmentSum(g.Grad(0), g.Inputs[1], g.Inputs[0].shape[0]), nil}, nil
			},
			Samples: []Sample{
				{Name: "rows", Inputs: []Gen{G(F32, 4, 3), GI(I64, 0, 4, 6)}},
				{Name: "vector_i32", Inputs: []Gen{G(F64, 3), GI(I32, 0, 3, 5)}},
				{Name: "empty", Inputs: []Gen{G(F32, 2, 2), GI(I64, 0, 2, 0)}},
			},
		},
		&OpDef{
			Name: "_segment_max_grad", Category: "sparse", Internal: true,
			Doc: "Gradient of segment_max: upstream gradient shared evenly by the rows that tie for the maximum.",
			Inputs: []InputSpec{{Name: "data", DTypes: floatsOnly}, {Name: "segment_ids", DTypes: segmentIDTypes, NoGrad: true},
				{Name: "out", DTypes: floatsOnly}, {Name: "grad", DTypes: floatsOnly}},
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				if !in[2].Shape.Equal(in[3].Shape) || len(in[0].Shape) == 0 || len(in[2].Shape) == 0 || !in[0].Shape[1:].Equal(in[2].Shape[1:]) {
					return nil, fmt.Errorf("data %v, out %v and grad %v do not match", in[0].Shape, in[2].Shape, in[3].Shape)
				}
				if len(in[1].Shape) != 1 || in[1].Shape[0] != in[0].Shape[0] {
					return nil, fmt.Errorf("segment_ids must have shape [%d], got %v", in[0].Shape[0], in[1].Shape)
				}
				return []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}, nil
			},
			Samples: []Sample{
				{Name: "ties", Inputs: []Gen{GV(F32, []float64{1, 3, 3, -2, 3, 0}, 6, 1), GV(I64, []float64{0, 0, 0, 1, 1, 1}, 6),
					GV(F32, []float64{3, 3}, 2, 1), GV(F32, []float64{0.5, -2}, 2, 1)}},
			},
		},
		&OpDef{
			Name: "spmm", Category: "sparse", Doc: "CSR sparse matrix [rows, cols] times dense [cols, n]; duplicates add up.",
			Inputs: csrInputs("values", "dense"), Infer: inferSpmm,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				ptr, idx, values, dense, grad := g.Inputs[0], g.Inputs[1], g.Inputs[2], g.Inputs[3], g.Grad(0)
				res := make([]*Tensor, 4)
				if g.Need[2] {
					res[2] = sddmm(ptr, idx, grad, sparseT(dense))
				}
				if g.Need[3] {
					res[3] = spmmTransposed(ptr, idx, values, grad, dense.shape[0])
				}
				return res, nil
			},
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{csrPtrA, csrIdxA, G(F32, 5), G(F32, 4, 3)}},
				{Name: "duplicates", Inputs: []Gen{csrPtrB, csrIdxB, G(F32, 4), G(F32, 3, 2)}},
				{Name: "strided_dense", Inputs: []Gen{csrPtrA, csrIdxA, G(F32, 5), G(F32, 4, 2).AsStrided()}},
				{Name: "f64_n1", Inputs: []Gen{csrPtrA, csrIdxA, G(F64, 5), G(F64, 4, 1)}},
				{Name: "no_entries", Inputs: []Gen{csrPtrE, csrIdxE, G(F32, 0), G(F32, 3, 2)}},
			},
		},
		&OpDef{
			Name: "_spmm_transposed", Category: "sparse", Internal: true,
			Doc:    "Transpose of a CSR matrix [rows, cols] times dense [rows, n], giving [cols, n] (gradient of spmm).",
			Inputs: csrInputs("values", "dense"), Infer: inferSpmmTransposed,
			Attrs: []AttrSpec{{Name: "cols", Kind: AttrInt, Required: true, Doc: "columns of the sparse matrix"}},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				ptr, idx, values, dense, grad := g.Inputs[0], g.Inputs[1], g.Inputs[2], g.Inputs[3], g.Grad(0)
				res := make([]*Tensor, 4)
				if g.Need[2] {
					res[2] = sddmm(ptr, idx, dense, sparseT(grad))
				}
				if g.Need[3] {
					res[3] = spmm(ptr, idx, values, grad)
				}
				return res, nil
			},
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{csrPtrA, csrIdxA, G(F32, 5), G(F32, 3, 2)}, Attrs: Attrs{"cols": 4}},
				{Name: "duplicates_f64", Inputs: []Gen{csrPtrB, csrIdxB, G(F64, 4), G(F64, 2, 3)}, Attrs: Attrs{"cols": 3}},
			},
		},
		&OpDef{
			Name: "sddmm", Category: "sparse", Doc: "(a @ b) sampled at the entries of a CSR pattern: one value per pattern entry.",
			Inputs: csrInputs("a", "b"), Infer: inferSddmm,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				ptr, idx, a, b, grad := g.Inputs[0], g.Inputs[1], g.Inputs[2], g.Inputs[3], g.Grad(0)
				res := make([]*Tensor, 4)
				if g.Need[2] {
					res[2] = spmm(ptr, idx, grad, sparseT(b))
				}
				if g.Need[3] {
					res[3] = sparseT(spmmTransposed(ptr, idx, grad, a, b.shape[1]))
				}
				return res, nil
			},
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{csrPtrA, csrIdxA, G(F32, 3, 2), G(F32, 2, 4)}},
				{Name: "duplicates", Inputs: []Gen{csrPtrB, csrIdxB, G(F32, 2, 3), G(F32, 3, 3)}},
				{Name: "strided", Inputs: []Gen{csrPtrA, csrIdxA, G(F32, 3, 4).AsStrided(), G(F32, 4, 4).AsStrided()}},
				{Name: "f64_k1", Inputs: []Gen{csrPtrB, csrIdxB, G(F64, 2, 1), G(F64, 1, 3)}},
				{Name: "no_entries", Inputs: []Gen{csrPtrE, csrIdxE, G(F32, 2, 3), G(F32, 3, 2)}},
			},
		},
	)
}
