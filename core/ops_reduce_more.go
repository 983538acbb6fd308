package core

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/oprules"
)

// Reductions beyond sum and mean: products, extremes and their positions,
// moments, logsumexp, vector norms, running sums and products, and the
// logical any/all. Gradients that have no expression in other registry ops
// (products with zeros, ties of extremes, norms at zero, running products)
// go through the internal "_..._grad" helpers at the end of this file.

// accumulateDType is the result dtype of sum-like reductions: bool, the
// signed integers and u8 accumulate in i64 as in PyTorch; u16 and u64 in
// u64, the array API's "unsigned integer of the default width" (PyTorch
// has no such reduction for them to follow); u32 stays u32, as it did
// before u64 existed (WebGPU sums it in its own 32 bits).
func accumulateDType(d DType) DType {
	switch {
	case d == U16 || d == U64:
		return U64
	case d == Bool || (d.IsInt() && d != U32):
		return I64
	}
	return d
}

func inferReduceAccumulate(in []Meta, a Attrs) ([]Meta, error) {
	m, err := InferReduce(in, a)
	if err != nil {
		return nil, err
	}
	m[0].DType = accumulateDType(m[0].DType)
	return m, nil
}

// inferReduceNoIdentity is InferReduce for reductions without an identity
// element (max, min): reducing an axis of size 0 is an error, as in PyTorch.
func inferReduceNoIdentity(in []Meta, a Attrs) ([]Meta, error) {
	s := in[0].Shape
	axes, err := NormAxes(a.Ints("axes"), len(s))
	if err != nil {
		return nil, err
	}
	for _, ax := range axes {
		if s[ax] == 0 {
			return nil, fmt.Errorf("cannot reduce axis %d of size 0 (shape %v): the reduction has no identity", ax, s)
		}
	}
	return InferReduce(in, a)
}

func inferReduceBool(in []Meta, a Attrs) ([]Meta, error) {
	m, err := InferReduce(in, a)
	if err != nil {
		return nil, err
	}
	m[0].DType = Bool
	return m, nil
}

func inferReduceFloat(in []Meta, a Attrs) ([]Meta, error) {
	m, err := InferReduce(in, a)
	if err != nil {
		return nil, err
	}
	if !m[0].DType.IsFloat() {
		m[0].DType = F32
	}
	return m, nil
}

func inferArgReduce(in []Meta, a Attrs) ([]Meta, error) {
	s := in[0].Shape
	axis, flat, err := oprules.ArgReduceAxis(len(s), a)
	if err != nil {
		return nil, err
	}
	keep := a.Bool("keepdim")
	switch {
	case flat && s.Numel() == 0:
		return nil, fmt.Errorf("cannot search an empty tensor of shape %v", s)
	case flat && keep:
		out := make(Shape, len(s))
		for i := range out {
			out[i] = 1
		}
		return []Meta{{Shape: out, DType: I64}}, nil
	case flat || len(s) == 0:
		return []Meta{{Shape: Shape{}, DType: I64}}, nil
	case s[axis] == 0:
		return nil, fmt.Errorf("cannot search axis %d of size 0 (shape %v)", axis, s)
	}
	return []Meta{{Shape: ReduceShape(s, []int{axis}, keep), DType: I64}}, nil
}

func inferScan(in []Meta, a Attrs) ([]Meta, error) {
	if _, err := oprules.ScanAxis(len(in[0].Shape), a); err != nil {
		return nil, err
	}
	return []Meta{{Shape: in[0].Shape.Clone(), DType: accumulateDType(in[0].DType)}}, nil
}

func inferNorm(in []Meta, a Attrs) ([]Meta, error) {
	if err := oprules.ValidNormOrd(a.Float("ord")); err != nil {
		return nil, err
	}
	if math.IsInf(a.Float("ord"), 0) {
		return inferReduceNoIdentity(in, a)
	}
	return InferReduce(in, a)
}

// reducedElems is the number of input elements behind each output element.
func reducedElems(x *Tensor, a Attrs) int {
	n := 1
	for _, ax := range oprules.ReducedAxes(x.Rank(), a) {
		n *= x.shape[ax]
	}
	return n
}

