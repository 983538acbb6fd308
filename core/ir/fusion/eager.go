package fusion

import "github.com/webtensor/webtensor/core"

// MatmulEpilogueOnCPU is e(x @ w, extras...) through the CPU backend's
// matmul epilogue (EpilogueFuser), for eager code with a fast path (a
// linear layer's bias, an imported model's MatMul and Add): nil where it
// does not apply - an operand elsewhere than the CPU, a tracer watching
// (it would not see the backend's call), a gradient to record (the fused
// store has none), a product the backend refuses - and the caller runs
// the ops.
func MatmulEpilogueOnCPU(x, w *core.Tensor, e *Expr, extras ...*core.Tensor) *core.Tensor {
	b := eagerCPU(append([]*core.Tensor{x, w}, extras...))
	ef, ok := b.(EpilogueFuser)
	if !ok {
		return nil
	}
	y, err := ef.FuseEpilogue("matmul", []*core.Tensor{x, w}, nil, e, extras)
	if err != nil {
		return nil
	}
	return y
}

// MatmulEpiloguePackedOnCPU is MatmulEpilogueOnCPU with a weight the CPU
// backend packed once (PackWeightOnCPU).
func MatmulEpiloguePackedOnCPU(x *core.Tensor, w PackedWeight, e *Expr, extras ...*core.Tensor) *core.Tensor {
	b := eagerCPU(append([]*core.Tensor{x, w.Weight()}, extras...))
	wp, ok := b.(WeightPacker)
	if !ok {
		return nil
	}
	y, err := wp.FuseEpiloguePacked(x, w, e, extras)
	if err != nil {
		return nil
	}
	return y
}

// PackWeightOnCPU packs a constant weight for MatmulEpiloguePackedOnCPU, or
// returns nil where the CPU backend does not pack (or w is not an f32
// matrix on the CPU). The caller promises w is never written.
func PackWeightOnCPU(w *core.Tensor) PackedWeight {
	if w.Device() != core.CPU || w.Err() != nil {
		return nil
	}
	b, err := core.BackendFor(core.CPU)
	if err != nil {
		return nil
	}
	wp, ok := b.(WeightPacker)
	if !ok {
		return nil
	}
	p, err := wp.PackWeight(w)
	if err != nil {
		return nil
	}
	return p
}

// eagerCPU is the CPU backend when an eager fused call may replace the ops
// on ts: all on the CPU, none failed, no tracer (it would not see the
// backend's call) and no gradient to record (the fused call has none).
func eagerCPU(ts []*core.Tensor) core.Backend {
	if core.Tracing() {
		return nil
	}
	grad := false
	for _, t := range ts {
		if t.Device() != core.CPU || t.Err() != nil {
			return nil
		}
		grad = grad || (core.GradEnabled() && t.RequiresGrad())
	}
	if grad {
		return nil
	}
	b, err := core.BackendFor(core.CPU)
	if err != nil {
		return nil
	}
	return b
}

// BiasAdd is the epilogue $0 + $1: a product plus a bias.
var BiasAdd = &Expr{Op: "add", Args: []*Expr{{Arg: 0}, {Arg: 1}}}
