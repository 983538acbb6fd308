package core

import "fmt"

// tril and triu: the lower or upper triangle of the last two dims, the
// rest zero (torch.tril/triu, numpy.tril/triu). Their GPU kernels are one
// body (GPUBody): element i keeps its value when its column minus its row
// is on the kept side of the diagonal.

func init() {
	MustRegister(triangleDef("tril", "<=", "lower", "below"), triangleDef("triu", ">=", "upper", "above"))
}

// maxTriangleDiagonal bounds the diagonal attribute as the kernels read
// it (an i32 slot on WebGPU): past any matrix's side, a larger one keeps
// or zeroes the same elements.
const maxTriangleDiagonal = 1 << 30

func triangleDef(name, keep, half, side string) *OpDef {
	return &OpDef{
		Name: name, Category: "linalg",
		Doc: fmt.Sprintf("The %s triangle of the last two dims, the rest zero: element (r, c) is kept where c - r %s diagonal "+
			"(diagonal > 0 also keeps that many diagonals %s the main one).", half, keep, side),
		Inputs: []InputSpec{{Name: "x"}}, Outputs: []string{"y"},
		Attrs: []AttrSpec{{Name: "diagonal", Kind: AttrInt, Default: 0, Doc: "which diagonal bounds the triangle: 0 the main one, > 0 above it, < 0 below"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			if len(in[0].Shape) < 2 {
				return nil, fmt.Errorf("x has shape %v: want at least 2 dims (..., rows, cols)", in[0].Shape)
			}
			return InferSame(in, a)
		},
		// The triangle of the gradient: the zeroed elements have none.
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			return []*Tensor{call1(name, g.Attrs, g.Grads[0])}, nil
		},
		GPUBody: &ElementBody{Body: func(t BodyTypes, a Attrs, s BodySlots) string {
			s.SetI(0, int64(max(-maxTriangleDiagonal, min(a.Int("diagonal"), maxTriangleDiagonal))))
			return `
	let cols = odim(orank - 1u);
	let col = i32(i % cols);
	let row = i32((i / cols) % odim(orank - 2u));
	if (col - row ` + keep + ` i32(pi(0u))) {
		return x0v(i);
	}
	return ` + t.Out + `(0);`
		}},
		Samples: []Sample{
			{Name: "square", Inputs: []Gen{G(F32, 4, 4)}},
			{Name: "wide_above", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"diagonal": 2}},
			{Name: "tall_below_batched", Inputs: []Gen{G(F32, 2, 5, 3)}, Attrs: Attrs{"diagonal": -1}},
			{Name: "past_the_edge", Inputs: []Gen{G(F32, 3, 3)}, Attrs: Attrs{"diagonal": -7}},
			{Name: "strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}, Attrs: Attrs{"diagonal": 1}},
			{Name: "f64", Inputs: []Gen{G(F64, 2, 3)}, Attrs: Attrs{"diagonal": -1}},
			{Name: "i64", Inputs: []Gen{GI(I64, -1000, 1000, 2, 3, 3)}},
			{Name: "f16", Inputs: []Gen{G(F16, 3, 2)}},
			{Name: "bool", Inputs: []Gen{GV(Bool, []float64{1, 0, 1, 1, 1, 0, 0, 1, 1}, 3, 3)}, Attrs: Attrs{"diagonal": 1}},
			{Name: "empty", Inputs: []Gen{G(F32, 2, 0, 3)}},
		},
	}
}
