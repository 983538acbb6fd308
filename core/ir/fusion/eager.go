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

// MapOnCPU is the tree e over inputs (broadcast together) computed in one
// pass by the CPU backend's fused map, for eager code on the CPU with no
// gradient to record and no tracer, or nil where that does not apply (the
// caller then runs the ops). The CPU's fused map rounds as its ops do
// (fusion.ExactFuser), so the bits are the op chain's; it reads strided
// views such as slices of a row in place.
func MapOnCPU(e *Expr, inputs ...*core.Tensor) *core.Tensor {
	b := eagerCPU(inputs)
	mf, ok := b.(MapFuser)
	if !ok {
		return nil
	}
	shapes := make([]core.Shape, len(inputs))
	for i, t := range inputs {
		if t.DType() != core.F32 {
			return nil
		}
		shapes[i] = t.Shape()
	}
	shape, err := core.BroadcastShapes(shapes...)
	if err != nil {
		return nil
	}
	y, err := mf.FuseMap(e, inputs, shape, core.F32)
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

// AttentionTransposedOnCPU is scaled_dot_product_attention of q, k, v
// [B, H, L, E] (mask nil or broadcasting to the scores) with its output
// transposed to contiguous [B, L, H, Ev], through the CPU backend's
// AttentionTransposer: the heads merged as the kernel stores them, where
// the op and a permute would copy the whole output once more. nil where it
// does not apply (see MatmulEpilogueOnCPU); the caller runs the ops.
func AttentionTransposedOnCPU(q, k, v, mask *core.Tensor, attrs core.Attrs) *core.Tensor {
	ts := []*core.Tensor{q, k, v}
	if mask != nil {
		ts = append(ts, mask)
	}
	at, ok := eagerCPU(ts).(AttentionTransposer)
	if !ok {
		return nil
	}
	y, err := at.AttentionTransposed(q, k, v, mask, attrs)
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

// BiasResidualAdd is the epilogue ($0 + $1) + $2: a product, its bias and a
// residual, the order of a linear layer's output plus the residual.
var BiasResidualAdd = &Expr{Op: "add", Args: []*Expr{BiasAdd, {Arg: 2}}}
