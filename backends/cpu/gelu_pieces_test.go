package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// gelu's AVX-512 kernel takes a piecewise polynomial for the lanes in
// about [-3.09, 2.81] and the general path for the others, in the same
// vector (_asm/gelu_pieces.go).

// TestGeluPiecesMatchReference sweeps the pieces' range densely, every
// vector wholly inside it, where the pieces are within 2 ulps (fits.py).
func TestGeluPiecesMatchReference(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		var src []float32
		for x := float32(-3.09); x < 2.81; x = x + 3e-6 {
			src = append(src, x)
		}
		src = src[:len(src)/16*16]
		bound, tail := 8.0, func(x, _ float64) float64 { return 0.75 * x * x } // the general path's (ewRefs)
		if simdLevel == simdAVX512 {
			bound, tail = 2.5, nil
		}
		worst := checkUnary(t, unGelu, "gelu", geluExact, bound, tail, src)
		t.Logf("%d values, worst %.2f ulp", len(src), worst)
	})
}

// TestGeluLanesIndependent: a lane's result depends on its own x alone,
// not on whether its neighbours sent the vector down the general path.
func TestGeluLanesIndependent(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		src := make([]float32, 64)
		for i := range src {
			src[i] = -3 + 5.7*float32(i)/64
		}
		alone := make([]float32, len(src))
		require.True(t, unF32(unGelu, alone, src))
		for _, far := range []float32{-7, 4, float32(math.NaN()), float32(math.Inf(-1))} {
			for lane := 0; lane < len(src); lane += 5 {
				mixed := append([]float32(nil), src...)
				mixed[lane] = far
				got := make([]float32, len(src))
				require.True(t, unF32(unGelu, got, mixed))
				for i := range got {
					if i != lane {
						require.Equal(t, math.Float32bits(alone[i]), math.Float32bits(got[i]),
							"gelu(%v) with %v in lane %d", src[i], far, lane)
					}
				}
				checkUnary(t, unGelu, "gelu", geluExact, 8, func(x, _ float64) float64 { return 0.75 * x * x }, mixed)
			}
		}
	})
}
