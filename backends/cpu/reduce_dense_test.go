package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Rows whose float32 pre-sums overflow, or that hold Inf or NaN, give
// through the dense row loop what the general walk gives (a strided view
// of the same values) and what float64 gives: the overflow goes through
// the Go loop, a real Inf or NaN stays.
func TestDenseRowSumsOfOverflowInfAndNaN(t *testing.T) {
	everyLevel(t, func(t *testing.T) {
		for _, n := range []int{64, 1024, 5000} {
			rows := 5
			v := make([]float32, rows*n)
			for r := range rows {
				for i := range n {
					v[r*n+i] = math.MaxFloat32 * float32(1-2*((i>>1)&1)) // M, M, -M, -M, ...
				}
			}
			v[1*n+7] = float32(math.Inf(1))
			v[2*n+n-1] = float32(math.NaN())
			v[3*n+3] = 1.5 // in place of a -M
			dense := core.FromSlice(v, core.Shape{rows, n})
			// The same values through the general walk: a transposed copy,
			// transposed back (a view whose rows are not dense).
			back := core.Call1("permute", core.Attrs{"dims": []int{1, 0}}, dense).Contiguous()
			view := core.Call1("permute", core.Attrs{"dims": []int{1, 0}}, back)
			require.False(t, view.IsContiguous())
			got, want := rdBits(t, core.Call1("sum", core.Attrs{"axes": []int{1}}, dense)), rdBits(t, core.Call1("sum", core.Attrs{"axes": []int{1}}, view))
			require.Equal(t, want, got, "n=%d", n)
			sums, err := core.Call1("sum", core.Attrs{"axes": []int{1}}, dense).Float64s()
			require.NoError(t, err)
			require.Equal(t, 0.0, sums[0], "n=%d", n)
			require.True(t, math.IsInf(sums[1], 1), "n=%d: %v", n, sums[1])
			require.True(t, math.IsNaN(sums[2]), "n=%d: %v", n, sums[2])
			require.Equal(t, float64(float32(math.MaxFloat32+1.5)), sums[3], "n=%d", n) // M + 1.5, exact in float64, rounded to f32
		}
	})
}
