package cpu

import (
	"runtime"
	"sync"
)

// A cache-blocked float32 GEMM in the GotoBLAS layout: op(B) is packed into
// kc x nc panels of gemmNR-wide column slivers (a sliver stays in L1), op(A)
// into mc x kc blocks of gemmMR-tall row slivers (a block stays in L2), and a
// register-blocked micro-kernel multiplies one A sliver by one B sliver.
// Packing also absorbs the transposes, so the micro-kernel only ever streams
// two contiguous buffers.
//
// The micro-kernel is 2x4 rather than the 4x8 or 8x8 of SIMD libraries: Go
// has no vector intrinsics (without GOEXPERIMENT=simd) and its amd64 register
// allocator has 15 usable XMM registers, so 8 accumulators plus 2 A and 4 B
// values is the largest tile that does not spill. Measured on the 2-core EPYC
// these machines use, 2x4 beat 4x4, 3x4, 3x3, 2x6 and 1x8 (with accumulators
// in registers or in a stack array) by 10-40%.
const (
	gemmMR = 2
	gemmNR = 4
	gemmKC = 256
	gemmMC = 64
	gemmNC = 1024
)

// gemmSmall is the m*n*k below which packing costs more than it saves.
const gemmSmall = 16 * 16 * 16

// gemmF32 computes C = alpha*op(A)*op(B) + beta*C on row-major matrices,
// where op(X) is X or its transpose. op(A) is m x k, op(B) is k x n and C is
// m x n; lda, ldb and ldc are the row strides of the stored matrices.
// beta == 0 overwrites C without reading it, like BLAS. It uses every core;
// gemmF32Serial is the same on the calling goroutine only.
func gemmF32(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmF32Run(true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmF32Serial is gemmF32 without goroutines, for callers that already
// parallelise over many small products (batched matmul, convolution groups).
func gemmF32Serial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmF32Run(false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func gemmF32Run(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	gemmScaleC(m, n, beta, c, ldc)
	if k <= 0 || alpha == 0 {
		return
	}
	if m*n*k <= gemmSmall {
		gemmF32Naive(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
		return
	}
	bp := gemmGetPack(gemmKC * min(gemmRoundUp(n, gemmNR), gemmNC))
	defer gemmPutPack(bp)
	for jc := 0; jc < n; jc += gemmNC {
		nc := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			gemmPackB(transB, b, ldb, pc, kc, jc, nc, *bp)
			gemmPanel(parallel, transA, m, nc, kc, alpha, a, lda, pc, *bp, c[jc:], ldc)
		}
	}
}

// gemmPanel multiplies rows 0..m of op(A)[:, pc:pc+kc] by one packed B
// panel (kc x nc) into C. Work is split into tasks of one A block times a
// range of B slivers, enough tasks to keep every core busy even when m is
// small (matrix-vector shaped products).
func gemmPanel(parallel, transA bool, m, nc, kc int, alpha float32, a []float32, lda, pc int, bp []float32, c []float32, ldc int) {
	rowBlocks := (m + gemmMC - 1) / gemmMC
	slivers := (nc + gemmNR - 1) / gemmNR
	colChunks := 1
	workers := runtime.GOMAXPROCS(0)
	if parallel && rowBlocks < 2*workers {
		colChunks = min(slivers, (2*workers+rowBlocks-1)/rowBlocks)
	}
	perChunk := (slivers + colChunks - 1) / colChunks
	tasks := rowBlocks * colChunks
	run := func(lo, hi int) {
		ap := gemmGetPack(gemmMC * gemmKC)
		defer gemmPutPack(ap)
		for t := lo; t < hi; t++ {
			ic := (t / colChunks) * gemmMC
			mc := min(gemmMC, m-ic)
			s0 := (t % colChunks) * perChunk
			s1 := min(slivers, s0+perChunk)
			if s0 >= s1 {
				continue
			}
			gemmPackA(transA, a, lda, ic, mc, pc, kc, *ap)
			gemmMacroKernel(mc, nc, kc, alpha, *ap, bp, s0, s1, c[ic*ldc:], ldc)
		}
	}
	if !parallel {
		run(0, tasks)
		return
	}
	parallelFor(tasks, gemmMC*kc*perChunk*gemmNR, run)
}

// gemmMacroKernel runs the micro-kernel over B slivers s0..s1 and every A
// sliver of a packed mc x kc block, adding alpha*product into C.
func gemmMacroKernel(mc, nc, kc int, alpha float32, ap, bp []float32, s0, s1 int, c []float32, ldc int) {
	for s := s0; s < s1; s++ {
		j0 := s * gemmNR
		nr := min(gemmNR, nc-j0)
		bs := bp[s*kc*gemmNR : (s+1)*kc*gemmNR]
		for i0 := 0; i0 < mc; i0 += gemmMR {
			mr := min(gemmMR, mc-i0)
			as := ap[(i0/gemmMR)*kc*gemmMR : (i0/gemmMR+1)*kc*gemmMR]
			tile := gemmMicro2x4(as, bs)
			if mr == gemmMR && nr == gemmNR {
				r0 := c[i0*ldc+j0 : i0*ldc+j0+4 : i0*ldc+j0+4]
				r1 := c[(i0+1)*ldc+j0 : (i0+1)*ldc+j0+4 : (i0+1)*ldc+j0+4]
				r0[0] += alpha * tile[0]
				r0[1] += alpha * tile[1]
				r0[2] += alpha * tile[2]
				r0[3] += alpha * tile[3]
				r1[0] += alpha * tile[4]
				r1[1] += alpha * tile[5]
				r1[2] += alpha * tile[6]
				r1[3] += alpha * tile[7]
				continue
			}
			for i := 0; i < mr; i++ {
				row := c[(i0+i)*ldc+j0:]
				for j := 0; j < nr; j++ {
					row[j] += alpha * tile[i*gemmNR+j]
				}
			}
		}
	}
}

// gemmMicro2x4 returns the 2x4 product of a packed A sliver (kc pairs) and
// a packed B sliver (kc quadruples). The re-slicing at the top of the loop
// lets the compiler drop every bounds check inside it.
func gemmMicro2x4(ap, bp []float32) [8]float32 {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	for len(ap) >= 2 && len(bp) >= 4 {
		a := ap[:2:2]
		b := bp[:4:4]
		a0, a1 := a[0], a[1]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		ap = ap[2:]
		bp = bp[4:]
	}
	return [8]float32{c00, c01, c02, c03, c10, c11, c12, c13}
}

// gemmPackA copies op(A)[ic:ic+mc, pc:pc+kc] into gemmMR-row slivers, each laid
// out k-major (element (p, i) at p*gemmMR+i) and zero-padded to gemmMR rows.
func gemmPackA(trans bool, a []float32, lda, ic, mc, pc, kc int, dst []float32) {
	for i0 := 0; i0 < mc; i0 += gemmMR {
		s := dst[(i0/gemmMR)*kc*gemmMR : (i0/gemmMR+1)*kc*gemmMR]
		for i := 0; i < gemmMR; i++ {
			row := ic + i0 + i
			if i0+i >= mc {
				for p := 0; p < kc; p++ {
					s[p*gemmMR+i] = 0
				}
				continue
			}
			if trans {
				for p := 0; p < kc; p++ {
					s[p*gemmMR+i] = a[(pc+p)*lda+row]
				}
				continue
			}
			src := a[row*lda+pc : row*lda+pc+kc]
			for p, v := range src {
				s[p*gemmMR+i] = v
			}
		}
	}
}

// gemmPackB copies op(B)[pc:pc+kc, jc:jc+nc] into gemmNR-column slivers, each
// laid out k-major (element (p, j) at p*gemmNR+j) and zero-padded.
func gemmPackB(trans bool, b []float32, ldb, pc, kc, jc, nc int, dst []float32) {
	slivers := (nc + gemmNR - 1) / gemmNR
	parallelFor(slivers, kc*gemmNR, func(lo, hi int) {
		for sv := lo; sv < hi; sv++ {
			j0 := sv * gemmNR
			nr := min(gemmNR, nc-j0)
			s := dst[sv*kc*gemmNR : (sv+1)*kc*gemmNR]
			if nr < gemmNR {
				clear(s)
			}
			for j := 0; j < nr; j++ {
				col := jc + j0 + j
				if trans {
					src := b[col*ldb+pc : col*ldb+pc+kc]
					for p, v := range src {
						s[p*gemmNR+j] = v
					}
					continue
				}
				for p := 0; p < kc; p++ {
					s[p*gemmNR+j] = b[(pc+p)*ldb+col]
				}
			}
		}
	})
}

// gemmScaleC applies beta to C once, before any product is added.
func gemmScaleC(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmF32Naive adds alpha*op(A)*op(B) into C for products too small to pack.
func gemmF32Naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for p := 0; p < k; p++ {
			var av float32
			if transA {
				av = a[p*lda+i]
			} else {
				av = a[i*lda+p]
			}
			av *= alpha
			if transB {
				for j := range row {
					row[j] += av * b[j*ldb+p]
				}
				continue
			}
			brow := b[p*ldb : p*ldb+n]
			for j := range row {
				row[j] += av * brow[j]
			}
		}
	}
}

func gemmRoundUp(x, to int) int { return (x + to - 1) / to * to }

// gemmPackPool recycles packing buffers; sizes vary, so a buffer that is too
// small is dropped and replaced.
var gemmPackPool sync.Pool

func gemmGetPack(n int) *[]float32 {
	if p, ok := gemmPackPool.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

func gemmPutPack(p *[]float32) { gemmPackPool.Put(p) }
