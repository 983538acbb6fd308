package reftest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// RelMaxErr is max|got - want| / max|want|, +Inf when a difference is NaN;
// it fails t when got holds an error or the shapes differ.
func RelMaxErr(t testing.TB, got, want *core.Tensor) float64 {
	t.Helper()
	require.NoError(t, got.Err())
	require.Equal(t, want.Shape(), got.Shape())
	g, err := got.Float64s()
	require.NoError(t, err)
	w, err := want.Float64s()
	require.NoError(t, err)
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
