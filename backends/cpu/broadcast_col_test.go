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
			got, want := againstF64(t, op, x, y)
			assert.InDeltaSlice(t, want, got, 1e-6, "%s swap=%v", op, swap)
		}
	}
}

// The row-broadcast path ([rows, n] op [n], either side: a linear layer's
// bias) against the f64 path, at sizes past the inline threshold, with
// rows that do not fill the last block and a row as wide as a block.
func TestRowBroadcastMatchesTheGeneralPath(t *testing.T) {
	randn := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed})
	}
	for _, shape := range [][]int{{1500, 24}, {3, 301, 40}, {90, 512}} {
		n := shape[len(shape)-1]
		a, row := randn(1, shape...), randn(2, n)
		for _, op := range []string{"add", "sub", "div", "maximum", "atan2"} {
			for _, swap := range []bool{false, true} {
				x, y := a, row
				if swap {
					x, y = row, a
				}
				got, want := againstF64(t, op, x, y)
				require.Len(t, got, len(want))
				for i := range want {
					require.InDelta(t, want[i], got[i], 1e-5+1e-5*abs(want[i]), "%s %v swap=%v element %d", op, shape, swap, i)
				}
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// againstF64 is op on x and y as they are, and on both cast to f64: the
// general path the fast paths must agree with.
func againstF64(t *testing.T, op string, x, y *core.Tensor) (got, want []float64) {
	t.Helper()
	got, err := core.Call1(op, nil, x, y).Float64s()
	require.NoError(t, err)
	x64 := core.Call1("cast", core.Attrs{"dtype": core.F64}, x)
	y64 := core.Call1("cast", core.Attrs{"dtype": core.F64}, y)
	want, err = core.Call1(op, nil, x64, y64).Float64s()
	require.NoError(t, err)
	return got, want
}
