package core

import (
	"fmt"
	"math"
)

// Gather and scatter along one axis, torch style: index has the rank of the
// data, and element i of index names the position along axis that element i
// (at the same coordinates otherwise) reads from or writes to. Indices are
// not wrapped: a negative or too large index is an error, as in torch; only
// take_along_axis wraps negatives, as torch.take_along_dim does.

func init() {
	MustRegister(gatherDef(), scatterDef(), scatterAddDef(), scatterReduceDef(),
		scatterExtremumGradDef(), takeAlongAxisDef(), wrapIndexDef())
}

func indexAxisAttr() AttrSpec {
	return AttrSpec{Name: "axis", Kind: AttrInt, Default: 0, Doc: "axis the indices point along"}
}

// inferGather checks gather's shapes: index has x's rank and is no larger
// than x off the axis. The output has index's shape.
func inferGather(in []Meta, a Attrs) ([]Meta, error) {
	x, idx := in[0].Shape, in[1].Shape
	ax, err := indexedAxis(x, a)
	if err != nil {
		return nil, err
	}
	if len(idx) != len(x) {
		return nil, fmt.Errorf("index has shape %v, x has %v: ranks differ", idx, x)
	}
	for d := range x {
		if d != ax && idx[d] > x[d] {
			return nil, fmt.Errorf("index shape %v is larger than x shape %v in dim %d", idx, x, d)
		}
	}
	return []Meta{{Shape: idx.Clone(), DType: in[0].DType}}, nil
}

// indexedAxis normalises the "axis" attribute for an input of shape s.
func indexedAxis(s Shape, a Attrs) (int, error) {
	if len(s) == 0 {
		return 0, fmt.Errorf("x is a scalar; it needs at least one dimension")
	}
	return NormAxis(a.Int("axis"), len(s))
}

// inferScatter checks the inputs (x, index, src) of the scatter family:
// equal ranks, equal dtypes of x and src, index no larger than src anywhere
// and no larger than x off the axis. The output has x's shape.
func inferScatter(in []Meta, a Attrs) ([]Meta, error) {
	x, idx, src := in[0].Shape, in[1].Shape, in[2].Shape
	ax, err := indexedAxis(x, a)
	if err != nil {
		return nil, err
	}
	if in[2].DType != in[0].DType {
		return nil, fmt.Errorf("src has dtype %s, x has %s: they must match", in[2].DType, in[0].DType)
	}
	if len(idx) != len(x) || len(src) != len(x) {
		return nil, fmt.Errorf("x %v, index %v and src %v must have the same rank", x, idx, src)
	}
	for d := range x {
		if idx[d] > src[d] {
			return nil, fmt.Errorf("index shape %v is larger than src shape %v in dim %d", idx, src, d)
		}
		if d != ax && idx[d] > x[d] {
			return nil, fmt.Errorf("index shape %v is larger than x shape %v in dim %d", idx, x, d)
		}
	}
	return []Meta{{Shape: x.Clone(), DType: in[0].DType}}, nil
}

// gatherAt reads g at index along axis and widens the result with zeros to
// shape (src may be larger than index; its extra elements get no gradient).
func gatherAt(g *Tensor, axis int, index *Tensor, shape Shape) *Tensor {
	return padToShape(call1("gather", Attrs{"axis": axis}, g, index), shape)
}

// zeroScattered is g with the positions scatter writes to set to zero.
func zeroScattered(g *Tensor, axis int, index, src *Tensor) *Tensor {
	return call1("scatter", Attrs{"axis": axis}, g, index, ZerosLike(src))
}

func scatterInputs() []InputSpec {
	return []InputSpec{{Name: "x"}, {Name: "index", DTypes: intIndex, NoGrad: true}, {Name: "src"}}
}

// scatterIndex0 has, in every column, distinct rows of a 3-row tensor, so
// that scatter into a [3, 4] tensor along axis 0 is deterministic.
var scatterIndex0 = GV(I64, []float64{0, 2, 1, 0, 2, 1, 0, 1}, 2, 4)

