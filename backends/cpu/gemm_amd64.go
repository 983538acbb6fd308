package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2/FMA micro-kernel (gemm_amd64.s): 4 rows of A broadcast against
// 16 columns of B held in two ymm registers, eight accumulators; and, where
// the CPU has AVX-512, an 8x32 kernel (gemm512_amd64.s): twice the width
// per instruction and twice the accumulators (matmul 1024 on one core: see
// BenchmarkMatmulOneThread).

//go:noescape
func gemmMicro4x16AVX2(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro4x16AVX2C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)

//go:noescape
func gemmMicro8x32AVX512(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro8x32AVX512C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)

// asmTile and asmFull are the two forms of an assembly micro-kernel: the
// product into a tile buffer, and the product written into C itself.
type (
	asmTile func(ap, bp *float32, kp int, tile *float32)
	asmFull func(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)
)

// asmKernel wraps an mr x nr assembly kernel's two forms as a gemmKernel.
// Slices too short for the tile panic in the wrappers rather than let the
// assembly read or write past them.
func asmKernel(name string, mr, nr int, tile asmTile, full asmFull) gemmKernel {
	micro := func(ap, bp, t []float32) {
		kp := len(ap) / mr
		if kp == 0 || len(bp) < kp*nr || len(t) < mr*nr {
			clear(t)
			return
		}
		tile(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(t))
	}
	fullC := func(ap, bp, c []float32, ldc int, alpha float32, accumulate bool) {
		kp := len(ap) / mr
		_, _ = bp[kp*nr-1], c[(mr-1)*ldc+nr-1]
		if kp%2 != 0 {
			panic("gemm: packed sliver length not a multiple of the unroll")
		}
		acc := 0
		if accumulate {
			acc = 1
		}
		full(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(c), ldc, alpha, acc)
	}
	return gemmKernel{name, mr, nr, micro, fullC}
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		gemmVectorKernels = append(gemmVectorKernels, asmKernel("avx2-4x16", 4, 16, gemmMicro4x16AVX2, gemmMicro4x16AVX2C))
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F {
		gemmVectorKernels = append(gemmVectorKernels, asmKernel("avx512-8x32", 8, 32, gemmMicro8x32AVX512, gemmMicro8x32AVX512C))
	}
	if n := len(gemmVectorKernels); n > 0 {
		best := gemmVectorKernels[n-1]
		best.use()
	}
}
