package nn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// A 2-8-1 MLP trained with Adam must learn XOR, which no linear model can:
// this exercises modules, autograd through them, the optimiser and the
// schedule together.
func TestMLPLearnsXORWithAdam(t *testing.T) {
	core.ManualSeed(7)
	model := must(nn.NewSequential(
		must(nn.NewLinear(2, 8))(t), &nn.Tanh{},
		must(nn.NewLinear(8, 1))(t), &nn.Sigmoid{},
	))(t)
	x := core.FromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, core.Shape{4, 2})
	target := core.FromSlice([]float32{0, 1, 1, 0}, core.Shape{4, 1})
	cfg := nn.DefaultAdam()
	cfg.LR = 0.05
	opt := must(nn.NewAdam(model.Parameters(), cfg))(t)
	sched := must(nn.NewScheduler(opt, nn.LinearWarmup{Steps: 10, StartFactor: 0.1}))(t)

	mse := func() *core.Tensor {
		diff := core.Call1("sub", nil, model.Forward(x), target)
		return core.Call1("mean", nil, core.Call1("mul", nil, diff, diff))
	}
	first, err := mse().Item()
	require.NoError(t, err)
	for range 400 {
		opt.ZeroGrad()
		loss := mse()
		require.NoError(t, loss.Backward())
		require.NoError(t, opt.Step())
		sched.Step()
	}
	last, err := mse().Item()
	require.NoError(t, err)
	assert.Less(t, last, 0.01, "loss went from %.4f to %.4f", first, last)

	model.Train(false)
	pred := values(t, model.Forward(x))
	for i, want := range []float64{0, 1, 1, 0} {
		assert.InDelta(t, want, pred[i], 0.2, "XOR input %d", i)
	}
}