func gatherDef() *OpDef {
	return &OpDef{
		Name: "gather", Category: "index", Doc: "out[i][j] = x[index[i][j]][j] along axis (torch.gather).",
		Inputs: []InputSpec{{Name: "x"}, {Name: "index", DTypes: intIndex, NoGrad: true}},
		Attrs:  []AttrSpec{indexAxisAttr()},
		Infer:  inferGather,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x, idx := g.Inputs[0], g.Inputs[1]
			ax, _ := indexedAxis(x.shape, g.Attrs)
			return []*Tensor{call1("scatter_add", Attrs{"axis": ax}, ZerosLike(x), idx, g.Grads[0])}, nil
		},
		GPUBody: &ElementBody{Body: gatherBody},
		Samples: []Sample{
			{Name: "axis0", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 3, 5, 4)}},
			{Name: "axis1_smaller", Inputs: []Gen{G(F32, 3, 5), GI(I64, 0, 5, 2, 3)}, Attrs: Attrs{"axis": 1}},
			{Name: "neg_axis_3d", Inputs: []Gen{G(F32, 2, 3, 4), GI(I32, 0, 4, 2, 3, 2)}, Attrs: Attrs{"axis": -1}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided(), GI(I64, 0, 4, 2, 3)}},
			{Name: "empty_index", Inputs: []Gen{G(F32, 3, 2), GI(I64, 0, 3, 0, 2)}},
			{Name: "i16_index_u8", Inputs: []Gen{GI(I16, -300, 300, 3, 3), GI(U8, 0, 3, 3, 3)}, Attrs: Attrs{"axis": 1}},
			{Name: "special", Inputs: []Gen{G(F32, 4, 3).WithKind("special"), GI(I64, 0, 4, 4, 3)}, NoGrad: true},
		},
	}
}

// gatherBody is gather's GPU kernel: output element i (at index i's
// coordinates) reads x where the axis coordinate is index[i]. An index
// out of [0, size) fails the op; x1u's u32 view of a CUDA i64 index wraps
// past 2^32, so the float view catches those.
func gatherBody(_ BodyTypes, a Attrs, s BodySlots) string {
	s.SetI(0, int64(a.Int("axis")))
	return `
	var axis = pi(0u);
	if axis < 0 {
		axis += i32(orank);
	}
	let ax = u32(axis);
	if x1v(i) < 0 || x1u(i) >= dim0(ax) || x1(i) >= 4294967296.0 {
		return fail(0u);
	}
	var rest = i;
	var at = 0u;
	var stride = 1u;
	for (var d = orank; d > 0u; d--) {
		let c = rest % odim(d - 1u);
		rest = rest / odim(d - 1u);
		if d - 1u == ax {
			at += x1u(i) * stride;
		} else {
			at += c * stride;
		}
		stride *= dim0(d - 1u);
	}
	return x0v(at);`
}

func scatterDef() *OpDef {
	return &OpDef{
		Name: "scatter", Category: "index", Doc: "Copy of x with out[index[i][j]][j] = src[i][j] along axis (torch.scatter; duplicate targets keep an arbitrary one).",
		Inputs: scatterInputs(),
		Attrs:  []AttrSpec{indexAxisAttr()},
		Infer:  inferScatter,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x, idx, src := g.Inputs[0], g.Inputs[1], g.Inputs[2]
			ax, _ := indexedAxis(x.shape, g.Attrs)
			res := make([]*Tensor, 3)
			if g.Need[0] {
				res[0] = zeroScattered(g.Grads[0], ax, idx, src)
			}
			if g.Need[2] {
				res[2] = gatherAt(g.Grads[0], ax, idx, src.shape)
			}
			return res, nil
		},
		Samples: []Sample{
			{Name: "axis0", Inputs: []Gen{G(F32, 3, 4), scatterIndex0, G(F32, 2, 4)}},
			{Name: "larger_src", Inputs: []Gen{G(F32, 3, 4), scatterIndex0, G(F32, 3, 5)}},
			{Name: "axis1_i32_index", Inputs: []Gen{G(F32, 2, 5), GV(I32, []float64{4, 0, 2, 1, 3, 4}, 2, 3), G(F32, 2, 3)}, Attrs: Attrs{"axis": -1}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 3, 4).AsStrided(), scatterIndex0, G(F64, 2, 4)}},
			{Name: "empty_index", Inputs: []Gen{G(F32, 3, 2), GI(I64, 0, 3, 0, 2), G(F32, 1, 2)}},
			{Name: "i64", Inputs: []Gen{GI(I64, -99, 99, 3, 4), scatterIndex0, GI(I64, -99, 99, 2, 4)}},
			{Name: "bool", Inputs: []Gen{{Shape: Shape{3, 4}, DType: Bool, Kind: "bool"}, scatterIndex0, {Shape: Shape{2, 4}, DType: Bool, Kind: "bool"}}},
		},
	}
}

