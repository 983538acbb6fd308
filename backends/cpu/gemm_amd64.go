package cpu

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2/FMA micro-kernels (gemm_amd64.s): 4 rows of A broadcast against
// 24 columns of B held in three ymm registers, twelve accumulators (what
// runs), or against 16 columns with eight (kept: TestGemmVectorKernels-
// AgreeBitForBit holds the two to the same bits on every AVX2 machine);
// and, where the CPU has AVX-512, an 8x32 kernel (gemm512_amd64.s): twice
// the width per instruction and twice the accumulators (matmul 1024 on one
// core: see BenchmarkMatmulOneThread). On a Zen 3 core (2 cores, noisy
// neighbours) the 4x24 kernel's BenchmarkMatmulOneThread was 64-76 GFLOP/s
// against the 4x16's 62-72, runs alternating: twelve multiply-add chains
// cover the FMA units' latency where eight barely do.

//go:noescape
func gemmMicro4x16AVX2(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro4x16AVX2C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int)

//go:noescape
func gemmMicro4x24AVX2(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro4x24AVX2C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int)

//go:noescape
func gemmMicro4x24AVX2R(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int, lda int)

//go:noescape
func gemmMicro8x32AVX512(ap, bp *float32, kp int, tile *float32)

//go:noescape
func gemmMicro8x32AVX512C(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int)

//go:noescape
func gemmMicro8x32AVX512R(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, lda int)

// asmTile and asmFull are the two forms of an assembly micro-kernel: the
// product into a tile buffer, and the products of slivers A slivers (one
// after another in ap) with one B sliver written into C itself, each mr
// rows below the last.
type (
	asmTile func(ap, bp *float32, kp int, tile *float32)
	asmFull func(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int)
)

// gemmMicro8x32AVX512Run is the AVX-512 kernel as an asmFull: its assembly
// writes one tile a call, and the loop over A's slivers is here.
func gemmMicro8x32AVX512Run(ap, bp *float32, kp int, c *float32, ldc int, alpha float32, accumulate int, slivers int) {
	for s := range slivers {
		if s > 0 { // advanced before a call, never past the last sliver (checkptr: past the end of the slices)
			ap, c = (*float32)(unsafe.Add(unsafe.Pointer(ap), kp*8*4)), (*float32)(unsafe.Add(unsafe.Pointer(c), 8*ldc*4))
		}
		gemmMicro8x32AVX512C(ap, bp, kp, c, ldc, alpha, accumulate)
	}
}

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
		kp := len(bp) / nr
		if kp == 0 || kp%2 != 0 || len(bp) != kp*nr || len(ap)%(kp*mr) != 0 || len(ap) == 0 {
			panic(fmt.Sprintf("gemm: packed slivers of %d (A) and %d (B) floats are not whole %dx%d slivers of an even length", len(ap), len(bp), mr, nr))
		}
		slivers := len(ap) / (kp * mr)
		_ = c[(slivers*mr-1)*ldc+nr-1]
		acc := 0
		if accumulate {
			acc = 1
		}
		full(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(c), ldc, alpha, acc, slivers)
	}
	return gemmKernel{name: name, mr: mr, nr: nr, micro: micro, full: fullC}
}

// rowsArgs checks a rows-form call of an mr x nr kernel (slivers of A
// read in place, lda apart, kc steps; kc even) against its slices, where a
// short one panics instead of the assembly reading or writing past it, and
// returns accumulate as the assembly takes it.
func rowsArgs(mr, nr int, a []float32, lda, slivers, kc int, bp, c []float32, ldc int, accumulate bool) int {
	if slivers <= 0 || kc <= 0 || kc%2 != 0 || lda < kc || len(bp) < kc*nr || len(a) < (slivers*mr-1)*lda+kc || len(c) < (slivers*mr-1)*ldc+nr {
		panic(fmt.Sprintf("gemm: %d slivers of A in place (lda %d, %d steps) do not fit %d floats of A, %d of B and %d of C", slivers, lda, kc, len(a), len(bp), len(c)))
	}
	if accumulate {
		return 1
	}
	return 0
}

// gemm4x24Rows is the 4x24 kernel's rows form (gemmKernel.rows), reading
// A in place.
func gemm4x24Rows(a []float32, lda, slivers, kc int, bp, c []float32, ldc int, alpha float32, accumulate bool) {
	acc := rowsArgs(4, 24, a, lda, slivers, kc, bp, c, ldc, accumulate)
	gemmMicro4x24AVX2R(unsafe.SliceData(a), unsafe.SliceData(bp), kc, unsafe.SliceData(c), ldc, alpha, acc, slivers, lda)
}

// gemm8x32Rows is the 8x32 kernel's rows form, one tile a call as its
// packed form.
func gemm8x32Rows(a []float32, lda, slivers, kc int, bp, c []float32, ldc int, alpha float32, accumulate bool) {
	acc := rowsArgs(8, 32, a, lda, slivers, kc, bp, c, ldc, accumulate)
	for s := range slivers { // indexed: a pointer past the last sliver would be past a's or c's end (checkptr)
		gemmMicro8x32AVX512R(&a[s*8*lda], unsafe.SliceData(bp), kc, &c[s*8*ldc], ldc, alpha, acc, lda)
	}
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		gemmVectorKernels = append(gemmVectorKernels, asmKernel("avx2-4x16", 4, 16, gemmMicro4x16AVX2, gemmMicro4x16AVX2C),
			asmKernel("avx2-4x24", 4, 24, gemmMicro4x24AVX2, gemmMicro4x24AVX2C).withRows(gemm4x24Rows))
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasAVX512F {
		gemmVectorKernels = append(gemmVectorKernels, asmKernel("avx512-8x32", 8, 32, gemmMicro8x32AVX512, gemmMicro8x32AVX512Run).withRows(gemm8x32Rows))
	}
	if n := len(gemmVectorKernels); n > 0 {
		best := gemmVectorKernels[n-1]
		best.use()
	}
}
