package abi

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randValues draws rand(shape) after seed, as the initialisers draw.
func randValues(t *testing.T, seed uint64, shape []int64) []float32 {
	t.Helper()
	ManualSeed(seed)
	outs, err := Op("rand", nil, attrs{{Name: "shape", Kind: AttrInts, Ints: shape}}, false)
	require.NoError(t, err)
	hs := make([]int64, 1)
	outs.Handles(hs)
	defer TensorFree(hs[0])
	return f32Values(t, hs[0])
}

// xavier_uniform on a (4, 3) tensor is U(-a, a), a = gain·sqrt(6/7): the
// seed's rand values scaled, in the handle the caller already holds, which
// keeps requiring a gradient and keeps its gradient.
func TestNNInitReplacesTheValuesBehindTheHandle(t *testing.T) {
	p := param(t, make([]float32, 12), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	defer TensorFree(p)
	require.NoError(t, TensorSetRequiresGrad(p, true))
	shape := []int64{4, 3}
	outs, err := Op("reshape", []int64{p}, attrs{{Name: "shape", Kind: AttrInts, Ints: shape}}, true)
	require.NoError(t, err)
	hs := make([]int64, 1)
	outs.Handles(hs)
	w := hs[0]
	defer TensorFree(w)
	require.NoError(t, TensorSetRequiresGrad(w, true))

	ManualSeed(3)
	require.NoError(t, NNInit(w, "xavier_uniform", attrs{{Name: "gain", Kind: AttrFloat, F: 2}}))
	a := 2 * math.Sqrt(6.0/7)
	u := randValues(t, 3, shape)
	got := f32Values(t, w)
	require.Len(t, got, 12)
	for i, v := range got {
		assert.InDelta(t, float64(u[i])*2*a-a, float64(v), 1e-6, "element %d", i)
	}
	on, err := TensorRequiresGrad(w)
	require.NoError(t, err)
	assert.True(t, on)

	ManualSeed(3)
	require.NoError(t, NNInit(p, "constant", attrs{{Name: "val", Kind: AttrFloat, F: 0.5}}))
	assert.Equal(t, []float32{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, f32Values(t, p))
	g, err := TensorGrad(p)
	require.NoError(t, err)
	require.NotZero(t, g, "the gradient stays, as torch's initialisers leave p.grad")
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, f32Values(t, g))
	require.NoError(t, TensorFree(g))
}

func TestNNInitKaimingAndGain(t *testing.T) {
	w := f32Tensor(t, []int64{2, 8}, make([]float32, 16)...)
	defer TensorFree(w)
	ManualSeed(11)
	require.NoError(t, NNInit(w, "kaiming_uniform", attrs{{Name: "mode", Kind: AttrString, S: "fan_out"},
		{Name: "nonlinearity", Kind: AttrString, S: "relu"}}))
	bound := math.Sqrt(3) * math.Sqrt2 / math.Sqrt(2) // fan_out = 2
	u := randValues(t, 11, []int64{2, 8})
	for i, v := range f32Values(t, w) {
		assert.InDelta(t, float64(u[i])*2*bound-bound, float64(v), 1e-6)
	}
	g, err := NNCalculateGain("leaky_relu", 0.2)
	require.NoError(t, err)
	assert.InDelta(t, math.Sqrt(2/1.04), g, 1e-15)
	g, err = NNCalculateGain("tanh", 0)
	require.NoError(t, err)
	assert.InDelta(t, 5.0/3, g, 1e-15)
	_, err = NNCalculateGain("softsign", 0)
	errorIs(t, err, StatusInvalid, `unsupported nonlinearity "softsign"`)
}

func TestNNInitErrors(t *testing.T) {
	v := f32Tensor(t, []int64{3}, 1, 2, 3)
	defer TensorFree(v)
	errorIs(t, NNInit(v, "orthogonal", nil), StatusInvalid, `unknown method "orthogonal"`)
	errorIs(t, NNInit(v, "xavier_uniform", nil), StatusInvalid, "wt_nn_init xavier_uniform: nn: fan in and fan out need at least 2 dims")
	errorIs(t, NNInit(v, "uniform", attrs{{Name: "low", Kind: AttrFloat, F: 1}}), StatusInvalid, `unknown setting "low" (it takes a, b)`)
	errorIs(t, NNInit(v, "constant", nil), StatusInvalid, `setting "val" is required`)
	errorIs(t, NNInit(v, "kaiming_normal", attrs{{Name: "mode", Kind: AttrInt, I: 1}}), StatusInvalid, `setting "mode" must be a string`)
	assert.Equal(t, []float32{1, 2, 3}, f32Values(t, v), "a failed call changes nothing")

	require.NoError(t, TensorSetRequiresGrad(v, true))
	outs, err := Op("mul", []int64{v, v}, nil, false)
	require.NoError(t, err)
	hs := make([]int64, 1)
	outs.Handles(hs)
	defer TensorFree(hs[0])
	errorIs(t, NNInit(hs[0], "normal", nil), StatusInvalid, "not a leaf")
	errorIs(t, NNInit(1<<40, "normal", nil), StatusHandle, "")
}
