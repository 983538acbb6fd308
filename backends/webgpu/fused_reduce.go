package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Reductions with a fused prologue (fusion.ReduceFuser): the elementwise tree
// is evaluated inside the reduction loop on each member of a group, reading
// its leaves through the reduce family's broadcast operand descriptors, so
// sum(x * y) reads x and y once and never writes x * y.

// FusableReduction names the reductions that take a prologue.
func (b *Backend) FusableReduction(op string) bool { return op == "sum" || op == "mean" }

// FuseReduce reduces the tree e, over inputs broadcast to shape, with op.
func (b *Backend) FuseReduce(op string, attrs core.Attrs, e *fusion.Expr, inputs []*core.Tensor, shape core.Shape) (*core.Tensor, error) {
	b.profileOp("fused_reduce_" + op)
	if !b.FusableReduction(op) {
		return nil, fmt.Errorf("webgpu: %s takes no fused prologue", op)
	}
	if len(inputs) == 0 || len(inputs) >= maxFrameOperands {
		return nil, fmt.Errorf("webgpu: fused %s over %d inputs; 1 to %d", op, len(inputs), maxFrameOperands-1)
	}
	for i, t := range inputs {
		if t.DType() != core.F32 || t.Device().Kind != "webgpu" || t.Rank() > len(shape) || !fitsIn(t.Shape(), shape) {
			return nil, fmt.Errorf("webgpu: fused %s input %d is %s%v on %s; f32 on webgpu broadcasting to %v",
				op, i, t.DType(), t.Shape(), t.Device(), shape)
		}
	}
	a, err := core.NormalizeAttrs(op, attrs)
	if err != nil {
		return nil, err
	}
	axes, err := core.NormAxes(a.Ints("axes"), len(shape))
	if err != nil {
		return nil, fmt.Errorf("webgpu: fused %s: %w", op, err)
	}
	expr, err := b.fusedExprNamed(e, len(inputs), func(i int) string { return fmt.Sprintf("v%d(o, r)", i) })
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(b, core.ReduceShape(shape, axes, a.Bool("keepdim")), core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.sumRun(newFrame(shape, axes), inputs, out, expr, sumFinal(op == "mean")); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

var _ fusion.ReduceFuser = (*Backend)(nil)
