package core

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/oprules"
)

// normalize: x / max(norm_p(x) along axis, eps), as
// torch.nn.functional.normalize. Its GPU kernel is a row body (shape E of
// docs/adding-an-op.md): a row is the axis' elements of one position of
// the others, strided by the elements after the axis.

func init() {
	MustRegister(&OpDef{
		Name: "normalize", Category: "norm",
		Doc:    "x divided by its p-norm along axis, at least eps: x / max(norm(x, p, axis), eps), as torch.nn.functional.normalize.",
		Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}},
		Attrs: []AttrSpec{
			{Name: "p", Kind: AttrFloat, Default: 2.0, Doc: "order of the norm: 0 (count of non-zeros), p > 0, inf or -inf"},
			{Name: "axis", Kind: AttrInt, Default: 1, Doc: "the axis whose vectors are normalised (PyTorch's dim)"},
			{Name: "eps", Kind: AttrFloat, Default: 1e-12, Doc: "the smallest divisor, for vectors of norm near zero"},
		},
		Infer:    inferNormalize,
		Backward: normalizeBackward,
		GPUBody:  &ElementBody{Rows: normalizeRows, Body: normalizeBody},
		Samples: []Sample{
			{Name: "default", Inputs: []Gen{G(F32, 3, 4)}},
			{Name: "last_axis_3d", Inputs: []Gen{G(F32, 2, 3, 5)}, Attrs: Attrs{"axis": -1}},
			{Name: "middle_axis_p1", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"axis": 1, "p": 1.0}},
			{Name: "f64_axis_neg2", Inputs: []Gen{G(F64, 2, 3, 4)}, Attrs: Attrs{"axis": -2}},
			{Name: "first_axis_p3", Inputs: []Gen{G(F32, 4, 3)}, Attrs: Attrs{"axis": 0, "p": 3.0}},
			{Name: "inf", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"p": math.Inf(1)}},
			{Name: "neg_inf_no_zeros", Inputs: []Gen{GV(F32, []float64{1, -2, 0.5, 3, -1.5, 2}, 2, 3)}, Attrs: Attrs{"p": math.Inf(-1)}},
			{Name: "p0", Inputs: []Gen{GV(F32, []float64{0, 1.5, 0, -2, 3, 0}, 2, 3)}, Attrs: Attrs{"p": 0.0}, NoGrad: true},
			{Name: "zero_row_eps", Inputs: []Gen{GV(F32, []float64{0, 0, 0, 3, -4, 0}, 2, 3)}, Attrs: Attrs{"eps": 0.5}},
			{Name: "strided", Inputs: []Gen{G(F32, 5, 3).AsStrided()}},
			{Name: "long_rows", Inputs: []Gen{G(F32, 2, 300)}},
			{Name: "f16", Inputs: []Gen{G(F16, 3, 8)}, Attrs: Attrs{"axis": -1}},
			{Name: "special", Inputs: []Gen{G(F32, 2, 8).WithKind("special")}, NoGrad: true},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 4)}},
		},
	})
}

func inferNormalize(in []Meta, a Attrs) ([]Meta, error) {
	if err := oprules.ValidNormOrd(a.Float("p")); err != nil {
		return nil, err
	}
	if _, err := oprules.NormAxis(a.Int("axis"), in[0].Shape.Rank()); err != nil {
		return nil, fmt.Errorf("axis: %w", err)
	}
	return InferSame(in, a)
}

// normalizeBackward: y = x/d with d = max(n, eps) gives dx = g/d - [n > eps]
// * dn/dx * sum(g*y)/d along the axis, dn/dx being norm's own gradient.
func normalizeBackward(c *GradCtx) ([]*Tensor, error) {
	x, g, y := c.Inputs[0], c.Grads[0], c.Outputs[0]
	axes := []int{c.Attrs.Int("axis")}
	eps := Scalar(c.Attrs.Float("eps"), x.DType(), x.Device())
	n := call1("norm", Attrs{"axes": axes, "ord": c.Attrs.Float("p"), "keepdim": true}, x)
	d := call1("maximum", nil, n, eps)
	s := call1("sum", Attrs{"axes": axes, "keepdim": true}, g.Mul(y)).Div(d)
	s = call1("where", nil, n.Gt(eps), s, Scalar(0, x.DType(), x.Device()))
	dn := call1("_norm_grad", Attrs{"axes": axes, "ord": c.Attrs.Float("p")}, x, n, s)
	return []*Tensor{g.Div(d).Sub(dn)}, nil
}

// normalizeRows is the number of vectors along axis: every element but the
// axis' own.
func normalizeRows(ins []Shape, _ Shape, a Attrs) int {
	axis, _ := oprules.NormAxis(a.Int("axis"), ins[0].Rank())
	if ins[0][axis] == 0 {
		return 0
	}
	return ins[0].Numel() / ins[0][axis]
}

// normalizeBody: the row's vector starts at (row / inner) * n * inner +
// row % inner and steps by inner (the elements after the axis); the lanes
// find its norm together - a sum of |x|^p, a count of non-zeros, or the
// largest or smallest |x| - and each divides its share. The axis travels
// in a slot (negative counts from the end), so one kernel serves every
// axis and shape of a rank.
func normalizeBody(t BodyTypes, a Attrs, s BodySlots) string {
	p := a.Float("p")
	s.SetF(0, p)
	s.SetF(1, a.Float("eps"))
	s.SetI(2, int64(a.Int("axis")))
	f := t.Float
	start, combine, finish := "0.0", "row_sum(acc)", "total"
	var each string
	switch {
	case math.IsInf(p, 1):
		each, combine = "acc = max(acc, abs(v));", "row_max(acc)"
	case math.IsInf(p, -1):
		// Above every finite |x| of the compute type.
		each, combine, start = "acc = min(acc, abs(v));", "row_min(acc)", map[string]string{"f64": "1.0e308"}[f]
		if start == "" {
			start = "3.0e38"
		}
	case p == 0:
		each = "acc += select(0.0, 1.0, v != 0.0);"
	case p == 1:
		each = "acc += abs(v);"
	case p == 2:
		each, finish = "acc += v * v;", "sqrt(total)"
	default:
		each, finish = "acc += pow(abs(v), "+f+"(pf(0u)));", "pow(total, 1.0 / "+f+"(pf(0u)))"
	}
	return `
	let axis = u32(select(pi(2u), i32(rank0) + pi(2u), pi(2u) < 0));
	let n = dim0(axis);
	var inner = 1u;
	for (var d = axis + 1u; d < rank0; d++) {
		inner *= dim0(d);
	}
	let base = (row / inner) * n * inner + row % inner;
	var acc: ` + f + ` = ` + start + `;
	for (var j = lane; j < n; j += lanes) {
		let v = x0(base + j * inner);
		` + each + `
	}
	let total = ` + combine + `;
	let raw = ` + finish + `;
	let norm = select(max(raw, ` + f + `(pf(1u))), raw, is_nan(raw));
	for (var j = lane; j < n; j += lanes) {
		store(base + j * inner, x0(base + j * inner) / norm);
	}`
}
