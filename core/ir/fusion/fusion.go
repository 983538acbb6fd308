package fusion

import "github.com/webtensor/webtensor/core"

// Expr is a tree of elementwise ops over numbered inputs: a leaf has
// Op "" and reads input Arg (broadcast to the result's shape), a constant
// has Op Const and its Value, an inner node applies the registry op Op
// to Args. Graph compilers (core/ir) hand such trees to a backend that can
// run them as one kernel.
type Expr struct {
	Op    string
	Attrs core.Attrs // Op's attributes as called (gelu's approximate)
	Arg   int
	Args  []*Expr
	Value float64
}

// Const is the Op of a constant leaf of an Expr (gradient trees
// need them: d/dx log1p(x) = 1 / (x + 1)).
const Const = "const"

// MapFuser is implemented by backends that run an Expr as one kernel
// (one pass over memory instead of one per op). Fusable says whether op,
// called with attrs, can appear in a tree; FuseMap computes the tree over inputs into a new tensor
// of the given shape. Neither records autograd: callers fuse only where no
// gradient is needed.
type MapFuser interface {
	Fusable(op string, attrs core.Attrs, dtype core.DType) bool
	FuseMap(e *Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) (*core.Tensor, error)
}

// ExactFuser is a MapFuser whose fused trees round exactly as the chain of
// their ops run one by one on the same backend (IEEE operations, no
// contraction of a*b+c), so a caller may fuse without changing a single
// bit - an optimiser step, which every SDK must compute identically.
type ExactFuser interface {
	MapFuser
	FusesExactly() bool
}

// EpilogueFuser is implemented by backends that fold an elementwise tree
// into the store of a producing op such as matmul or spmm (an epilogue:
// bias, activation, residual), so the product is never written and read
// back. TakesEpilogue names the ops that can take one. In e, input 0 is the
// op's output and input i > 0 is extras[i-1], broadcast to that output's
// shape. Like MapFuser it records no autograd.
type EpilogueFuser interface {
	MapFuser
	TakesEpilogue(op string) bool
	FuseEpilogue(op string, inputs []*core.Tensor, attrs core.Attrs, e *Expr, extras []*core.Tensor) (*core.Tensor, error)
}

// PackedWeight is a constant right-hand matrix a backend packed once
// (WeightPacker); Weight is the matrix itself.
type PackedWeight interface {
	Weight() *core.Tensor
}

// WeightPacker is implemented by backends whose product can read a
// constant weight packed once instead of packing it on every call (the
// CPU's blocked gemm packs B per call). Only a caller that knows the weight
// is never written may pack it: the packed copy does not follow changes.
type WeightPacker interface {
	PackWeight(w *core.Tensor) (PackedWeight, error)
	FuseEpiloguePacked(a *core.Tensor, w PackedWeight, e *Expr, extras []*core.Tensor) (*core.Tensor, error)
}

// EpiloguePairFuser is implemented by backends whose producer can store two
// trees over its output at once (a pre-activation that the backward pass
// needs, and its activation): FuseEpiloguePair is FuseEpilogue with a
// second tree, also, over the same inputs, returned as the second tensor.
type EpiloguePairFuser interface {
	EpilogueFuser
	TakesEpiloguePair(op string) bool
	FuseEpiloguePair(op string, inputs []*core.Tensor, attrs core.Attrs, e, also *Expr, extras []*core.Tensor) (*core.Tensor, *core.Tensor, error)
}

// ReduceFuser is implemented by backends that run an elementwise tree as
// the prologue of a reduction (sum(x * y), mean(square(x - m))), so the
// tree's result is never written. FusableReduction names the reduction ops;
// FuseReduce reduces the tree - over inputs broadcast to shape - with op
// and its attrs. Like MapFuser it records no autograd.
type ReduceFuser interface {
	MapFuser
	FusableReduction(op string) bool
	FuseReduce(op string, attrs core.Attrs, e *Expr, inputs []*core.Tensor, shape core.Shape) (*core.Tensor, error)
}

// ColumnSumFuser is implemented by backends whose weight-gradient product
// x^T @ g can also return the sums of g's columns - the bias gradient
// beside the weight gradient - from the same pass over g.
// MatmulColumnSums returns a @ b and b's column sums ([N]); an error says
// it cannot for these operands, and the caller runs the two ops instead.
type ColumnSumFuser interface {
	MatmulColumnSums(a, b *core.Tensor) (*core.Tensor, *core.Tensor, error)
}

// AttentionTransposer is implemented by backends whose attention can write
// its output [B, H, L, Ev] already transposed into contiguous [B, L, H, Ev]
// memory, as the projection after multi-head attention reads it.
// AttentionTransposed takes scaled_dot_product_attention's operands and
// attributes; an error says it cannot for these, and the caller runs the
// op and the transpose instead.
type AttentionTransposer interface {
	AttentionTransposed(q, k, v, mask *core.Tensor, attrs core.Attrs) (*core.Tensor, error)
}

// MultiMapFuser is implemented by backends that run several trees over the
// same inputs as one kernel: each element's thread evaluates every tree and
// stores one output per tree, so an optimiser step (a parameter, its
// moments) reads its inputs once and launches once per parameter. Inputs
// are broadcast to shape; the outputs are new contiguous tensors of shape
// and dtype. Trees round as MapFuser's do: exactly as their op chains on a
// backend whose FusesExactly is true (an ExactFuser, or the CPU backend,
// which is the reference the chains define). An error means the backend
// cannot run these trees (an op it does not fuse, too many buffers for one
// kernel, a dtype it does not fuse) and the caller runs the op chain.
type MultiMapFuser interface {
	FuseMaps(trees []*Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) ([]*core.Tensor, error)
	FusesExactly() bool
}
