//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// The graph IR's fusion on CUDA (fusion.MapFuser, fusion.EpilogueFuser): an
// elementwise tree is one map kernel over its leaves, from the same
// lowering the WebGPU backend fuses with (backends/lower); an epilogue runs
// as that kernel over the product cuBLAS wrote, so a bias and activation
// cost one pass instead of one per op.

// Fusable reports whether op may appear in a fused tree (lower.Fusable).
func (b *Backend) Fusable(op string, attrs core.Attrs, dtype core.DType) bool {
	return lower.Fusable(op, attrs, dtype)
}

// FusesExactly: kernels are compiled without fused multiply-adds and with
// IEEE division and square root, so a fused tree rounds as its op chain.
func (b *Backend) FusesExactly() bool { return true }

// FuseMap runs the tree as one map kernel over inputs broadcast to shape.
func (b *Backend) FuseMap(e *fusion.Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) (*core.Tensor, error) {
	if dtype != core.F32 {
		return nil, fmt.Errorf("cuda: fused kernels are f32, not %s", dtype)
	}
	for i, t := range inputs {
		if t.DType() != core.F32 || t.Backend() != core.Backend(b) {
			return nil, fmt.Errorf("cuda: fused input %d is %s on %s; f32 on %s only", i, t.DType(), t.Device(), b.Device())
		}
	}
	expr, err := lower.FusedX(e, len(inputs))
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.mapRun("fused", inputs, out, expr, nil); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// FuseMaps runs the trees as one map kernel with one output per tree: an
// optimiser's whole step for a parameter in one launch. Like FuseMap it is
// f32 only (the lowering's dialect); f64 parameters run the op chain. The
// constants travel in the launch's scalar slots (lower.FusedHoisted), so a
// new learning rate or bias correction does not compile a new kernel.
func (b *Backend) FuseMaps(trees []*fusion.Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) ([]*core.Tensor, error) {
	if dtype != core.F32 {
		return nil, fmt.Errorf("cuda: fused kernels are f32, not %s", dtype)
	}
	for i, t := range inputs {
		if t.DType() != core.F32 || t.Backend() != core.Backend(b) {
			return nil, fmt.Errorf("cuda: fused input %d is %s on %s; f32 on %s only", i, t.DType(), t.Device(), b.Device())
		}
	}
	var sc lower.Scalars
	exprs, err := lower.FusedHoisted(trees, len(inputs), &sc)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	outs := make([]*core.Tensor, len(trees))
	release := func() {
		for _, o := range outs {
			if o != nil {
				o.Release()
			}
		}
	}
	for i := range trees {
		if outs[i], err = core.Empty(b, shape, core.F32); err != nil {
			release()
			return nil, err
		}
	}
	if err := b.mapRunOuts("fused", inputs, outs, exprs, &sc, nil); err != nil {
		release()
		return nil, err
	}
	return outs, nil
}

// TakesEpilogue names the producers whose output a fused tree may follow.
func (b *Backend) TakesEpilogue(op string) bool { return op == "matmul" }

// FuseEpilogue computes e over op's output (input 0 of the tree) and extras.
func (b *Backend) FuseEpilogue(op string, inputs []*core.Tensor, attrs core.Attrs, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	if op != "matmul" || len(inputs) != 2 {
		return nil, fmt.Errorf("cuda: %s with %d inputs takes no epilogue", op, len(inputs))
	}
	prod := core.Call1("matmul", attrs, inputs[0], inputs[1])
	if err := prod.Err(); err != nil {
		return nil, err
	}
	defer prod.Release()
	return b.FuseMap(e, append([]*core.Tensor{prod}, extras...), prod.Shape(), core.F32)
}

var (
	_ fusion.ExactFuser    = (*Backend)(nil)
	_ fusion.MultiMapFuser = (*Backend)(nil)
	_ fusion.EpilogueFuser = (*Backend)(nil)
)
