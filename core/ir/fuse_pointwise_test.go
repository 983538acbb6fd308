package ir

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Ops described only by their arithmetic (core.Pointwise: asin, hypot,
// logaddexp, ...) fuse into one WebGPU kernel with the built-in ones, from
// the expression their OpDef carries, and give what the ops give one by one.
func TestPointwiseOpsFuse(t *testing.T) {
	dev := webgpuOrSkip(t)
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x, y := in[0], in[1]
		s := c1("asin", nil, c1("tanh", nil, x))
		h := c1("hypot", nil, s, y)
		l := c1("logaddexp", nil, h, c1("cosh", nil, y))
		return []*core.Tensor{c1("mul", nil, l, c1("atan", nil, x))}, nil
	}
	x, y := randnOn(dev, 7, 4, 8), randnOn(dev, 8, 4, 1)
	g, err := Trace(program, x, y)
	require.NoError(t, err)
	plain, err := g.Run(x, y)
	require.NoError(t, err)
	n, err := g.FuseElementwise(dev)
	require.NoError(t, err)
	assert.Positive(t, n)
	for _, op := range []string{"asin", "hypot", "logaddexp", "cosh", "atan"} {
		assert.True(t, strings.Contains(g.String(), op), "%s is in the fused graph:\n%s", op, g)
	}
	assert.Equal(t, 1, strings.Count(g.String(), "fused["), "one fused kernel:\n%s", g)
	fused, err := g.Run(x, y)
	require.NoError(t, err)
	a, err := plain[0].Float64s()
	require.NoError(t, err)
	b, err := fused[0].Float64s()
	require.NoError(t, err)
	for i := range a {
		require.InDelta(t, a[i], b[i], 1e-5+1e-5*math.Abs(a[i]), "element %d", i)
	}
}
