package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTranspose8VecMatchesScalar(t *testing.T) {
	for _, c := range []struct{ ld, k, stride int }{{8, 8, 8}, {37, 35, 8}, {300, 256, 32}, {9, 7, 8}, {64, 64, 40}} {
		src := make([]float32, 7*c.ld+c.k)
		for i := range src {
			src[i] = float32(i) + 0.5
		}
		dst := make([]float32, (c.k-1)*c.stride+8+3)
		for i := range dst {
			dst[i] = -1
		}
		done := transpose8Vec(dst, c.stride, src, c.ld, c.k)
		require.True(t, done == 0 || done == c.k&^7, "%+v: %d columns", c, done)
		if transpose8Asm {
			require.Equal(t, c.k&^7, done, "%+v", c)
		}
		for p := range c.k {
			for i := range 8 {
				want := float32(-1)
				if p < done {
					want = src[i*c.ld+p]
				}
				require.Equal(t, want, dst[p*c.stride+i], "%+v: column %d row %d", c, p, i)
			}
			for i := 8; i < c.stride && p*c.stride+i < len(dst); i++ {
				require.Equal(t, float32(-1), dst[p*c.stride+i], "%+v: the gap after column %d is left alone", c, p)
			}
		}
	}
	if transpose8Asm {
		require.Panics(t, func() { transpose8Vec(make([]float32, 64), 8, make([]float32, 63), 8, 8) }, "a short source panics before the assembly reads past it")
	}
}
