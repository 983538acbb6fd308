package cpu

import (
	"math"
	"math/rand/v2"
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

// With beta 0 the packed gemm's first k panel stores into C; that must be
// exactly what adding into a cleared C gives (beta 1 over zeros), -0 and
// all, for any alpha and any panel count.
func TestGemmStoreEqualsAddToZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range [][3]int{{37, 300, 45}, {130, 70, 9}, {64, 64, 64}, {9, 520, 33}} {
		m, k, n := d[0], d[1], d[2]
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		clear(b[:n]) // a zero row of B: products of -1 * 0 and the like
		for _, alpha := range []float32{1, -1, 0.5} {
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				lda, ldb := k, n
				if tr[0] {
					lda = m // a read as a k x m matrix, transposed
				}
				if tr[1] {
					ldb = k
				}
				stored := make([]float32, m*n)
				for i := range stored {
					stored[i] = float32(math.NaN()) // must be overwritten, not read
				}
				added := make([]float32, m*n)
				gemmF32(tr[0], tr[1], m, n, k, alpha, a, lda, b, ldb, 0, stored, n)
				gemmF32(tr[0], tr[1], m, n, k, alpha, a, lda, b, ldb, 1, added, n)
				for i := range added {
					if math.Float32bits(stored[i]) != math.Float32bits(added[i]) {
						t.Fatalf("%v alpha %v trans %v: element %d stored %v, added %v", d, alpha, tr, i, stored[i], added[i])
					}
				}
			}
		}
	}
}
