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

// torch's clip_grad_norm_ with norm_type inf and 1, on the gradients of
// TestClipGradNormMatchesTorch; the total stays on the device as a tensor.
func TestClipGradNormPMatchesTorch(t *testing.T) {
	cases := []struct {
		p     float64
		total float64
		a, b  []float64
	}{
		{math.Inf(1), 4, []float64{0.7499998125000469, -0.9999997500000625, 0.37499990625002344},
			[]float64{0.12499996875000781, 0.49999987500003124, -0.24999993750001562, 0.062499984375003904}},
		{1, 12.25, []float64{0.24489793919200498, -0.32653058558933995, 0.12244896959600249},
			[]float64{0.040816323198667494, 0.16326529279466998, -0.08163264639733499, 0.020408161599333747}},
	}
	for _, c := range cases {
		ps := paramsWithGrads(t, core.FromSlice([]float64{3, -4, 1.5}, core.Shape{3}),
			core.FromSlice([]float64{0.5, 2, -1, 0.25}, core.Shape{2, 2}))
		total, err := nn.ClipGradNormP(ps, 1, c.p)
		require.NoError(t, err)
		assert.Equal(t, core.Shape{}, total.Shape())
		assert.InDeltaSlice(t, []float64{c.total}, values(t, total), 1e-15)
		assert.InDeltaSlice(t, c.a, values(t, ps[0].Grad()), 1e-15)
		assert.InDeltaSlice(t, c.b, values(t, ps[1].Grad()), 1e-15)
	}
	_, err := nn.ClipGradNormP(nil, 1, 0)
	assert.ErrorContains(t, err, "norm type")
}
