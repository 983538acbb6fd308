package core

// newHeader allocates a tensor header with its shape and strides (copied;
// contiguous strides when strides is nil) beside it in one allocation for
// ranks up to four: every op output and every view is made here, and three
// allocations per tensor (header, shape, strides) were a third of a small
// op's allocations.
//
// The shape and strides slices point into the header's own allocation, so
// anything that keeps them keeps the header, and through it the storage,
// alive: code that outlives the tensor copies them (Shape, Strides, Detach
// and the call observer do).
func newHeader(shape Shape, strides []int) *Tensor {
	n := len(shape)
	var t *Tensor
	var dims []int
	switch {
	case n <= 2:
		p := new(struct {
			Tensor
			dims [4]int
		})
		t, dims = &p.Tensor, p.dims[:2*n]
	case n <= 4:
		p := new(struct {
			Tensor
			dims [8]int
		})
		t, dims = &p.Tensor, p.dims[:2*n]
	default:
		t, dims = new(Tensor), make([]int, 2*n)
	}
	copy(dims, shape)
	st := dims[n : 2*n : 2*n]
	if strides != nil {
		copy(st, strides)
	} else {
		acc := 1
		for i := n - 1; i >= 0; i-- {
			st[i] = acc
			acc *= shape[i]
		}
	}
	t.shape, t.strides = Shape(dims[:n:n]), st
	return t
}
