package core_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Gradients returns what Backward would accumulate, leaves nothing in any
// Grad, gives zeros for an input the result does not use, and refuses
// what is not a leaf that requires grad.
func TestGradientsEqualBackwardWithoutAccumulating(t *testing.T) {
	mk := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed, "dtype": core.F64}).SetRequiresGrad(true)
	}
	x, w, unused := mk(1, 5, 3), mk(2, 3, 4), mk(3, 2)
	loss := func() *core.Tensor {
		h := core.Call1("tanh", nil, core.Call1("matmul", nil, x, w))
		return core.Call1("sum", nil, core.Call1("mul", nil, h, h))
	}
	grads, err := core.Gradients(loss(), []*core.Tensor{w, x, unused})
	require.NoError(t, err)
	require.Nil(t, w.Grad())
	require.Nil(t, x.Grad())
	require.NoError(t, loss().Backward())
	for i, want := range []*core.Tensor{w.Grad(), x.Grad()} {
		g, err := grads[i].Float64s()
		require.NoError(t, err)
		v, err := want.Float64s()
		require.NoError(t, err)
		require.InDeltaSlice(t, v, g, 1e-12)
	}
	z, err := grads[2].Float64s()
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0}, z)

	// A tensor used twice gets both contributions.
	twice, err := core.Gradients(core.Call1("sum", nil, core.Call1("mul", nil, x, x)), []*core.Tensor{x})
	require.NoError(t, err)
	xv, _ := x.Detach().Float64s()
	gv, _ := twice[0].Float64s()
	for i := range xv {
		require.InDelta(t, 2*xv[i], gv[i], 1e-12)
	}

	_, err = core.Gradients(loss(), []*core.Tensor{core.Call1("exp", nil, x)})
	require.ErrorContains(t, err, "not a leaf that requires grad")
	_, err = core.Gradients(core.Call1("add", nil, x, x), []*core.Tensor{x})
	require.ErrorContains(t, err, "reduce it to one element")
}