// keepdimAttrs is the attribute set that reduces the same axes with keepdim.
func keepdimAttrs(a Attrs) Attrs { return Attrs{"axes": a["axes"], "keepdim": true} }

func varAttrs() []AttrSpec {
	return append(reduceAttrs(), AttrSpec{Name: "correction", Kind: AttrFloat, Default: 1.0,
		Doc: "the divisor is N - correction (1: unbiased, 0: population; the array API allows fractions)"})
}

// varianceDivisor is N - correction, clamped at 0 like PyTorch (so too
// few elements give inf or NaN rather than a negative variance).
func varianceDivisor(x *Tensor, a Attrs) float64 {
	return math.Max(float64(reducedElems(x, a))-a.Float("correction"), 0)
}

// centredOverAxes is x minus its mean over the reduced axes.
func centredOverAxes(x *Tensor, a Attrs) *Tensor {
	return call1("sub", nil, x, call1("mean", keepdimAttrs(a), x))
}

func reduceScalarLike(t *Tensor, v float64) *Tensor { return Scalar(v, t.dtype, t.Device()) }

func reduceBoolGen(shape ...int) Gen { return Gen{Shape: Shape(shape), DType: Bool, Kind: "bool"} }

func scanSamples(extra ...Sample) []Sample {
	return append([]Sample{
		{Name: "axis1", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"axis": 1}},
		{Name: "axis0", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"axis": 0}},
		{Name: "neg_axis_3d", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"axis": -2}},
		{Name: "strided", Inputs: []Gen{G(F32, 4, 5).AsStrided()}, Attrs: Attrs{"axis": 1}},
		{Name: "f64", Inputs: []Gen{G(F64, 7)}, Attrs: Attrs{"axis": 0}},
		{Name: "i32", Inputs: []Gen{GI(I32, -5, 6, 2, 5)}, Attrs: Attrs{"axis": 1}},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axis": 0}},
		{Name: "special", Inputs: []Gen{G(F32, 2, 6).WithKind("special")}, Attrs: Attrs{"axis": 1}, NoGrad: true},
	}, extra...)
}

