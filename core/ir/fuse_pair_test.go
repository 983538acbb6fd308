package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A fused matmul whose output is also read by one elementwise op stores
// that op's result too (a pre-activation a backward pass keeps, and its
// activation): one kernel, the same values as the ops it replaces, and
// under autograd the original ops with the same gradients. A reader whose
// other operand is computed after the matmul is left alone.
func TestFusePairsStoreTheActivationToo(t *testing.T) {
	dev := webgpuOrSkip(t)
	w, b := randnOn(dev, 3, 6, 8), randnOn(dev, 4, 8)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		pre := c1("add", nil, c1("matmul", nil, in[0], w), b)
		act := c1("gelu", core.Attrs{"approximate": "tanh"}, pre)
		later := c1("exp", nil, act)
		// pre is kept (a backward pass would read it) and mixed with a value
		// computed after the matmul: that reader cannot be paired.
		return []*core.Tensor{act, c1("mul", nil, pre, later)}, nil
	}
	x := randnOn(dev, 1, 2, 5, 6)
	g, err := Trace(fn, x)
	require.NoError(t, err)
	want, err := g.Run(x)
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Pairs, g.String())
	assert.Contains(t, g.String(), "fused_matmul[add($0, $1); gelu(add($0, $1))]")
	_, before := FusionCounts()
	got, err := g.Run(x)
	require.NoError(t, err)
	_, after := FusionCounts()
	require.Equal(t, before, after, "every fused node ran as one kernel\n%s", g)
	for i := range want {
		assert.InDeltaSlice(t, values(t, want[i]), values(t, got[i]), 1e-5, "output %d", i)
	}

	// With autograd recording, the original ops run and gradients flow.
	xs := x.Detach().SetRequiresGrad(true)
	outs, err := g.Run(xs)
	require.NoError(t, err)
	require.NoError(t, c1("sum", nil, c1("add", nil, outs[0], outs[1])).Backward())
	xe := x.Detach().SetRequiresGrad(true)
	eager, err := fn([]*core.Tensor{xe})
	require.NoError(t, err)
	require.NoError(t, c1("sum", nil, c1("add", nil, eager[0], eager[1])).Backward())
	// Relative: the gradient reaches thousands, and the weight's layout (which
	// the device chose by timing) changes the product's rounding.
	requireClose(t, []*core.Tensor{xe.Grad()}, []*core.Tensor{xs.Grad()}, 1e-5)
}
