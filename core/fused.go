package core

// FusedExpr is a tree of elementwise ops over numbered inputs: a leaf has
// Op "" and reads input Arg (broadcast to the result's shape), an inner
// node applies the registry op Op to Args. Graph compilers (core/ir) hand
// such trees to a backend that can run them as one kernel.
type FusedExpr struct {
	Op   string
	Arg  int
	Args []*FusedExpr
}

// MapFuser is implemented by backends that run a FusedExpr as one kernel
// (one pass over memory instead of one per op). Fusable says whether op can
// appear in a tree; FuseMap computes the tree over inputs into a new tensor
// of the given shape. Neither records autograd: callers fuse only where no
// gradient is needed.
type MapFuser interface {
	Fusable(op string, dtype DType) bool
	FuseMap(e *FusedExpr, inputs []*Tensor, shape Shape, dtype DType) (*Tensor, error)
}

// MatmulFuser is implemented by backends that fold an elementwise tree into
// a matrix product's store (an epilogue: bias, activation, residual). In e,
// input 0 is the product a @ b and input i > 0 is extras[i-1], broadcast to
// the product's shape. Like MapFuser it records no autograd. Both a and b
// must be at least 2-D.
type MatmulFuser interface {
	MapFuser
	FuseMatmul(a, b *Tensor, e *FusedExpr, extras []*Tensor) (*Tensor, error)
}
