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

// gemmMicro4x16Full runs the assembly kernel that writes a full 4x16 tile
// of C itself (gemmMicroFull's contract). Slices too short for the tile
// panic here rather than let the assembly read or write past them.
func gemmMicro4x16Full(ap, bp, c []float32, ldc int, alpha float32, accumulate bool) {
	kp := len(ap) / 4
	_, _ = bp[kp*16-1], c[3*ldc+15]
	if kp%2 != 0 {
		panic("gemm: packed sliver length not a multiple of the unroll")
	}
	acc := 0
	if accumulate {
		acc = 1
	}
	gemmMicro4x16AVX2C(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(c), ldc, alpha, acc)
}

// gemmMicro4x16 runs the assembly kernel over slivers of kp k-steps.
func gemmMicro4x16(ap, bp, tile []float32) {
	kp := len(ap) / 4
	if kp == 0 || len(bp) < kp*16 || len(tile) < 4*16 {
		clear(tile)
		return
	}
	gemmMicro4x16AVX2(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(tile))
}

// gemmMicro8x32Full is gemmMicro4x16Full with the AVX-512 8x32 kernel.
func gemmMicro8x32Full(ap, bp, c []float32, ldc int, alpha float32, accumulate bool) {
	kp := len(ap) / 8
	_, _ = bp[kp*32-1], c[7*ldc+31]
	if kp%2 != 0 {
		panic("gemm: packed sliver length not a multiple of the unroll")
	}
	acc := 0
	if accumulate {
		acc = 1
	}
	gemmMicro8x32AVX512C(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(c), ldc, alpha, acc)
}

// gemmMicro8x32 is gemmMicro4x16 with the AVX-512 8x32 kernel.
func gemmMicro8x32(ap, bp, tile []float32) {
	kp := len(ap) / 8
	if kp == 0 || len(bp) < kp*32 || len(tile) < 8*32 {
		clear(tile)
		return
	}
	gemmMicro8x32AVX512(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(tile))
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		gemmVectorKernels = append(gemmVectorKernels, gemmKernel{"avx2-4x16", 4, 16, gemmMicro4x16, gemmMicro4x16Full})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F {
		gemmVectorKernels = append(gemmVectorKernels, gemmKernel{"avx512-8x32", 8, 32, gemmMicro8x32, gemmMicro8x32Full})
	}
	if n := len(gemmVectorKernels); n > 0 {
		best := gemmVectorKernels[n-1]
		best.use()
	}
}
