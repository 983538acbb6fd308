package ir

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A linear layer whose weight is a graph input (a compiled training step)
// reads the weight through one dense copy per run, shared by every matmul
// that reads it, with values and gradients equal to eager.
func TestTransposedWeightsAreCopiedDenseOnce(t *testing.T) {
	dev := webgpuOrSkip(t)
	layer := func(in []*core.Tensor) ([]*core.Tensor, error) {
		wt := c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, in[1])
		h := c1("relu", nil, c1("add", nil, c1("matmul", nil, in[0], wt), in[2]))
		return []*core.Tensor{c1("matmul", nil, c1("matmul", nil, h, c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, in[1])), in[1])}, nil
	}
	x, w, b := randnOn(dev, 1, 2, 5, 8), randnOn(dev, 2, 8, 8), randnOn(dev, 3, 8)
	g, err := Trace(layer, x, w, b)
	require.NoError(t, err)
	_, _, _, err = g.Optimize()
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Dense, "one copy of w^T serves both products (CSE merged the transposes)\n%s", g)
	assert.Contains(t, g.String(), "= contiguous(")
	grads := func(run func([]*core.Tensor) ([]*core.Tensor, error)) [][]float64 {
		ins := []*core.Tensor{x.Detach().SetRequiresGrad(true), w.Detach().SetRequiresGrad(true), b.Detach().SetRequiresGrad(true)}
		out, err := run(ins)
		require.NoError(t, err)
		require.NoError(t, c1("sum", nil, c1("square", nil, out[0])).Backward())
		res := [][]float64{values(t, out[0])}
		for _, v := range ins {
			res = append(res, values(t, v.Grad()))
		}
		return res
	}
	want := grads(layer)
	got := grads(func(in []*core.Tensor) ([]*core.Tensor, error) { return g.Run(in...) })
	for k := range want {
		for i := range want[k] {
			assert.InDelta(t, want[k][i], got[k][i], 1e-4*(1+math.Abs(want[k][i])), "output/gradient %d element %d", k, i)
		}
	}
	// The CPU packs strided operands itself: no copies there.
	cg, err := Trace(layer, randn(1, 2, 5, 8), randn(2, 8, 8), randn(3, 8))
	require.NoError(t, err)
	n, err := cg.DenseMatmulOperands(core.CPU)
	require.NoError(t, err)
	assert.Zero(t, n)
}
