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