func scatterAddDef() *OpDef {
	return &OpDef{
		Name: "scatter_add", Category: "index", Doc: "Copy of x with src[i][j] added at out[index[i][j]][j] along axis (torch.scatter_add).",
		Inputs: []InputSpec{{Name: "x", DTypes: numeric}, {Name: "index", DTypes: intIndex, NoGrad: true}, {Name: "src", DTypes: numeric}},
		Attrs:  []AttrSpec{indexAxisAttr()},
		Infer:  inferScatter,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			idx, src := g.Inputs[1], g.Inputs[2]
			ax, _ := indexedAxis(g.Inputs[0].shape, g.Attrs)
			res := []*Tensor{g.Grads[0], nil, nil}
			if g.Need[2] {
				res[2] = gatherAt(g.Grads[0], ax, idx, src.shape)
			}
			return res, nil
		},
		TolScale: 2,
		Samples: []Sample{
			{Name: "duplicates", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 3, 5, 4), G(F32, 5, 4)}},
			{Name: "axis1_larger_src", Inputs: []Gen{G(F32, 2, 3), GI(I64, 0, 3, 2, 4), G(F32, 2, 5)}, Attrs: Attrs{"axis": 1}},
			{Name: "3d_neg_axis", Inputs: []Gen{G(F32, 2, 2, 3), GI(I32, 0, 3, 2, 2, 4), G(F32, 2, 2, 4)}, Attrs: Attrs{"axis": -1}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 3, 4).AsStrided(), GI(I64, 0, 3, 3, 4), G(F64, 3, 4).AsStrided()}},
			{Name: "empty_index", Inputs: []Gen{G(F32, 3, 2), GI(I64, 0, 3, 0, 2), G(F32, 0, 2)}},
			{Name: "i32", Inputs: []Gen{GI(I32, -50, 50, 3, 3), GI(I64, 0, 3, 4, 3), GI(I32, -50, 50, 4, 3)}},
			{Name: "f16", Inputs: []Gen{G(F16, 3, 2), GI(I64, 0, 3, 3, 2), G(F16, 3, 2)}},
		},
	}
}

func scatterReduceDef() *OpDef {
	return &OpDef{
		Name: "scatter_reduce", Category: "index",
		Doc:    "Reduce src into a copy of x at index along axis with sum, mean, amax or amin (torch.scatter_reduce; integer mean rounds down).",
		Inputs: []InputSpec{{Name: "x", DTypes: numeric}, {Name: "index", DTypes: intIndex, NoGrad: true}, {Name: "src", DTypes: numeric}},
		Attrs: []AttrSpec{indexAxisAttr(),
			{Name: "reduce", Kind: AttrString, Required: true, Enum: []string{"sum", "mean", "amax", "amin"}, Doc: "reduction"},
			{Name: "include_self", Kind: AttrBool, Default: true, Doc: "whether x's values at scattered positions take part"}},
		Infer:    inferScatter,
		Backward: scatterReduceBackward,
		TolScale: 2,
		Samples: []Sample{
			{Name: "sum", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 3, 5, 4), G(F32, 5, 4)}, Attrs: Attrs{"reduce": "sum"}},
			{Name: "sum_exclude_self", Inputs: []Gen{G(F32, 4, 3), GI(I64, 0, 4, 3, 3), G(F32, 3, 3)}, Attrs: Attrs{"reduce": "sum", "include_self": false}},
			{Name: "mean", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 3, 5, 4), G(F32, 5, 4)}, Attrs: Attrs{"reduce": "mean"}},
			{Name: "mean_exclude_self_axis1", Inputs: []Gen{G(F64, 2, 5), GI(I64, 0, 5, 2, 4), G(F64, 2, 6)}, Attrs: Attrs{"reduce": "mean", "include_self": false, "axis": 1}},
			{Name: "amax", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 3, 4, 4), G(F32, 4, 4)}, Attrs: Attrs{"reduce": "amax"}},
			{Name: "amin_exclude_self_strided", Inputs: []Gen{G(F64, 4, 3).AsStrided(), GI(I32, 0, 4, 3, 3), G(F64, 3, 3)}, Attrs: Attrs{"reduce": "amin", "include_self": false}},
			{Name: "mean_i32_floor", Inputs: []Gen{GI(I32, -20, 20, 3, 2), GI(I64, 0, 3, 4, 2), GI(I32, -20, 20, 4, 2)}, Attrs: Attrs{"reduce": "mean"}},
			{Name: "amax_special", Inputs: []Gen{G(F32, 3, 4).WithKind("special"), GI(I64, 0, 3, 3, 4), G(F32, 3, 4).WithKind("special")}, Attrs: Attrs{"reduce": "amax"}, NoGrad: true},
		},
	}
}

