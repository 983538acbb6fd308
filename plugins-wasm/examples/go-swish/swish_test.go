package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

// These run the kernels natively through wtplugin.Run, which allocates
// outputs as the host does; plugins-wasm/examples_test.go runs the built
// module through the host itself.

func TestSwish(t *testing.T) {
	x := []float64{-3, -0.5, 0, 0.5, 2}
	for _, beta := range []float64{1, 2.5} {
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = v / (1 + math.Exp(-beta*v))
		}
		out, err := wtplugin.Run("goswish.swish", wtplugin.Attrs{"beta": beta}, wtplugin.Make([]int{5}, x))
		require.NoError(t, err)
		assert.InDeltaSlice(t, want, out[0].Float64s(), 1e-15)

		x32 := []float32{-3, -0.5, 0, 0.5, 2}
		out, err = wtplugin.Run("goswish.swish", wtplugin.Attrs{"beta": beta}, wtplugin.Make([]int{5}, x32))
		require.NoError(t, err)
		for i, v := range out[0].Float32s() {
			assert.InDelta(t, want[i], float64(v), 1e-6)
		}
	}
	// beta defaults to 1: swish(1) = sigmoid(1).
	out, err := wtplugin.Run("goswish.swish", nil, wtplugin.Make([]int{1}, []float64{1}))
	require.NoError(t, err)
	assert.InDelta(t, 1/(1+math.Exp(-1)), out[0].Float64s()[0], 1e-15)
}

func TestPairwiseSum(t *testing.T) {
	x := wtplugin.Make([]int{2, 5}, []float32{1, 2, 3, 4, 5, 10, 20, 30, 40, 50})
	out, err := wtplugin.Run("goswish.pairwise_sum", nil, x)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, out[0].Shape)
	assert.Equal(t, []float32{3, 7, 5, 30, 70, 50}, out[0].Float32s())

	out, err = wtplugin.Run("goswish.pairwise_sum", nil, wtplugin.Make([]int{4}, []float64{1, 2, 3, 4}))
	require.NoError(t, err)
	assert.Equal(t, []float64{3, 7}, out[0].Float64s())

	_, err = wtplugin.Run("goswish.pairwise_sum", nil, wtplugin.Make([]int{}, []float64{1}))
	assert.ErrorContains(t, err, "goswish.pairwise_sum: x is a scalar")
	_, err = wtplugin.Run("goswish.swish", nil, wtplugin.Make([]int{1}, []int64{1}))
	assert.ErrorContains(t, err, "input x takes [f32 f64], got i64")
}
