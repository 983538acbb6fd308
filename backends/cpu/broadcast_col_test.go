package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The column-broadcast fast path ([E, F] op [E, 1], either side) against
// the f64 path the same op takes for f64 inputs.
func TestColumnBroadcastMatchesTheGeneralPath(t *testing.T) {
	a := core.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, core.Shape{3, 2, 2})
	col := core.FromSlice([]float32{2, -1, 0.5}, core.Shape{3, 1, 1})
	for _, op := range []string{"sub", "div", "mul", "maximum"} {
		for _, swap := range []bool{false, true} {
			x, y := a, col
			if swap {
				x, y = col, a
			}
			got, err := core.Call1(op, nil, x, y).Float64s()
			require.NoError(t, err)
			x64 := core.Call1("cast", core.Attrs{"dtype": core.F64}, x)
			y64 := core.Call1("cast", core.Attrs{"dtype": core.F64}, y)
			want, err := core.Call1(op, nil, x64, y64).Float64s()
			require.NoError(t, err)
			assert.InDeltaSlice(t, want, got, 1e-6, "%s swap=%v", op, swap)
		}
	}
}