func init() {
	MustRegister(
		&OpDef{
			Name: "prod", Category: "reduce", Doc: "Product over axes (bool and small integers multiply as i64, like PyTorch).",
			Inputs: []InputSpec{{Name: "x"}}, Attrs: reduceAttrs(), Infer: inferReduceAccumulate,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				others := call1("_prod_grad", Attrs{"axes": g.Attrs["axes"]}, x)
				return []*Tensor{call1("mul", nil, others, ExpandReduced(g.Grads[0], x, g.Attrs))}, nil
			},
			Samples: reduceSamples(
				Sample{Name: "zeros", Inputs: []Gen{GV(F64, []float64{2, 0, -1.5, 0.5, 0, 0, 3, 1.25, -2}, 3, 3)}, Attrs: Attrs{"axes": []int{1}}},
				Sample{Name: "i32", Inputs: []Gen{GI(I32, -4, 5, 3, 4)}, Attrs: Attrs{"axes": []int{0}}},
				Sample{Name: "bool", Inputs: []Gen{reduceBoolGen(2, 3)}, Attrs: Attrs{"axes": []int{1}}},
				Sample{Name: "f16", Inputs: []Gen{GU(F16, 0.5, 1.5, 2, 4)}, Attrs: Attrs{"axes": []int{-1}}},
				Sample{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axes": []int{0}}}),
		},
		extremeDef("max", "Largest value over axes; NaN wins, like torch.amax."),
		extremeDef("min", "Smallest value over axes; NaN wins, like torch.amin."),
		argExtremeDef("argmax", "Index (i64) of the first largest value along axis, or in the flattened tensor; NaN counts as largest."),
		argExtremeDef("argmin", "Index (i64) of the first smallest value along axis, or in the flattened tensor; NaN counts as smallest."),
		&OpDef{
			Name: "var", Category: "reduce", Doc: "Variance over axes with divisor N - correction.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}}, Attrs: varAttrs(), Infer: InferReduce,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				scale := reduceScalarLike(x, 2/varianceDivisor(x, g.Attrs))
				d := call1("mul", nil, centredOverAxes(x, g.Attrs), scale)
				return []*Tensor{call1("mul", nil, d, ExpandReduced(g.Grads[0], x, g.Attrs))}, nil
			},
			Samples: momentSamples(),
		},
		&OpDef{
			Name: "std", Category: "reduce", Doc: "Standard deviation over axes with divisor N - correction.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}}, Attrs: varAttrs(), Infer: InferReduce,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				num := call1("mul", nil, centredOverAxes(x, g.Attrs), ExpandReduced(g.Grads[0], x, g.Attrs))
				den := call1("mul", nil, ExpandReduced(g.Outputs[0], x, g.Attrs), reduceScalarLike(x, varianceDivisor(x, g.Attrs)))
				return []*Tensor{call1("div", nil, num, den)}, nil
			},
			Samples: momentSamples(),
		},
		&OpDef{
			Name: "logsumexp", Category: "reduce", Doc: "log(sum(exp(x))) over axes, computed stably; integers give f32.",
			Inputs: []InputSpec{{Name: "x", DTypes: numeric}}, Attrs: reduceAttrs(), Infer: inferReduceFloat,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				p := call1("exp", nil, call1("sub", nil, x, ExpandReduced(g.Outputs[0], x, g.Attrs)))
				return []*Tensor{call1("mul", nil, p, ExpandReduced(g.Grads[0], x, g.Attrs))}, nil
			},
			Samples: reduceSamples(
				Sample{Name: "large", Inputs: []Gen{GU(F32, 500, 1000, 2, 5)}, Attrs: Attrs{"axes": []int{1}}},
				Sample{Name: "special", Inputs: []Gen{G(F32, 3, 8).WithKind("special")}, Attrs: Attrs{"axes": []int{1}}, NoGrad: true},
				Sample{Name: "neg_inf_row", Inputs: []Gen{GV(F32, []float64{math.Inf(-1), math.Inf(-1), 1, 2}, 2, 2)}, Attrs: Attrs{"axes": []int{1}}, NoGrad: true},
				Sample{Name: "i32", Inputs: []Gen{GI(I32, -5, 5, 3, 4)}, Attrs: Attrs{"axes": []int{1}}},
				Sample{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axes": []int{0}}, NoGrad: true}),
		},
		&OpDef{
			Name: "norm", Category: "reduce", Doc: "Vector norm over axes: ord 2 (default), 1, any p > 0, inf (max |x|), -inf (min |x|) or 0 (count of non-zeros).",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}},
			Attrs: append(reduceAttrs(), AttrSpec{Name: "ord", Kind: AttrFloat, Default: 2.0,
				Doc: "order of the norm: 0, p > 0, inf or -inf"}),
			Infer: inferNorm,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				x := g.Inputs[0]
				a := Attrs{"axes": g.Attrs["axes"], "ord": g.Attrs["ord"]}
				return []*Tensor{call1("_norm_grad", a, x, ExpandReduced(g.Outputs[0], x, g.Attrs), ExpandReduced(g.Grads[0], x, g.Attrs))}, nil
			},
			Samples: reduceSamples(
				Sample{Name: "ord1", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"axes": []int{1}, "ord": 1.0}},
				Sample{Name: "ord_inf", Inputs: []Gen{G(F64, 3, 4)}, Attrs: Attrs{"axes": []int{0}, "ord": math.Inf(1)}},
				Sample{Name: "ord_neg_inf", Inputs: []Gen{G(F64, 3, 4)}, Attrs: Attrs{"axes": []int{1}, "ord": math.Inf(-1)}},
				Sample{Name: "ord3_keepdim", Inputs: []Gen{G(F64, 2, 3, 2)}, Attrs: Attrs{"axes": []int{0, 2}, "ord": 3.0, "keepdim": true}},
				Sample{Name: "ord0", Inputs: []Gen{GV(F32, []float64{0, 1.5, 0, -2, 3, 0}, 2, 3)}, Attrs: Attrs{"ord": 0.0}, NoGrad: true},
				Sample{Name: "special", Inputs: []Gen{G(F32, 2, 8).WithKind("special")}, Attrs: Attrs{"axes": []int{1}}, NoGrad: true},
				Sample{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axes": []int{0}}, NoGrad: true}),
		},
		&OpDef{
			Name: "cumsum", Category: "reduce", Doc: "Running sum along axis (bool and small integers sum as i64).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "axis", Kind: AttrInt, Required: true, Doc: "axis to scan"}},
			Infer:  inferScan,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				// The adjoint of a running sum is the running sum from the
				// end: total - cumsum(g) + g.
				x, gr := g.Inputs[0], g.Grads[0]
				if x.Rank() == 0 {
					return []*Tensor{gr}, nil
				}
				axis, _ := oprules.ScanAxis(x.Rank(), g.Attrs)
				total := call1("sum", Attrs{"axes": []int{axis}, "keepdim": true}, gr)
				return []*Tensor{call1("add", nil, call1("sub", nil, total, call1("cumsum", g.Attrs, gr)), gr)}, nil
			},
			Samples: scanSamples(Sample{Name: "bool", Inputs: []Gen{reduceBoolGen(6)}, Attrs: Attrs{"axis": 0}},
				Sample{Name: "scalar", Inputs: []Gen{G(F32)}, Attrs: Attrs{"axis": -1}}),
		},
		&OpDef{
			Name: "cumprod", Category: "reduce", Doc: "Running product along axis (bool and small integers multiply as i64).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "axis", Kind: AttrInt, Required: true, Doc: "axis to scan"}},
			Infer:  inferScan,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				return []*Tensor{call1("_cumprod_grad", g.Attrs, g.Inputs[0], g.Grads[0])}, nil
			},
			Samples: scanSamples(
				Sample{Name: "zeros", Inputs: []Gen{GV(F64, []float64{1.5, 0, 2, -1, 0, 0.5, 0.75, 2, -1.25, 3}, 2, 5)}, Attrs: Attrs{"axis": 1}}),
		},
		anyAllDef("any", "True where any element over axes is non-zero (NaN counts as non-zero); any dtype."),
		anyAllDef("all", "True where every element over axes is non-zero (NaN counts as non-zero); any dtype."),
	)
	registerReduceGrads()
}

