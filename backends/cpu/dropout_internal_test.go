package cpu

import (
	"math"
	"testing"
)

// dropoutThreshold turns dropout's float test u >= p, with u = k / 2^24 for
// the 24-bit draw k, into k >= threshold: the same answer for every k.
func TestDropoutThresholdIsTheFloatTest(t *testing.T) {
	for _, p := range []float64{0, 0.1, 0.3, 1.0 / 3, 0.5, 0.7, 1e-9, 0.999999, 1 - 0x1p-24, 1, math.NaN(), -0.5} {
		thr := dropoutThreshold(p)
		for k := uint32(0); k < 1<<24; k++ {
			if want := float64(k)*(1.0/(1<<24)) >= p; (k >= thr) != want {
				t.Fatalf("p %v: draw %d: threshold %d says %v, u >= p says %v", p, k, thr, !want, want)
			}
		}
	}
}
