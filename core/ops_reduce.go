package core

import "github.com/webtensor/webtensor/core/oprules"

// Reductions over any set of axes (nil: all) with keepdim.

func reduceAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "axes", Kind: AttrInts, Doc: "axes to reduce; absent means all"},
		{Name: "keepdim", Kind: AttrBool, Default: false, Doc: "keep reduced axes as size 1"},
	}
}

// InferReduce gives the reduced shape, keeping the input dtype.
func InferReduce(in []Meta, a Attrs) ([]Meta, error) {
	axes, err := NormAxes(a.Ints("axes"), len(in[0].Shape))
	if err != nil {
		return nil, err
	}
	return []Meta{{Shape: ReduceShape(in[0].Shape, axes, a.Bool("keepdim")), DType: in[0].DType}}, nil
}

// ExpandReduced reshapes a reduction result (or its gradient) so that it
// broadcasts against the input: reduced axes come back as size 1.
func ExpandReduced(g *Tensor, in *Tensor, a Attrs) *Tensor {
	if a.Bool("keepdim") {
		return g
	}
	return g.Reshape(ReduceShape(in.shape, oprules.ReducedAxes(in.Rank(), a), true))
}

func reduceSamples(extra ...Sample) []Sample {
	return append([]Sample{
		{Name: "all", Inputs: []Gen{G(F32, 3, 4)}},
		{Name: "axis1", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"axes": []int{1}}},
		{Name: "axes_keepdim", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"axes": []int{0, -1}, "keepdim": true}},
		{Name: "strided", Inputs: []Gen{G(F32, 4, 5).AsStrided()}, Attrs: Attrs{"axes": []int{0}}},
		{Name: "f64", Inputs: []Gen{G(F64, 6)}},
		{Name: "size1", Inputs: []Gen{G(F32, 1, 5, 1)}, Attrs: Attrs{"axes": []int{1}}},
	}, extra...)
}

func init() {
	MustRegister(
		&OpDef{
			Name: "sum", Category: "reduce", Doc: "Sum over axes (bool, signed integers and u8 sum as i64, like PyTorch; u16 and u64 as u64, the array API's rule).",
			Inputs: []InputSpec{{Name: "x"}}, Attrs: reduceAttrs(),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				m, err := InferReduce(in, a)
				if err == nil {
					m[0].DType = accumulateDType(m[0].DType)
				}
				return m, err
			},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				return []*Tensor{call1("expand", Attrs{"shape": []int(x.Shape())}, ExpandReduced(g.Grads[0], x, g.Attrs))}, nil
			},
			Samples: reduceSamples(
				Sample{Name: "i32", Inputs: []Gen{GI(I32, -50, 50, 3, 4)}, Attrs: Attrs{"axes": []int{1}}},
				Sample{Name: "bool", Inputs: []Gen{{Shape: Shape{5}, DType: Bool, Kind: "bool"}}},
				Sample{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axes": []int{0}}},
				Sample{Name: "c64", Inputs: []Gen{G(C64, 3, 4)}, Attrs: Attrs{"axes": []int{-1}}}),
		},
		&OpDef{
			Name: "mean", Category: "reduce", Doc: "Arithmetic mean over axes (floating point only).",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}}, Attrs: reduceAttrs(), Infer: InferReduce,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				n := 1
				for _, ax := range oprules.ReducedAxes(x.Rank(), g.Attrs) {
					n *= x.shape[ax]
				}
				gr := call1("div", nil, ExpandReduced(g.Grads[0], x, g.Attrs), Scalar(float64(n), x.dtype, x.Device()))
				return []*Tensor{call1("expand", Attrs{"shape": []int(x.Shape())}, gr)}, nil
			},
			Samples: reduceSamples(),
		},
	)
}
