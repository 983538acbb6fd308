package cpu

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/core/oprules"
)

// Matmul epilogues (fusion.EpilogueFuser): the graph IR folds the
// elementwise tree that reads a matmul's product - a linear layer's bias
// and activation, a residual - into the product's store. The packed
// product runs the tree over each block of C as its last k panel is
// stored (gemmEpilogue), while the block is in cache, so the product is
// not written out and read back once per elementwise op.

// TakesEpilogue says which producers FuseEpilogue takes: matmul.
func (*Backend) TakesEpilogue(op string) bool { return op == "matmul" }

// FuseEpilogue computes e(a @ b, extras...) for f32 operands where the
// product is one gemm: two matrices, or a batch of A matrices stacked
// row after row times one B (a linear layer over [batch, tokens,
// features]). Other products are refused and run as their ops.
func (b *Backend) FuseEpilogue(op string, inputs []*core.Tensor, _ core.Attrs, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	if op != "matmul" || len(inputs) != 2 {
		return nil, fmt.Errorf("cpu: no %s epilogue", op)
	}
	return b.fuseEpilogue(inputs[0], inputs[1], nil, e, extras)
}

// fuseEpilogue is FuseEpilogue of a @ w; pre, when not nil, is w packed.
func (b *Backend) fuseEpilogue(a, w *core.Tensor, pre *PackedMatrix, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	if a.DType() != core.F32 || w.DType() != core.F32 || a.Device() != core.CPU || w.Device() != core.CPU {
		return nil, errors.New("cpu: a matmul epilogue takes f32 operands on the CPU")
	}
	d, err := oprules.PlanMatmul(a.Shape(), w.Shape())
	if err != nil {
		return nil, err
	}
	if a.Rank() < 2 || w.Rank() != 2 {
		return nil, errors.New("cpu: a matmul epilogue takes matrices, or a batch of them times one matrix")
	}
	av, la := f32Operand(a, d.M, d.K, true, d.Batch)
	bv, lb := f32Operand(w, d.K, d.N, false, d.Batch)
	rows := d.M * max(len(la.offs), 1)
	if len(la.offs) > 1 && !foldsIntoRows(la, lb, d.M) {
		return nil, errors.New("cpu: a matmul epilogue takes a batch whose matrices stack into one")
	}
	ta, lda, okA := gemmForm(rows, d.K, la.rs, la.cs)
	tb, ldb, okB := gemmForm(d.K, d.N, lb.rs, lb.cs)
	if !okA || !okB || (len(la.offs) > 1 && ta) {
		return nil, errors.New("cpu: a matmul epilogue's operands are not in a layout gemm reads")
	}
	shape := append(append(core.Shape{}, d.Batch...), d.M, d.N)
	nodes, err := compileMap(e, 1+len(extras))
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	if d.K > 0 {
		// A product with beta 0 stores every element of C (with k = 0 some
		// paths write nothing and the cleared block is the answer). The
		// clearing was 6% of MiniLM's CPU time at two threads.
		claimOutput(out)
	}
	leaves := make([]mapLeaf, 1+len(extras))
	if leaves[0], err = newMapLeaf(out, shape); err != nil {
		return nil, err
	}
	for i, t := range extras {
		if leaves[1+i], err = newMapLeaf(t, shape); err != nil {
			return nil, fmt.Errorf("cpu: epilogue input %d: %w", i, err)
		}
	}
	if out.Numel() == 0 {
		return out, nil
	}
	c := f32s(out)
	n := d.N
	epi := func(r0, r1, c0, c1 int) {
		width := c1 - c0
		slots := make([][]float32, len(nodes))
		scratch := make([]float32, len(nodes)*width)
		for r := r0; r < r1; r++ {
			evalMapInto(nodes, leaves, slots, scratch, c, r*n+c0, width)
		}
	}
	gemmF32Finish(true, ta, tb, rows, n, d.K, 1, av[la.offs[0]:], lda, bv[lb.offs[0]:], ldb, 0, c, n, epi, pre)
	return out, nil
}
