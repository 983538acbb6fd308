package ir

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A linear layer's bias gradient joins its weight gradient's product on
// WebGPU and the step still equals eager; a sum over the other axis (not a
// bias gradient) stays a sum.
func TestBiasGradientRidesOnTheWeightGradient(t *testing.T) {
	dev := webgpuOrSkip(t)
	x, w, b := randnOn(dev, 1, 12, 8), randnOn(dev, 2, 4, 8), randnOn(dev, 3, 4)
	w.SetRequiresGrad(true)
	b.SetRequiresGrad(true)
	step := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("add", nil, c1("matmul", nil, in[0], c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, in[1])), in[2])
		loss := c1("add", nil, c1("sum", nil, c1("square", nil, y)), c1("sum", nil, c1("sum", core.Attrs{"axes": []int{1}}, y)))
		grads, err := core.Gradients(loss, in[1:])
		return append([]*core.Tensor{loss}, grads...), err
	}
	g, err := Trace(step, x, w, b)
	require.NoError(t, err)
	_, err = g.OptimizeStats()
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	require.Equal(t, 1, rep.ColumnSums, "%s", g)
	x2, w2, b2 := randnOn(dev, 4, 12, 8), randnOn(dev, 5, 4, 8), randnOn(dev, 6, 4)
	w2.SetRequiresGrad(true)
	b2.SetRequiresGrad(true)
	_, fellBack := FusionCounts()
	got := replay(t, g, x2, w2, b2)
	_, fellBackAfter := FusionCounts()
	require.Equal(t, fellBack, fellBackAfter, "a fused node ran as its original ops")
	want, err := step([]*core.Tensor{x2, w2, b2})
	require.NoError(t, err)
	for i := range want {
		gv, wv := values(t, got[i]), values(t, want[i])
		require.Len(t, gv, len(wv))
		for j := range wv {
			require.LessOrEqual(t, math.Abs(gv[j]-wv[j]), 1e-4*(1+math.Abs(wv[j])), "output %d element %d", i, j)
		}
	}
}
