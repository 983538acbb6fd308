package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFewRowsMatchFloat64AndSingleRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, sz := range []struct{ m, n, k int }{{2, 300, 384}, {4, 1536, 384}, {8, 130, 33}, {3, 65, 4095}} {
		a := make([]float32, sz.m*sz.k)
		b := make([]float32, sz.n*sz.k)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		require.True(t, gemmFewRowsFits(false, true, sz.m, sz.n, sz.k), "%v takes the few-rows path", sz)
		got := make([]float32, sz.m*sz.n)
		for i := range got {
			got[i] = 1
		}
		gemmF32(false, true, sz.m, sz.n, sz.k, 0.5, a, sz.k, b, sz.k, 2, got, sz.n)
		for i := range sz.m {
			// Each row equals the one-row product (gemvF32) bit for bit.
			row := make([]float32, sz.n)
			gemmF32(false, true, 1, sz.n, sz.k, 0.5, a[i*sz.k:(i+1)*sz.k], sz.k, b, sz.k, 0, row, sz.n)
			for j := range sz.n {
				var want float64
				for p := range sz.k {
					want += float64(a[i*sz.k+p]) * float64(b[j*sz.k+p])
				}
				want = 0.5*want + 2
				assert.InDelta(t, want, float64(got[i*sz.n+j]), 1e-4*math.Sqrt(float64(sz.k)), "%v (%d, %d)", sz, i, j)
				require.Equal(t, row[j]+2, got[i*sz.n+j], "%v (%d, %d): a row of a few-row product is the one-row product", sz, i, j)
			}
		}
	}
}

func TestFewRowsLeavesOtherShapesToThePackedPath(t *testing.T) {
	assert.False(t, gemmFewRowsFits(false, true, 1, 512, 512), "one row is gemvF32's")
	assert.False(t, gemmFewRowsFits(false, true, 9, 512, 512), "nine rows reuse a packed B")
	assert.False(t, gemmFewRowsFits(false, false, 4, 512, 512), "B not transposed: no contiguous dots")
	assert.False(t, gemmFewRowsFits(true, true, 4, 512, 512), "A transposed")
	assert.False(t, gemmFewRowsFits(false, true, 4, 16, 64), "one row would take the naive path")
	assert.False(t, gemmFewRowsFits(false, true, 4, 4, 1<<14), "k long enough to split")
}

// BenchmarkFewRows compares the few-rows path with the packed one on
// decoder-sized products (x Wᵀ, W 1536 x 384), one core:
//
//	go test -run '^$' -bench FewRows ./backends/cpu
func BenchmarkFewRows(b *testing.B) {
	const n, k = 1536, 384
	w := make([]float32, n*k)
	for i := range w {
		w[i] = float32(i%7) - 3
	}
	for _, m := range []int{2, 4, 8, 16} {
		a := make([]float32, m*k)
		c := make([]float32, m*n)
		b.Run(fmt.Sprintf("m%d/rows", m), func(b *testing.B) {
			for b.Loop() {
				gemmFewRowsTransB(false, m, n, k, 1, a, k, w, k, 0, c, n)
			}
		})
		b.Run(fmt.Sprintf("m%d/packed", m), func(b *testing.B) {
			for b.Loop() {
				gemmBlocked(false, false, true, m, n, k, 1, a, k, w, k, 0, c, n)
			}
		})
	}
}
