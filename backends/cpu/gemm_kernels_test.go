package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Both micro-kernels (the Go 4x2 and, where the CPU has AVX2 and FMA, the
// 4x16 assembly one) give the product within float32 rounding of a float64
// reference, for every transpose, ragged edges on all sides, beta 0 and 1,
// and k not a multiple of the unroll.
func TestGemmMicroKernelsMatchFloat64(t *testing.T) {
	type kernel struct {
		name  string
		nr    int
		micro func(ap, bp, tile []float32)
		full  func(ap, bp, c []float32, ldc int, alpha float32, accumulate bool)
	}
	kernels := []kernel{{"go-4x2", 2, gemmMicro4x2Tile, nil}}
	if gemmNR != 2 {
		kernels = append(kernels, kernel{"vector", gemmNR, gemmMicro, nil})
		if gemmMicroFull != nil {
			kernels = append(kernels, kernel{"vector-full", gemmNR, gemmMicro, gemmMicroFull})
		}
	}
	defer func(nr int, m func(ap, bp, tile []float32), f func(ap, bp, c []float32, ldc int, alpha float32, accumulate bool)) {
		gemmNR, gemmMicro, gemmMicroFull = nr, m, f
	}(gemmNR, gemmMicro, gemmMicroFull)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kr := range kernels {
		gemmNR, gemmMicro, gemmMicroFull = kr.nr, kr.micro, kr.full
		for _, d := range [][3]int{{37, 53, 29}, {64, 64, 64}, {5, 130, 300}, {129, 17, 8}, {70, 3, 1000}} {
			m, n, k := d[0], d[1], d[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				a, b := randF32(rng, m*k), randF32(rng, k*n)
				lda, ldb := k, n
				if tr[0] {
					lda = m
				}
				if tr[1] {
					ldb = k
				}
				for _, beta := range []float32{0, 1} {
					c := randF32(rng, m*n)
					want := make([]float64, m*n)
					for i := range m {
						for j := range n {
							s := float64(beta) * float64(c[i*n+j])
							for p := range k {
								av, bv := a[i*k+p], b[p*n+j]
								if tr[0] {
									av = a[p*m+i]
								}
								if tr[1] {
									bv = b[j*k+p]
								}
								s += 0.5 * float64(av) * float64(bv)
							}
							want[i*n+j] = s
						}
					}
					gemmBlocked(false, tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, beta, c, n)
					for i, w := range want {
						if math.Abs(float64(c[i])-w) > 1e-4*(1+math.Sqrt(float64(k))) {
							t.Fatalf("%s %v trans %v beta %v: element %d = %v, want %v", kr.name, d, tr, beta, i, c[i], w)
						}
					}
				}
			}
		}
	}
}

func randF32(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64())
	}
	return out
}
