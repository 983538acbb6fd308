package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTransposeVecMatchesScalar(t *testing.T) {
	kernels := []struct {
		rows int
		run  func(dst []float32, dstStride int, src []float32, ld, k int) int
	}{{8, transpose8Vec}, {4, transpose4Vec}}
	for _, kern := range kernels {
		rows := kern.rows
		for _, c := range []struct{ ld, k, stride int }{{8, 8, 8}, {37, 35, 8}, {300, 256, 32}, {9, 7, 8}, {64, 64, 40}, {384, 384, 4}, {13, 24, 5}} {
			if c.stride < rows {
				continue
			}
			src := make([]float32, (rows-1)*c.ld+c.k)
			for i := range src {
				src[i] = float32(i) + 0.5
			}
			dst := make([]float32, (c.k-1)*c.stride+rows+3)
			for i := range dst {
				dst[i] = -1
			}
			done := kern.run(dst, c.stride, src, c.ld, c.k)
			require.True(t, done == 0 || done == c.k&^7, "%d rows %+v: %d columns", rows, c, done)
			if transpose8Asm {
				require.Equal(t, c.k&^7, done, "%d rows %+v", rows, c)
			}
			for p := range c.k {
				for i := range rows {
					want := float32(-1)
					if p < done {
						want = src[i*c.ld+p]
					}
					require.Equal(t, want, dst[p*c.stride+i], "%d rows %+v: column %d row %d", rows, c, p, i)
				}
				for i := rows; i < c.stride && p*c.stride+i < len(dst); i++ {
					require.Equal(t, float32(-1), dst[p*c.stride+i], "%d rows %+v: the gap after column %d is left alone", rows, c, p)
				}
			}
		}
		if transpose8Asm {
			require.Panics(t, func() { kern.run(make([]float32, 64), 8, make([]float32, rows*8-1), 8, 8) }, "%d rows: a short source panics before the assembly reads past it", rows)
		}
	}
}
