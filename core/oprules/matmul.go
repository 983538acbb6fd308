package oprules

import "fmt"

// torch.matmul's shape rules: 1-D operands and broadcast batch dims.

// MatmulDims is the shape logic of torch.matmul: a 1-D left operand is a row
// vector and a 1-D right operand a column vector, whose added dim is dropped
// from the result again; the dims before the last two broadcast.
type MatmulDims struct {
	Batch      Shape // broadcast batch dims
	M, K, N    int
	AVec, BVec bool // operand a (b) was 1-D
	Out        Shape
}

// MatrixShape is the product's shape with the vector dims kept: Batch+[M, N].
func (d MatmulDims) MatrixShape() Shape { return append(d.Batch.Clone(), d.M, d.N) }

// PlanMatmul checks two operand shapes and returns the product's dims.
func PlanMatmul(a, b Shape) (MatmulDims, error) {
	var d MatmulDims
	if len(a) == 0 || len(b) == 0 {
		return d, fmt.Errorf("both operands need at least 1 dim, got shapes %v and %v", a, b)
	}
	a2, b2 := a, b
	if len(a) == 1 {
		a2, d.AVec = Shape{1, a[0]}, true
	}
	if len(b) == 1 {
		b2, d.BVec = Shape{b[0], 1}, true
	}
	ra, rb := len(a2), len(b2)
	d.M, d.K, d.N = a2[ra-2], a2[ra-1], b2[rb-1]
	if b2[rb-2] != d.K {
		return d, fmt.Errorf("inner dims differ: %v x %v (%d != %d)", a, b, d.K, b2[rb-2])
	}
	batch, err := BroadcastShapes(a2[:ra-2], b2[:rb-2])
	if err != nil {
		return d, fmt.Errorf("batch dims of %v and %v do not broadcast: %w", a, b, err)
	}
	d.Batch = batch
	d.Out = batch.Clone()
	if !d.AVec {
		d.Out = append(d.Out, d.M)
	}
	if !d.BVec {
		d.Out = append(d.Out, d.N)
	}
	return d, nil
}