func extremeDef(name, doc string) *OpDef {
	return &OpDef{
		Name: name, Category: "reduce", Doc: doc,
		Inputs: []InputSpec{{Name: "x"}}, Attrs: reduceAttrs(), Infer: inferReduceNoIdentity,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			// Ties share the gradient evenly, as torch.amax/amin do.
			x := g.Inputs[0]
			share := call1("_extreme_grad", Attrs{"axes": g.Attrs["axes"]}, x, ExpandReduced(g.Outputs[0], x, g.Attrs))
			return []*Tensor{call1("mul", nil, share, ExpandReduced(g.Grads[0], x, g.Attrs))}, nil
		},
		Samples: reduceSamples(
			Sample{Name: "ties", Inputs: []Gen{GV(F32, []float64{1, 3, 3, -2, -2, 0}, 2, 3)}, Attrs: Attrs{"axes": []int{1}}, NoGrad: true},
			Sample{Name: "special", Inputs: []Gen{G(F32, 3, 8).WithKind("special")}, Attrs: Attrs{"axes": []int{1}}, NoGrad: true},
			Sample{Name: "i64", Inputs: []Gen{GI(I64, -1000, 1000, 3, 4)}, Attrs: Attrs{"axes": []int{0}}},
			Sample{Name: "u8", Inputs: []Gen{GI(U8, 0, 255, 8)}},
			Sample{Name: "bool", Inputs: []Gen{reduceBoolGen(2, 3)}, Attrs: Attrs{"axes": []int{1}}},
			Sample{Name: "bf16", Inputs: []Gen{G(BF16, 2, 4)}, Attrs: Attrs{"axes": []int{1}}},
			Sample{Name: "empty_kept", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axes": []int{1}}}),
	}
}

func argExtremeDef(name, doc string) *OpDef {
	return &OpDef{
		Name: name, Category: "reduce", Doc: doc,
		Inputs: []InputSpec{{Name: "x", DTypes: numeric}},
		Attrs: []AttrSpec{
			{Name: "axis", Kind: AttrInt, Doc: "axis to search; absent searches the flattened tensor"},
			{Name: "keepdim", Kind: AttrBool, Default: false, Doc: "keep the searched axis (or every axis, when flattened) as size 1"},
		},
		Infer: inferArgReduce,
		Samples: []Sample{
			{Name: "flat", Inputs: []Gen{G(F32, 3, 4)}},
			{Name: "flat_keepdim", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"keepdim": true}},
			{Name: "axis1", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"axis": 1}},
			{Name: "neg_axis_keepdim", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"axis": -3, "keepdim": true}},
			{Name: "strided", Inputs: []Gen{G(F32, 4, 5).AsStrided()}, Attrs: Attrs{"axis": 0}},
			{Name: "ties", Inputs: []Gen{GV(F64, []float64{1, 3, 3, -2, -2, 0, 5, 5}, 2, 4)}, Attrs: Attrs{"axis": 1}},
			{Name: "special", Inputs: []Gen{G(F32, 3, 8).WithKind("special")}, Attrs: Attrs{"axis": 1}},
			{Name: "i32", Inputs: []Gen{GI(I32, -3, 3, 4, 3)}, Attrs: Attrs{"axis": 0}},
		},
	}
}

