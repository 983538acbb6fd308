package reftest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Values are the elements of two tensors to compare, as float64s; it
// fails t when either holds an error or their shapes differ.
func Values(t testing.TB, a, b *core.Tensor) (av, bv []float64) {
	t.Helper()
	require.NoError(t, a.Err())
	require.NoError(t, b.Err())
	require.Equal(t, b.Shape(), a.Shape())
	av, err := a.Float64s()
	require.NoError(t, err)
	bv, err = b.Float64s()
	require.NoError(t, err)
	return av, bv
}

// RelMaxErr is max|got - want| / max|want|, +Inf when a difference is NaN;
// it fails t when either holds an error or the shapes differ.
func RelMaxErr(t testing.TB, got, want *core.Tensor) float64 {
	t.Helper()
	g, w := Values(t, got, want)
	diff, scale := 0.0, 0.0
	for i := range w {
		diff = math.Max(diff, math.Abs(g[i]-w[i]))
		scale = math.Max(scale, math.Abs(w[i]))
	}
	if !(diff <= diff) { // NaN
		return math.Inf(1)
	}
	return diff / scale
}
