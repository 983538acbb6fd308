package nn_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/nn"
)

// TestReleaseDead: under NoGrad on the CPU a dead intermediate is released;
// one whose storage a live view shares is kept (and so is the view); with
// gradients enabled, for a tensor that requires grad, and under a tracer
// nothing is released.
func TestReleaseDead(t *testing.T) {
	fresh := func() *core.Tensor {
		return core.Call1("add", nil, core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{4}), core.Scalar(1, core.F32, core.CPU))
	}
	released := func(x *core.Tensor) bool { return x.Err() != nil }

	func() {
		defer core.NoGradScope()()
		dead, kept := fresh(), fresh()
		view := kept.Reshape(core.Shape{2, 2})
		nn.ReleaseDead([]*core.Tensor{view}, dead, kept)
		require.ErrorIs(t, dead.Err(), core.ErrReleased)
		require.False(t, released(kept), "a tensor a live view shares was released")
		got, err := view.Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{2, 3, 4, 5}, got)

		param := fresh()
		param.SetRequiresGrad(true)
		nn.ReleaseDead(nil, param)
		require.False(t, released(param), "a tensor that requires grad was released")
	}()

	withGrad := fresh()
	nn.ReleaseDead(nil, withGrad)
	require.False(t, released(withGrad), "released with gradients enabled (a backward node may have saved it)")

	_, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		defer core.NoGradScope()()
		mid := in[0].Exp()
		out := mid.Add(in[0])
		nn.ReleaseDead(nil, mid)
		require.False(t, released(mid), "released under a tracer")
		return []*core.Tensor{out}, nil
	}, fresh())
	require.NoError(t, err)
}