func momentSamples() []Sample {
	return reduceSamples(
		Sample{Name: "population", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"axes": []int{1}, "correction": 0}},
		Sample{Name: "half_correction", Inputs: []Gen{G(F32, 2, 7)}, Attrs: Attrs{"axes": []int{1}, "correction": 0.5}},
		Sample{Name: "correction2", Inputs: []Gen{G(F64, 2, 6)}, Attrs: Attrs{"axes": []int{-1}, "correction": 2, "keepdim": true}},
		Sample{Name: "f16", Inputs: []Gen{G(F16, 2, 5)}, Attrs: Attrs{"axes": []int{1}}},
		Sample{Name: "special", Inputs: []Gen{G(F32, 2, 8).WithKind("special")}, Attrs: Attrs{"axes": []int{1}}, NoGrad: true})
}

func anyAllDef(name, doc string) *OpDef {
	return &OpDef{
		Name: name, Category: "reduce", Doc: doc,
		Inputs: []InputSpec{{Name: "x"}}, Attrs: reduceAttrs(), Infer: inferReduceBool,
		Samples: []Sample{
			{Name: "bool", Inputs: []Gen{reduceBoolGen(3, 4)}, Attrs: Attrs{"axes": []int{1}}},
			{Name: "all_axes", Inputs: []Gen{reduceBoolGen(2, 3)}},
			{Name: "floats", Inputs: []Gen{GV(F32, []float64{0, 0, 0, 1.5, math.NaN(), 0, math.Copysign(0, -1), 2, 3}, 3, 3)}, Attrs: Attrs{"axes": []int{0}, "keepdim": true}},
			{Name: "ints_strided", Inputs: []Gen{GI(I32, 0, 2, 4, 3).AsStrided()}, Attrs: Attrs{"axes": []int{-1}}},
			{Name: "u8", Inputs: []Gen{GV(U8, []float64{0, 0, 7, 1, 255, 0}, 2, 3)}, Attrs: Attrs{"axes": []int{1}}},
			{Name: "empty", Inputs: []Gen{G(F32, 2, 0)}, Attrs: Attrs{"axes": []int{1}}},
		},
	}
}

