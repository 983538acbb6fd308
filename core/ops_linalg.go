package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// Linear algebra: matmul with torch.matmul's rules for 1-D operands and
// broadcast batch dims, and the outer product. Einsum lives in ops_linalg_einsum.go.

func inferMatmul(in []Meta, _ Attrs) ([]Meta, error) {
	d, err := oprules.PlanMatmul(in[0].Shape, in[1].Shape)
	if err != nil {
		return nil, err
	}
	return []Meta{{Shape: d.Out, DType: in[0].DType}}, nil
}

// matmulBackward works on the matrix forms (vectors as 1 x K and K x 1):
// dA = G Bᵀ and dB = Aᵀ G, summed over the batch dims an operand was
// broadcast along, then reshaped back to the operand. A matrix B under a
// batched A takes its gradient as one product over all of A's rows.
// transposedMatrix reports whether t is the transpose of a contiguous
// matrix (strides [1, rows]).
func transposedMatrix(t *Tensor) bool {
	return t.Rank() == 2 && t.shape[0] > 1 && t.shape[1] > 1 && t.strides[0] == 1 && t.strides[1] == t.shape[0]
}

func matmulBackward(g *GradCtx) ([]*Tensor, error) {
	a, b := g.Inputs[0], g.Inputs[1]
	d, err := oprules.PlanMatmul(a.shape, b.shape)
	if err != nil {
		return nil, err
	}
	a2, b2 := a, b
	if d.AVec {
		a2 = a.Reshape(Shape{1, d.K})
	}
	if d.BVec {
		b2 = b.Reshape(Shape{d.K, 1})
	}
	g2 := g.Grads[0].Reshape(d.MatrixShape())
	res := make([]*Tensor, 2)
	if g.Need[0] {
		ga := call1("matmul", nil, g2, call1("transpose", nil, b2))
		res[0] = SumToShape(ga, a2.shape).Reshape(a.shape)
	}
	if g.Need[1] {
		if b2.Rank() == 2 && a2.Rank() >= 2 && (a2.Rank() > 2 || transposedMatrix(b2)) {
			// A batched input times one matrix (a linear layer): the batch
			// sum is part of one product's inner dimension, Aᵀ G over all
			// rows, instead of one product per batch entry and then a sum.
			rows := a2.Numel() / d.K
			a2r, g2r := a2.Reshape(Shape{rows, d.K}), g2.Reshape(Shape{rows, b2.shape[1]})
			if transposedMatrix(b2) {
				// b is a weight's transpose (x @ Wᵀ): (Gᵀ A)ᵀ is the same
				// product laid out as b, so W's gradient arrives contiguous
				// and the optimiser reads it densely (the MLP step's Adam
				// ran its chain over strided gradients otherwise).
				gbt := call1("matmul", nil, call1("transpose", nil, g2r), a2r)
				res[1] = call1("transpose", nil, gbt) // b2 is b: a matrix
			} else {
				res[1] = call1("matmul", nil, call1("transpose", nil, a2r), g2r).Reshape(b.shape)
			}
		} else {
			gb := call1("matmul", nil, call1("transpose", nil, a2), g2)
			res[1] = SumToShape(gb, b2.shape).Reshape(b.shape)
		}
	}
	return res, nil
}

func init() {
	MustRegister(
		&OpDef{
			Name: "matmul", Category: "linalg",
			Doc:    "Matrix product with torch.matmul's rules: 1-D operands act as vectors, leading dims broadcast as batch dims.",
			Inputs: []InputSpec{{Name: "a", DTypes: numeric}, {Name: "b", DTypes: numeric}}, Outputs: []string{"y"},
			Promote: true, Infer: inferMatmul, Backward: matmulBackward, TolScale: 2,
			Samples: []Sample{
				{Name: "mm", Inputs: []Gen{G(F32, 3, 4), G(F32, 4, 5)}},
				{Name: "vec_vec", Inputs: []Gen{G(F32, 6), G(F32, 6)}},
				{Name: "mat_vec", Inputs: []Gen{G(F32, 3, 4), G(F32, 4)}},
				{Name: "vec_batched", Inputs: []Gen{G(F32, 4), G(F32, 2, 4, 3)}},
				{Name: "batch_broadcast", Inputs: []Gen{G(F32, 2, 1, 3, 2), G(F32, 3, 2, 4)}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 2, 3, 5).AsStrided()}},
				{Name: "f64", Inputs: []Gen{G(F64, 5, 6), G(F64, 6, 2)}},
				{Name: "i32_mixed", Inputs: []Gen{GI(I32, -9, 9, 3, 4), GI(I64, -9, 9, 4, 2)}},
				{Name: "bf16", Inputs: []Gen{G(BF16, 2, 8), G(BF16, 8, 3)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3, 4)}},
				{Name: "zero_inner", Inputs: []Gen{G(F32, 2, 0), G(F32, 0, 3)}},
				{Name: "c64", Inputs: []Gen{G(C64, 3, 4), G(C64, 4, 2)}},
			},
		},
		&OpDef{
			Name: "outer", Category: "linalg", Doc: "Outer product of two 1-D tensors: y[i, j] = a[i] * b[j].",
			Inputs: []InputSpec{{Name: "a", DTypes: numeric}, {Name: "b", DTypes: numeric}}, Outputs: []string{"y"},
			Promote: true,
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				if len(in[0].Shape) != 1 || len(in[1].Shape) != 1 {
					return nil, fmt.Errorf("operands must be 1-D, got shapes %v and %v", in[0].Shape, in[1].Shape)
				}
				return []Meta{{Shape: Shape{in[0].Shape[0], in[1].Shape[0]}, DType: in[0].DType}}, nil
			},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				a, b, gr := g.Inputs[0], g.Inputs[1], g.Grads[0]
				res := make([]*Tensor, 2)
				if g.Need[0] {
					res[0] = call1("matmul", nil, gr, b)
				}
				if g.Need[1] {
					res[1] = call1("matmul", nil, a, gr)
				}
				return res, nil
			},
			Samples: []Sample{
				{Name: "typical", Inputs: []Gen{G(F32, 3), G(F32, 4)}},
				{Name: "strided", Inputs: []Gen{G(F32, 5).AsStrided(), G(F32, 2)}},
				{Name: "f64", Inputs: []Gen{G(F64, 4), G(F64, 4)}},
				{Name: "size1", Inputs: []Gen{G(F32, 1), G(F32, 6)}},
				{Name: "i32", Inputs: []Gen{GI(I32, -50, 50, 3), GI(I32, -50, 50, 2)}},
				{Name: "f16_mixed", Inputs: []Gen{G(F16, 3), G(F32, 2)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0), G(F32, 3)}},
				{Name: "special", Inputs: []Gen{G(F32, 8).WithKind("special"), G(F32, 3)}, NoGrad: true},
			},
		},
	)
}
