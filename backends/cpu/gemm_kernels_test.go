package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// Every micro-kernel (the Go 4x2 and those of gemmVectorKernels the CPU
// runs: AVX2's 4x16 and 4x24, AVX-512's 8x32) gives the product within float32 rounding of a float64
// reference, for every transpose, ragged edges on all sides, beta 0 and 1,
// and k not a multiple of the unroll.
func TestGemmMicroKernelsMatchFloat64(t *testing.T) {
	type kernel = gemmKernel
	kernels := []kernel{{name: "go-4x2", mr: 4, nr: 2, micro: gemmMicro4x2Tile}}
	for _, v := range gemmVectorKernels {
		kernels = append(kernels, kernel{name: v.name, mr: v.mr, nr: v.nr, micro: v.micro},
			kernel{name: v.name + "-full", mr: v.mr, nr: v.nr, micro: v.micro, full: v.full})
		if v.rows != nil {
			kernels = append(kernels, kernel{name: v.name + "-rows", mr: v.mr, nr: v.nr, micro: v.micro, full: v.full, rows: v.rows})
		}
	}
	defer currentGemmKernel().use()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kr := range kernels {
		kr.use()
		for _, d := range [][3]int{{37, 53, 29}, {64, 64, 64}, {5, 130, 300}, {129, 17, 8}, {70, 3, 1000}, {40, 48, 300}, {128, 96, 62}} {
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

// The vector kernels differ only in width: each element is the same chain
// of fused multiply-adds in k order, so their products are equal bit for
// bit (what lets a model's pinned outputs hold across CPUs).
func TestGemmVectorKernelsAgreeBitForBit(t *testing.T) {
	if len(gemmVectorKernels) < 2 {
		t.Skipf("needs a CPU with AVX2 and FMA (its 4x16 and 4x24 kernels) or AVX-512: this one runs %d vector gemm kernels", len(gemmVectorKernels))
	}
	defer currentGemmKernel().use()
	rng := rand.New(rand.NewPCG(3, 4))
	m, n, k := 67, 301, 517
	a, b := randF32(rng, m*k), randF32(rng, k*n)
	var first []float32
	for _, v := range gemmVectorKernels {
		v.use()
		c := make([]float32, m*n)
		gemmBlocked(false, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
		if first == nil {
			first = c
			continue
		}
		for i := range c {
			if math.Float32bits(c[i]) != math.Float32bits(first[i]) {
				t.Fatalf("%s: element %d = %v, %s gave %v", v.name, i, c[i], gemmVectorKernels[0].name, first[i])
			}
		}
	}
}

// A read in place (gemmMicroRows) gives the bits of A packed: the same
// multiply-adds in the same order. Shapes whose blocks are whole tiles take
// the in-place path (k panels of 256 and 44, a row stride past k), the
// others fall back to packing in some blocks and must agree as well.
func TestGemmInPlaceAAgreesWithPackedBitForBit(t *testing.T) {
	var inPlace []gemmKernel
	for _, v := range gemmVectorKernels {
		if v.rows != nil {
			inPlace = append(inPlace, v)
		}
	}
	want := 0
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		want++ // the 4x24
		if cpu.X86.HasAVX512F {
			want++ // the 8x32
		}
	}
	if len(inPlace) != want {
		t.Fatalf("%d gemm kernels read A in place on this CPU, want %d (AVX2+FMA: the 4x24; AVX-512: the 8x32 too)", len(inPlace), want)
	}
	if want == 0 {
		t.Skip("needs a CPU with AVX2 and FMA (the 4x24 kernel reads A in place)")
	}
	// The kernel init picks may be another: test each in-place one.
	defer currentGemmKernel().use()
	defer func() { gemmPackAOnly = false }()
	for _, kernel := range inPlace {
		kernel.use()
		rng := rand.New(rand.NewPCG(5, 6))
		for _, d := range [][4]int{{64, 48, 300, 300}, {1024, 384, 384, 384}, {96, 120, 64, 70}, {67, 72, 90, 90}, {64, 100, 33, 40}, {136, 64, 2, 5}} {
			m, n, k, lda := d[0], d[1], d[2], d[3]
			a, b := randF32(rng, m*lda), randF32(rng, k*n)
			run := func(packOnly bool, beta float32) []float32 {
				gemmPackAOnly = packOnly
				c := randF32(rand.New(rand.NewPCG(7, 8)), m*n)
				gemmBlocked(true, false, false, m, n, k, 0.75, a, lda, b, n, beta, c, n)
				return c
			}
			for _, beta := range []float32{0, 1} {
				packed, inPlace := run(true, beta), run(false, beta)
				for i := range packed {
					if math.Float32bits(packed[i]) != math.Float32bits(inPlace[i]) {
						t.Fatalf("%s %v beta %v: element %d = %v in place, %v packed", kernel.name, d, beta, i, inPlace[i], packed[i])
					}
				}
			}
		}
	}
}