// The gradient helpers. They are internal: backward rules call them where no
// composition of public ops gets zeros, ties or norms at zero right.
func registerReduceGrads() {
	MustRegister(
		&OpDef{
			Name: "_prod_grad", Category: "reduce", Internal: true,
			Doc:    "For every element, the product of the other elements over axes (prefix times suffix products, so zeros need no division).",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}},
			Attrs:  []AttrSpec{{Name: "axes", Kind: AttrInts, Doc: "axes of the product; absent means all"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if _, err := NormAxes(a.Ints("axes"), len(in[0].Shape)); err != nil {
					return nil, err
				}
				return InferSame(in, a)
			},
			Samples: []Sample{
				{Name: "zeros", Inputs: []Gen{GV(F64, []float64{2, 0, -1.5, 0.5, 0, 0, 3, 1.25, -2}, 3, 3)}, Attrs: Attrs{"axes": []int{1}}},
				{Name: "all", Inputs: []Gen{G(F32, 2, 3)}},
				{Name: "axes", Inputs: []Gen{G(F32, 2, 3, 2).AsStrided()}, Attrs: Attrs{"axes": []int{0, 2}}},
			},
		},
		&OpDef{
			Name: "_extreme_grad", Category: "reduce", Internal: true,
			Doc:    "Share of the gradient of max/min: 1/count where x equals the reduced value v (keepdim shape), else 0.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "v", DTypes: floatsOnly}},
			Attrs:  []AttrSpec{{Name: "axes", Kind: AttrInts, Doc: "reduced axes; absent means all"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if err := checkKeptShape(in[0].Shape, in[1], a, "v"); err != nil {
					return nil, err
				}
				return InferSame(in, a)
			},
			Samples: []Sample{
				{Name: "ties_max", Inputs: []Gen{GV(F32, []float64{1, 3, 3, -2, -2, 0}, 2, 3), GV(F32, []float64{3, 0}, 2, 1)}, Attrs: Attrs{"axes": []int{1}}},
				{Name: "min_all", Inputs: []Gen{GV(F64, []float64{1, -2, 3, -2}, 2, 2), GV(F64, []float64{-2}, 1, 1)}},
			},
		},
		&OpDef{
			Name: "_norm_grad", Category: "reduce", Internal: true,
			Doc:    "Gradient of norm from x, the norm n and its upstream g (both keepdim shape), with PyTorch's conventions at zeros and ties.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "n", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}},
			Attrs: []AttrSpec{{Name: "axes", Kind: AttrInts, Doc: "reduced axes; absent means all"},
				{Name: "ord", Kind: AttrFloat, Default: 2.0, Doc: "order of the norm"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if err := oprules.ValidNormOrd(a.Float("ord")); err != nil {
					return nil, err
				}
				for i, name := range []string{"n", "g"} {
					if err := checkKeptShape(in[0].Shape, in[i+1], a, name); err != nil {
						return nil, err
					}
				}
				return InferSame(in, a)
			},
			Samples: []Sample{
				{Name: "ord2", Inputs: []Gen{GV(F64, []float64{3, 4, -6, 8}, 2, 2), GV(F64, []float64{5, 10}, 2, 1), G(F64, 2, 1)}, Attrs: Attrs{"axes": []int{1}}},
				{Name: "ord1", Inputs: []Gen{GV(F32, []float64{3, -4, 6, 8}, 2, 2), GV(F32, []float64{7, 14}, 2, 1), G(F32, 2, 1)}, Attrs: Attrs{"axes": []int{1}, "ord": 1.0}},
				{Name: "ord_inf_ties", Inputs: []Gen{GV(F64, []float64{3, -8, 4, 8}, 2, 2), GV(F64, []float64{8}, 1, 1), G(F64, 1, 1)}, Attrs: Attrs{"ord": math.Inf(1)}},
			},
		},
		&OpDef{
			Name: "_cumprod_grad", Category: "reduce", Internal: true,
			Doc:    "Gradient of cumprod from x and the upstream g, exact with zeros (no division by x).",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}},
			Attrs:  []AttrSpec{{Name: "axis", Kind: AttrInt, Required: true, Doc: "scanned axis"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if !in[0].Shape.Equal(in[1].Shape) {
					return nil, fmt.Errorf("g has shape %v, x has shape %v", in[1].Shape, in[0].Shape)
				}
				if _, err := oprules.ScanAxis(len(in[0].Shape), a); err != nil {
					return nil, err
				}
				return InferSame(in, a)
			},
			Samples: []Sample{
				{Name: "zeros", Inputs: []Gen{GV(F64, []float64{1.5, 0, 2, -1, 0, 0.5, 0.75, 2, -1.25, 3}, 2, 5), G(F64, 2, 5)}, Attrs: Attrs{"axis": 1}},
				{Name: "axis0", Inputs: []Gen{G(F32, 3, 2), G(F32, 3, 2)}, Attrs: Attrs{"axis": 0}},
			},
		},
	)
}

// checkKeptShape checks that m has the keepdim-reduced shape of x.
func checkKeptShape(x Shape, m Meta, a Attrs, name string) error {
	axes, err := NormAxes(a.Ints("axes"), len(x))
	if err != nil {
		return err
	}
	if want := ReduceShape(x, axes, true); !m.Shape.Equal(want) {
		return fmt.Errorf("%s has shape %v, want %v (x %v reduced over %v with keepdim)", name, m.Shape, want, x, axes)
	}
	return nil
}
