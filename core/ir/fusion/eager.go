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
	if core.Tracing() || x.Device() != core.CPU || x.Err() != nil || w.Err() != nil {
		return nil
	}
	grad := core.GradEnabled() && (x.RequiresGrad() || w.RequiresGrad())
	for _, t := range extras {
		if t.Err() != nil {
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

// BiasAdd is the epilogue $0 + $1: a product plus a bias.
var BiasAdd = &Expr{Op: "add", Args: []*Expr{{Arg: 0}, {Arg: 1}}}