// scatterReduceBackward follows torch: sum passes g through; mean divides
// by the number of values that met at each target; amax and amin share the
// gradient evenly among the values equal to the result.
func scatterReduceBackward(g *GradCtx) ([]*Tensor, error) {
	x, idx, src, gr := g.Inputs[0], g.Inputs[1], g.Inputs[2], g.Grads[0]
	ax, _ := indexedAxis(x.shape, g.Attrs)
	include := g.Attrs.Bool("include_self")
	res := make([]*Tensor, 3)
	switch g.Attrs.String("reduce") {
	case "sum":
		res[0] = gr
		if !include {
			res[0] = zeroScattered(gr, ax, idx, src)
		}
		res[2] = gatherAt(gr, ax, idx, src.shape)
	case "mean":
		base := ZerosLike(gr)
		if include {
			base = OnesLike(gr)
		}
		count := call1("scatter_add", Attrs{"axis": ax}, base, idx, OnesLike(src))
		if include {
			res[0] = call1("div", nil, gr, count)
		} else {
			res[0] = zeroScattered(gr, ax, idx, src)
		}
		perSrc := call1("div", nil, call1("gather", Attrs{"axis": ax}, gr, idx), call1("gather", Attrs{"axis": ax}, count, idx))
		res[2] = padToShape(perSrc, src.shape)
	default:
		outs, err := Call("_scatter_extremum_grad", []*Tensor{gr, x, idx, src, g.Outputs[0]},
			Attrs{"axis": ax, "include_self": include})
		if err != nil {
			return nil, err
		}
		res[0], res[2] = outs[0], outs[1]
	}
	return res, nil
}

// padToShape widens t with zeros at the end of every dim up to shape.
func padToShape(t *Tensor, shape Shape) *Tensor {
	if t.err != nil || t.shape.Equal(shape) {
		return t
	}
	pads := make([]int, 0, 2*len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		pads = append(pads, 0, shape[d]-t.shape[d])
	}
	return call1("pad", Attrs{"pads": pads}, t)
}

