package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotF32 checks the vector dot product against a float64 sum on every
// length up to 200 (bodies of 16s and tails), at misaligned starts, and
// with NaN and infinities in the body and in the tail.
func TestDotF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]float32, 512)
	other := make([]float32, 512)
	for i := range buf {
		buf[i], other[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	for n := 0; n <= 200; n++ {
		for _, off := range []int{0, 1, 3} {
			x, y := buf[off:off+n], other[2*off:2*off+n]
			var want, mag float64
			for i := range x {
				want += float64(x[i]) * float64(y[i])
				mag += math.Abs(float64(x[i]) * float64(y[i]))
			}
			got := float64(dotF32(x, y, 1))
			if math.Abs(got-want) > 4e-7*mag+1e-30 {
				t.Fatalf("n %d offset %d: dotF32 %v, float64 sum %v", n, off, got, want)
			}
			if g := float64(gemmDot(x, y, 1)); math.Abs(g-want) > 4e-7*mag+1e-30 {
				t.Fatalf("n %d offset %d: gemmDot %v, float64 sum %v", n, off, g, want)
			}
		}
	}
	x := append([]float32(nil), buf[:40]...)
	y := append([]float32(nil), other[:40]...)
	for _, at := range []int{5, 37} { // in the vector body, in the Go tail
		for _, c := range []struct {
			v    float32
			want func(float64) bool
		}{
			{float32(math.NaN()), math.IsNaN},
			{float32(math.Inf(1)), func(v float64) bool { return math.IsInf(v, int(math.Copysign(1, float64(y[at])))) }},
		} {
			keep := x[at]
			x[at] = c.v
			if got := float64(dotF32(x, y, 1)); !c.want(got) {
				t.Errorf("%v at %d: dotF32 gave %v", c.v, at, got)
			}
			x[at] = keep
		}
	}
}
