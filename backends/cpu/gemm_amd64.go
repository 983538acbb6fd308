package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2/FMA micro-kernel (gemm_amd64.s): 4 rows of A broadcast against
// 16 columns of B held in two ymm registers, eight accumulators; and its
// AVX-512 twin (gemm512_amd64.s) at 32 columns in two zmm registers, which
// doubles the multiply-adds per instruction where the CPU has AVX-512
// (matmul 1024 on one core: see BenchmarkMatmulOneThread).

//go:noescape
func gemmMicro4x16AVX2(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro4x16AVX2C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)

//go:noescape
func gemmMicro4x32AVX512(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro4x32AVX512C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)

// gemmMicro4x16Full runs the assembly kernel that writes a full 4x16 tile
// of C itself (gemmMicroFull's contract). Slices too short for the tile
// panic here rather than let the assembly read or write past them.
func gemmMicro4x16Full(ap, bp, c []float32, ldc int, alpha float32, accumulate bool) {
	kp := len(ap) / gemmMR
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
	kp := len(ap) / gemmMR
	if kp == 0 || len(bp) < kp*16 || len(tile) < gemmMR*16 {
		clear(tile)
		return
	}
	gemmMicro4x16AVX2(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(tile))
}

// gemmMicro4x32Full is gemmMicro4x16Full with the AVX-512 kernel.
func gemmMicro4x32Full(ap, bp, c []float32, ldc int, alpha float32, accumulate bool) {
	kp := len(ap) / gemmMR
	_, _ = bp[kp*32-1], c[3*ldc+31]
	if kp%2 != 0 {
		panic("gemm: packed sliver length not a multiple of the unroll")
	}
	acc := 0
	if accumulate {
		acc = 1
	}
	gemmMicro4x32AVX512C(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(c), ldc, alpha, acc)
}

// gemmMicro4x32 is gemmMicro4x16 with the AVX-512 kernel.
func gemmMicro4x32(ap, bp, tile []float32) {
	kp := len(ap) / gemmMR
	if kp == 0 || len(bp) < kp*32 || len(tile) < gemmMR*32 {
		clear(tile)
		return
	}
	gemmMicro4x32AVX512(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(tile))
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		gemmVectorKernels = append(gemmVectorKernels, gemmKernel{"avx2-4x16", 16, gemmMicro4x16, gemmMicro4x16Full})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F {
		gemmVectorKernels = append(gemmVectorKernels, gemmKernel{"avx512-4x32", 32, gemmMicro4x32, gemmMicro4x32Full})
	}
	if n := len(gemmVectorKernels); n > 0 {
		best := gemmVectorKernels[n-1]
		gemmNR, gemmMicro, gemmMicroFull = best.nr, best.micro, best.full
	}
}