func scatterExtremumGradDef() *OpDef {
	return &OpDef{
		Name: "_scatter_extremum_grad", Category: "index", Internal: true,
		Doc: "Gradients of x and src for scatter_reduce amax/amin: g shared evenly among the values equal to the result.",
		Inputs: []InputSpec{{Name: "g", DTypes: floatsOnly}, {Name: "x", DTypes: floatsOnly}, {Name: "index", DTypes: intIndex},
			{Name: "src", DTypes: floatsOnly}, {Name: "out", DTypes: floatsOnly}},
		Outputs: []string{"grad_x", "grad_src"},
		Attrs: []AttrSpec{indexAxisAttr(),
			{Name: "include_self", Kind: AttrBool, Default: true, Doc: "whether x took part in the reduction"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			if _, err := inferScatter(in[1:4], a); err != nil {
				return nil, err
			}
			for i, name := range []string{"g", "out"} {
				m := in[4*i]
				if !m.Shape.Equal(in[1].Shape) || m.DType != in[1].DType {
					return nil, fmt.Errorf("%s is %s%v, x is %s%v: they must match", name, m.DType, m.Shape, in[1].DType, in[1].Shape)
				}
			}
			return []Meta{{Shape: in[1].Shape.Clone(), DType: in[1].DType}, {Shape: in[3].Shape.Clone(), DType: in[3].DType}}, nil
		},
		Samples: []Sample{
			{Name: "amax_like", Inputs: []Gen{G(F32, 3, 2), GV(F32, []float64{1, 5, 2, 0, 3, 4}, 3, 2),
				GV(I64, []float64{0, 1, 0, 1}, 2, 2), GV(F32, []float64{4, 2, 1, 7}, 2, 2), GV(F32, []float64{4, 5, 2, 7, 3, 4}, 3, 2)}},
			{Name: "tie_f64", Inputs: []Gen{G(F64, 2), GV(F64, []float64{3, 1}, 2), GV(I64, []float64{0, 0}, 2),
				GV(F64, []float64{3, 2}, 2), GV(F64, []float64{3, 1}, 2)}, Attrs: Attrs{"include_self": false}},
		},
	}
}

// takeAlongShapes broadcasts x and indices in every dim but axis and gives
// the shape x is broadcast to and the output shape.
func takeAlongShapes(x, idx Shape, a Attrs) (ax int, xb, out Shape, err error) {
	if ax, err = indexedAxis(x, a); err != nil {
		return 0, nil, nil, err
	}
	if len(idx) != len(x) {
		return 0, nil, nil, fmt.Errorf("indices has shape %v, x has %v: ranks differ", idx, x)
	}
	xb, out = x.Clone(), idx.Clone()
	for d := range x {
		if d == ax {
			continue
		}
		switch {
		case x[d] == idx[d] || idx[d] == 1:
			out[d] = x[d]
		case x[d] == 1:
			xb[d] = idx[d]
		default:
			return 0, nil, nil, fmt.Errorf("x %v and indices %v do not broadcast in dim %d", x, idx, d)
		}
	}
	return ax, xb, out, nil
}

func takeAlongAxisDef() *OpDef {
	return &OpDef{
		Name: "take_along_axis", Category: "index",
		Doc:    "Pick values along axis at indices, broadcasting the other dims; negative indices count from the end (torch.take_along_dim).",
		Inputs: []InputSpec{{Name: "x"}, {Name: "indices", DTypes: intIndex, NoGrad: true}},
		Attrs:  []AttrSpec{{Name: "axis", Kind: AttrInt, Default: -1, Doc: "axis the indices point along"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			_, _, out, err := takeAlongShapes(in[0].Shape, in[1].Shape, a)
			if err != nil {
				return nil, err
			}
			return []Meta{{Shape: out, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x, idx, gr := g.Inputs[0], g.Inputs[1], g.Grads[0]
			ax, xb, out, _ := takeAlongShapes(x.shape, idx.shape, g.Attrs)
			wrapped := call1("_wrap_index", Attrs{"size": x.shape[ax]}, call1("expand", Attrs{"shape": []int(out)}, idx))
			zeros := call1("zeros", Attrs{"shape": []int(xb), "dtype": gr.dtype, "device": gr.Device().String()})
			return []*Tensor{call1("scatter_add", Attrs{"axis": ax}, zeros, wrapped, gr), nil}, nil
		},
		Samples: []Sample{
			{Name: "last", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 4, 3, 2)}},
			{Name: "axis0_negative", Inputs: []Gen{G(F32, 3, 4), GI(I64, -3, 3, 2, 4)}, Attrs: Attrs{"axis": 0}},
			{Name: "broadcast", Inputs: []Gen{G(F32, 2, 1, 5), GI(I32, 0, 5, 1, 3, 2)}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 4, 3).AsStrided(), GI(I64, 0, 3, 4, 3)}, Attrs: Attrs{"axis": 1}},
			{Name: "empty", Inputs: []Gen{G(F32, 2, 3), GI(I64, 0, 3, 2, 0)}},
			{Name: "u8_values", Inputs: []Gen{GI(U8, 0, 255, 2, 3), GI(I64, 0, 2, 4, 3)}, Attrs: Attrs{"axis": 0}},
		},
	}
}

func wrapIndexDef() *OpDef {
	return &OpDef{
		Name: "_wrap_index", Category: "index", Internal: true,
		Doc:    "Indices into a dim of the given size with negatives counted from the end, as i64; out-of-range indices are an error.",
		Inputs: []InputSpec{{Name: "index", DTypes: intIndex}},
		Attrs:  []AttrSpec{{Name: "size", Kind: AttrInt, Required: true, Doc: "size of the indexed dim"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			if n := a.Int("size"); n < 0 || n > math.MaxInt32*64 {
				return nil, fmt.Errorf("size %d is not a valid dim size", n)
			}
			return []Meta{{Shape: in[0].Shape.Clone(), DType: I64}}, nil
		},
		Samples: []Sample{
			{Name: "mixed", Inputs: []Gen{GI(I64, -4, 4, 6)}, Attrs: Attrs{"size": 4}},
			{Name: "i8", Inputs: []Gen{GI(I8, -3, 3, 2, 2)}, Attrs: Attrs{"size": 3}},
		},
	}
}
