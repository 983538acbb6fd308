package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

func paramsWithGrads(tb testing.TB, grads ...*core.Tensor) []*nn.Parameter {
	var ps []*nn.Parameter
	for _, g := range grads {
		p := must(nn.NewParameter(core.ZerosLike(g)))(tb)
		p.SetGrad(g)
		ps = append(ps, p)
	}
	return ps
}

// Expected values from torch 2.15: torch.nn.utils.clip_grad_norm_([a, b],
// max_norm) with a.grad = [3, -4, 1.5] and b.grad = [[0.5, 2], [-1, 0.25]]
// in float64.
func TestClipGradNormMatchesTorch(t *testing.T) {
	grads := func() []*nn.Parameter {
		return paramsWithGrads(t, core.FromSlice([]float64{3, -4, 1.5}, core.Shape{3}),
			core.FromSlice([]float64{0.5, 2, -1, 0.25}, core.Shape{2, 2}))
	}
	ps := grads()
	total, err := nn.ClipGradNorm(ps, 1)
	require.NoError(t, err)
	assert.InDelta(t, 5.706356105256663, total, 1e-15)
	assert.InDeltaSlice(t, []float64{0.5257294530754861, -0.7009726041006482, 0.26286472653774307}, values(t, ps[0].Grad()), 1e-15)
	assert.InDeltaSlice(t, []float64{0.08762157551258103, 0.3504863020503241, -0.17524315102516205, 0.04381078775629051}, values(t, ps[1].Grad()), 1e-15)

	ps = grads()
	total, err = nn.ClipGradNorm(ps, 100)
	require.NoError(t, err)
	assert.InDelta(t, 5.706356105256663, total, 1e-15)
	assert.Equal(t, []float64{3, -4, 1.5}, values(t, ps[0].Grad()), "a norm under the limit leaves gradients alone")
}

func TestClipGradNormEdgeCases(t *testing.T) {
	noGrad := must(nn.NewParameter(core.Zeros(core.Shape{2}, core.F32)))(t)
	total, err := nn.ClipGradNorm([]*nn.Parameter{noGrad}, 1)
	require.NoError(t, err)
	assert.Equal(t, 0.0, total)
	assert.Nil(t, noGrad.Grad())

	_, err = nn.ClipGradNorm(nil, -1)
	assert.ErrorContains(t, err, "max norm")

	ps := paramsWithGrads(t, core.FromSlice([]float32{float32(math.Inf(1)), 1}, core.Shape{2}))
	total, err = nn.ClipGradNorm(ps, 1)
	require.NoError(t, err)
	assert.True(t, math.IsInf(total, 1), "a non-finite norm is reported, not hidden")
}

func TestClipGradValue(t *testing.T) {
	ps := paramsWithGrads(t, core.FromSlice([]float64{3, -4, 1.5}, core.Shape{3}))
	require.NoError(t, nn.ClipGradValue(ps, 2))
	assert.Equal(t, []float64{2, -2, 1.5}, values(t, ps[0].Grad()))
	assert.ErrorContains(t, nn.ClipGradValue(ps, -1), "clip must be >= 0")
}
