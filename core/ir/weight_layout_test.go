package ir

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A constant weight read in either layout gives the product it gave before,
// plain and with an epilogue; the measured choice keeps results too, and
// with timing off (WEBTENSOR_TUNE=off) nothing is measured or changed.
func TestWeightLayoutsKeepResults(t *testing.T) {
	dev := webgpuOrSkip(t)
	core.EnterNoGrad()
	defer func() { require.NoError(t, core.ExitNoGrad()) }()
	w, w2, bias := randnOn(dev, 2, 12, 16), randnOn(dev, 4, 12, 16), randnOn(dev, 3, 12)
	x := randnOn(dev, 1, 40, 16)
	tr := core.Attrs{"dim0": 0, "dim1": 1}
	linear := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("matmul", nil, in[0], c1("transpose", tr, w))
		z := c1("matmul", nil, in[0], c1("transpose", tr, w2))
		return []*core.Tensor{y, c1("relu", nil, c1("add", nil, z, bias))}, nil
	}
	want, err := linear([]*core.Tensor{x})
	require.NoError(t, err)
	trace := func() *Graph {
		g, err := Trace(linear, x)
		require.NoError(t, err)
		_, err = g.OptimizeStats()
		require.NoError(t, err)
		return g
	}
	check := func(g *Graph) {
		t.Helper()
		got, err := g.Run(x)
		require.NoError(t, err)
		requireClose(t, want, got, 1e-4)
	}

	g := trace()
	_, err = g.FuseEpilogues(dev)
	require.NoError(t, err)
	swapped := 0
	for _, n := range g.Nodes { // every product reads the other layout
		if wv, ok := constWeight(n); ok {
			alt := g.newValue(wv.Shape, wv.DType)
			alt.Const = c1("contiguous", nil, wv.Const.Transpose()).Transpose()
			swapInput(n, wv, alt)
			swapped++
		}
	}
	require.Equal(t, 2, swapped, "%s", g)
	check(g)

	g = trace()
	_, err = g.Fuse(dev)
	require.NoError(t, err)
	check(g)

	t.Setenv("WEBTENSOR_TUNE", "off")
	g = trace()
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	require.Zero(t, rep.Layouts)
}
