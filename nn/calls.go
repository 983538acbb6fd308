package nn

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Small wrappers over registry ops. Scalars are made in the dtype and on the
// device of the tensor they combine with: core promotes tensors of equal
// standing, so an f64 scalar would silently turn f32 parameters into f64.

func op(name string, a core.Attrs, in ...*core.Tensor) *core.Tensor {
	return core.Call1(name, a, in...)
}

func scalarLike(t *core.Tensor, v float64) *core.Tensor {
	return core.Scalar(v, t.DType(), t.Device())
}

func mulScalar(t *core.Tensor, v float64) *core.Tensor {
	if v == 1 {
		return t
	}
	return op("mul", nil, t, scalarLike(t, v))
}

func addScalar(t *core.Tensor, v float64) *core.Tensor {
	if v == 0 {
		return t
	}
	return op("add", nil, t, scalarLike(t, v))
}

func add(a, b *core.Tensor) *core.Tensor { return op("add", nil, a, b) }
func sub(a, b *core.Tensor) *core.Tensor { return op("sub", nil, a, b) }
func mul(a, b *core.Tensor) *core.Tensor { return op("mul", nil, a, b) }
func div(a, b *core.Tensor) *core.Tensor { return op("div", nil, a, b) }

func transpose(t *core.Tensor, d0, d1 int) *core.Tensor {
	return op("transpose", core.Attrs{"dim0": d0, "dim1": d1}, t)
}

func reshape(t *core.Tensor, shape ...int) *core.Tensor {
	return op("reshape", core.Attrs{"shape": shape}, t)
}

// linear is x @ w^T + b over the last dimension of x (b may be nil).
func linear(x, w, b *core.Tensor) *core.Tensor {
	wt := transpose(w, 0, 1)
	if y := linearFused(x, wt, b); y != nil {
		return y
	}
	y := op("matmul", nil, x, wt)
	if b != nil {
		y = add(y, b)
	}
	return y
}

// linearFused adds the bias in the product's store (the CPU backend's
// matmul epilogue, which gives the bits of matmul then add); nil where
// that does not apply (fusion.MatmulEpilogueOnCPU).
func linearFused(x, wt, b *core.Tensor) *core.Tensor {
	if b == nil {
		return nil
	}
	return fusion.MatmulEpilogueOnCPU(x, wt, fusion.BiasAdd, b)
}

// callMulti runs an op with n outputs. Forward methods report failure through
// the tensor they return, but core.Call returns a plain error and core exports
// no constructor for error tensors; Call1 on the same inputs fails the same
// way and returns the error as a tensor, so the failure path calls it.
func callMulti(name string, a core.Attrs, n int, in ...*core.Tensor) (outs []*core.Tensor, failed *core.Tensor) {
	outs, err := core.Call(name, in, a)
	if err == nil && len(outs) == n {
		return outs, nil
	}
	return nil, op(name, a, in...)
}

// firstFailed returns the first tensor that carries an error.
func firstFailed(ts ...*core.Tensor) *core.Tensor {
	for _, t := range ts {
		if t != nil && t.Err() != nil {
			return t
		}
	}
	return nil
}

// firstErr returns the first error among tensors (nil entries are skipped).
func firstErr(ts ...*core.Tensor) error {
	for _, t := range ts {
		if t == nil {
			continue
		}
		if err := t.Err(); err != nil {
			return err
		}
	}
	return nil
}
