package cpu

import (
	"sync"
)

// A cache-blocked float32 GEMM in the GotoBLAS layout: op(B) is packed into
// kc x nc panels of gemmNR-wide column slivers (a sliver stays in L1), op(A)
// into mc x kc blocks of gemmMR-tall row slivers (a block stays in L2), and a
// register-blocked micro-kernel multiplies one A sliver by one B sliver.
// Packing also absorbs the transposes, so the micro-kernel only ever streams
// two contiguous buffers.
//
// The micro-kernel is 4x2, unrolled 8 times along k, rather than the 4x8 or
// 8x8 of SIMD libraries. Go has no vector intrinsics (short of
// GOEXPERIMENT=simd) and its amd64 backend has 15 allocatable XMM registers;
// its scheduler also places the accumulator updates that feed the loop's
// phis at the end of the body, after every product of the last k step, so
// accumulators plus those products must fit: 8 + 8 do not spill much, 12 + 12
// do. Unrolling amortises the loop and slice overhead. Measured on the
// 2-core EPYC these machines use (kernel alone, data in L1, one core), in
// GFLOP/s: 4x2x8 ~11.5, 3x2x16 ~12, 2x4x8 ~10.5, plain 2x4 ~6.5, 4x4 ~4,
// 4x8 with accumulators in memory ~5. The whole GEMM reaches ~10 on one
// core and 16-19 on two at n=512 (BenchmarkMatmul512 in a quiet moment).
//
// Where the CPU has AVX2 and FMA (gemm_amd64.go), a 4x16 assembly
// micro-kernel takes over: B slivers are 16 columns wide and each k step is
// two vector loads, four broadcasts and eight fused multiply-adds. Fused
// multiply-adds round once per step instead of twice, so its results can
// differ from the Go kernel's in the last bits (they are closer to exact).
// Where the CPU also has AVX-512, the same kernel at 32 columns in zmm
// registers (gemm512_amd64.s) doubles the work per instruction: matmul 1024
// on one core 83 -> 140 GFLOP/s (BenchmarkMatmulOneThread, GODEBUG=
// cpu.avx512f=off for the AVX2 figure), with results equal bit for bit.
const (
	gemmKU = 8 // k unroll of the micro-kernel; packed slivers are zero-padded to it
	gemmKC = 256
	gemmMC = 64
	gemmNC = 1536 // a multiple of every kernel's gemmNR (16, 24, 32)
)

// gemmSmall is the m*n*k below which packing costs more than it saves.
// gemmNR is the width of a packed B sliver and gemmMicro the micro-kernel
// for it: it writes the gemmMR x gemmNR product of one A and one B sliver
// into tile. gemm_amd64.go swaps in the vector kernel where it can run.
//
// gemmMicroFull, where the CPU has one (nil elsewhere), is the vector
// micro-kernel that also does the tile's epilogue: for each whole A sliver
// in ap (one after another, each as long as bp's one B sliver allows) it
// writes a full gemmMR x gemmNR tile of C (row stride ldc, the slivers'
// tiles gemmMR rows apart) as 0 + alpha*product, or adds alpha*product
// with accumulate. It saves the tile buffer's round trip through memory
// and the Go loop over it, a fifth of a product's time.
//
// gemmMacro, where the build has one (nil elsewhere), replaces the whole
// macro-kernel (gemmMacroKernel's contract): the browser build's wasm SIMD
// kernel (gemm_wasmsimd.go), which costs a crossing into another module per
// call and so is called per A block, not per tile.
var (
	gemmMR        = 4 // rows of a packed A sliver: the micro-kernel's height
	gemmNR        = 2
	gemmMicro     = gemmMicro4x2Tile
	gemmMicroFull func(ap, bp, c []float32, ldc int, alpha float32, accumulate bool)
	gemmMicroRows gemmRowsKernel
	gemmMacro     func(store bool, mc, nc, kc int, alpha float32, ap, bp []float32, s0, s1 int, c []float32, ldc int)
)

// gemmRowsKernel is gemmMicroFull reading A in place instead of packed:
// slivers of gemmMR rows of a row-major A (row stride lda) from a[0], kc
// steps each (even), against one B sliver. MLAS's AVX2 kernels read A
// so; packing it was 3% of a MiniLM forward (the 4x8 transposes), for
// the same multiply-adds in the same order.
type gemmRowsKernel func(a []float32, lda, slivers, kc int, bp, c []float32, ldc int, alpha float32, accumulate bool)

// gemmKernel is a vector micro-kernel the CPU can run, as gemmMR, gemmNR,
// gemmMicro and gemmMicroFull take it; gemmVectorKernels lists them, the
// fastest last (what init picks), so that tests can run each.
type gemmKernel struct {
	name   string
	mr, nr int
	micro  func(ap, bp, tile []float32)
	full   func(ap, bp, c []float32, ldc int, alpha float32, accumulate bool)
	rows   gemmRowsKernel // nil: A is always packed
}

func (k gemmKernel) withRows(rows gemmRowsKernel) gemmKernel {
	k.rows = rows
	return k
}

// use makes k the kernel every product runs (packing follows its shape).
func (k gemmKernel) use() {
	gemmMR, gemmNR, gemmMicro, gemmMicroFull, gemmMicroRows = k.mr, k.nr, k.micro, k.full, k.rows
}

// current is the kernel in use, to restore after a test's use.
func currentGemmKernel() gemmKernel {
	return gemmKernel{"current", gemmMR, gemmNR, gemmMicro, gemmMicroFull, gemmMicroRows}
}

var gemmVectorKernels []gemmKernel

// gemmMaxMR and gemmMaxNR bound gemmMR and gemmNR (the size of a
// macro-kernel's tile buffer).
const gemmMaxMR, gemmMaxNR = 8, 32

func gemmMicro4x2Tile(ap, bp, tile []float32) {
	t := gemmMicro4x2(ap, bp)
	copy(tile, t[:])
}

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
	gemmF32Finish(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil, nil)
}

// gemmEpilogue finishes rows [r0, r1) and columns [c0, c1) of C once
// their products are complete (gemm_epilogue.go): the packed product
// calls it for each block as its last k panel is stored, while the block
// is still in cache; the other paths once for the whole of C.
type gemmEpilogue func(r0, r1, c0, c1 int)

// gemmF32Finish is gemmF32Run with an epilogue (nil: none).
//
// pre, when not nil, is b already packed (a constant weight, PackWeight):
// the blocked product reads its panels instead of packing b, and the other
// paths read b itself.
func gemmF32Finish(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, epi gemmEpilogue, pre *PackedMatrix) {
	if m <= 0 || n <= 0 {
		return
	}
	if alpha != 0 && gemmTakesBlocked(parallel, transA, transB, m, n, k) {
		gemmBlockedFinish(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epi, pre.valid())
		return
	}
	gemmUnblocked(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if epi != nil {
		epi(0, m, 0, n)
	}
}

// gemmTakesBlocked reports whether a product of these sizes (and a
// non-zero alpha) runs on the packed, blocked path.
func gemmTakesBlocked(parallel, transA, transB bool, m, n, k int) bool {
	blocked := k > 0 && m*n*k > gemmSmall && m != 1 && n != 1
	split := parallel && m*n <= gemmSplitMaxMN && k >= 2*gemmSplitPiece
	return blocked && !split && !gemmFewRowsFits(transA, transB, m, n, k)
}

// gemmUnblocked is every product gemmBlocked does not take.
func gemmUnblocked(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if gemmFewRowsFits(transA, transB, m, n, k) {
		gemmFewRowsTransB(parallel, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gemmScaleC(m, n, beta, c, ldc)
	switch {
	case k <= 0 || alpha == 0:
	case m*n*k <= gemmSmall:
		gemmF32Naive(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
	case m == 1 || n == 1:
		gemvF32(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
	default:
		gemmSplitK(transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
	}
}

// gemmBlocked is the packed product. With beta 0 the first k panel stores
// its products into C instead of adding them to a cleared C: one pass over
// C less, and no read of it in that panel (a tenth of a tall product with a
// short k, such as x W with 64 features).
func gemmBlocked(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmBlockedFinish(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil, nil)
}

func gemmBlockedFinish(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, epi gemmEpilogue, pre *PackedMatrix) {
	overwrite := beta == 0
	if !overwrite {
		gemmScaleC(m, n, beta, c, ldc)
	}
	var panel func(jc, pc int) []float32
	if pre != nil {
		panel = pre.panel
	} else {
		packed := gemmPackAllB(parallel, transB, b, ldb, k, n)
		defer gemmPutPack(packed.buf)
		panel = packed.panel
	}
	workers := 1
	if parallel {
		workers = NumThreads()
	}
	split := gemmSplitTasks(workers, m, n)
	run := func(lo, hi int) {
		ap := gemmGetPack(gemmMC * gemmKC)
		defer gemmPutPack(ap)
		for t := lo; t < hi; t++ {
			r0, r1, s0, s1 := split.task(t)
			gemmTask(transA, overwrite, r0, r1, s0, s1, n, k, alpha, a, lda, panel, c, ldc, epi, *ap)
		}
	}
	tasks := split.rowParts * split.colParts
	rows, cols := (m+split.rowParts-1)/split.rowParts, (n+split.colParts-1)/split.colParts
	if !parallel {
		run(0, tasks)
		return
	}
	parallelForTasks(tasks, max(rows*cols*k/4, 1), run)
}

// gemmTask computes rows r0..r1 of C over the columns of B slivers s0..s1
// (numbered across the whole of n: gemmNC is a multiple of gemmNR, so a
// sliver never straddles two column blocks), every k panel in turn. A task
// owns its block of C for the whole product, so tasks need no barrier
// between k panels: the product runs as one parallel step, where a step
// per panel (each with its own wait for the slowest core) lost a sixth of
// the second core on a ViT's 197-token products. Each mc-row block of C
// takes every k panel before the next block starts, so it stays in L2
// between them, and its epilogue runs as its last panel is stored.
func gemmTask(transA, overwrite bool, r0, r1, s0, s1, n, k int, alpha float32, a []float32, lda int, panel func(jc, pc int) []float32, c []float32, ldc int, epi gemmEpilogue, ap []float32) {
	for jc := (s0 * gemmNR / gemmNC) * gemmNC; jc < n && jc < s1*gemmNR; jc += gemmNC {
		nc := min(gemmNC, n-jc)
		first := jc / gemmNR
		ls0 := max(s0-first, 0)
		ls1 := min(s1-first, (nc+gemmNR-1)/gemmNR)
		for ic := r0; ic < r1; ic += gemmMC {
			mc := min(gemmMC, r1-ic)
			for pc := 0; pc < k; pc += gemmKC {
				kc := min(gemmKC, k-pc)
				if gemmReadsAInPlace(transA, mc, kc, nc, ls1) {
					gemmMacroKernelInPlace(overwrite && pc == 0, mc, kc, alpha, a[ic*lda+pc:], lda, panel(jc, pc), ls0, ls1, c[ic*ldc+jc:], ldc)
					continue
				}
				gemmPackA(transA, a, lda, ic, mc, pc, kc, ap)
				gemmMacroKernel(overwrite && pc == 0, mc, nc, kc, alpha, ap, panel(jc, pc), ls0, ls1, c[ic*ldc+jc:], ldc)
			}
			if epi != nil {
				epi(ic, ic+mc, jc+ls0*gemmNR, jc+min(nc, ls1*gemmNR))
			}
		}
	}
}

// gemmSplit cuts C into rowParts x colParts tasks of about equal area,
// one per worker: rows in whole A slivers where there are enough of them
// (each task packs only its own rows of A), else columns in whole B
// slivers as well (the tasks of a column split pack the same rows of A
// twice, which is the cheaper waste when m is a few slivers). Equal areas,
// not whole gemmMC blocks: 197 rows in blocks of 64 are 4 blocks, split
// 2 + 2 as 128 rows against 69. A tall C (two gemmMC blocks a worker or
// more) is cut into its gemmMC blocks instead (the last one taking the
// rows left over), claimed as threads come free: a task streams B's
// panels through the micro-kernel once per block either way, and a core
// that another tenant slows takes fewer blocks instead of holding the
// product at its end, where one task a worker left the other core idle
// for up to a whole share and four a worker for a quarter of one.
type gemmSplit struct {
	m, rowParts, colParts int
	mSlivers, nSlivers    int
	blocks                bool // rows by gemmMC blocks
}

// gemmMinPartSlivers is the fewest A slivers a row part gets: a thinner
// part repacks B's panels from L3 for too little work.
const gemmMinPartSlivers = 4

func gemmSplitTasks(workers, m, n int) gemmSplit {
	s := gemmSplit{m: m, rowParts: 1, colParts: 1}
	s.mSlivers = (m + gemmMR - 1) / gemmMR
	s.nSlivers = (n + gemmNR - 1) / gemmNR
	if workers <= 1 {
		return s
	}
	if m >= 2*workers*gemmMC {
		s.rowParts, s.blocks = m/gemmMC, true
		return s
	}
	s.rowParts = max(1, min(workers, s.mSlivers/gemmMinPartSlivers))
	if s.rowParts < workers {
		s.colParts = max(1, min(s.nSlivers, (workers+s.rowParts-1)/s.rowParts))
	}
	return s
}

// task is task t's rows r0..r1 and B slivers s0..s1.
func (s gemmSplit) task(t int) (r0, r1, s0, s1 int) {
	ri, ci := t/s.colParts, t%s.colParts
	if !s.blocks {
		r0 = ri * s.mSlivers / s.rowParts * gemmMR
		r1 = min(s.m, (ri+1)*s.mSlivers/s.rowParts*gemmMR)
	} else {
		// The first task takes the rows past the last whole block (the
		// larger task goes first, not last), in whole A slivers; the last
		// task the few left.
		extra := s.m - s.rowParts*gemmMC
		lead := extra - extra%gemmMR
		r0, r1 = ri*gemmMC+lead, (ri+1)*gemmMC+lead
		if ri == 0 {
			r0 = 0
		}
		if ri == s.rowParts-1 {
			r1 = s.m
		}
	}
	s0 = ci * s.nSlivers / s.colParts
	s1 = (ci + 1) * s.nSlivers / s.colParts
	return r0, r1, s0, s1
}

// A product with a small output and a long inner dim - a weight's
// gradient xᵀ g summed over 100k graph nodes, 64 x 100000 x 8 - has too
// few row blocks and slivers to keep the cores busy without every task
// packing the same A block (that packing was half such a product's time),
// and runs one short parallel step per kc panel. gemmSplitK cuts k instead,
// into pieces of a fixed size, so the result does not depend on the core
// count: each piece is a serial product into its own partial C, and the
// partials are added to C in order.
const (
	gemmSplitPiece = 16 * gemmKC
	gemmSplitMaxMN = 128 * 128 // partial C's stay small (pieces x m x n floats)
)

func gemmSplitK(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	pieces := (k + gemmSplitPiece - 1) / gemmSplitPiece
	parts := make([]float32, pieces*m*n)
	parallelFor(pieces, gemmSplitPiece*m*n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k0 := i * gemmSplitPiece
			// op(A)[:, k0:] starts k0 columns into A, or k0 rows into Aᵀ's
			// storage; op(B)[k0:, :] the other way round.
			ao, bo := k0, k0*ldb
			if transA {
				ao = k0 * lda
			}
			if transB {
				bo = k0
			}
			ap, bp := a[ao:], b[bo:]
			gemmF32Serial(transA, transB, m, n, min(gemmSplitPiece, k-k0), alpha, ap, lda, bp, ldb, 0, parts[i*m*n:(i+1)*m*n], n)
		}
	})
	parallelFor(m, n*pieces, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := c[r*ldc : r*ldc+n]
			for i := range pieces {
				for j, v := range parts[(i*m+r)*n : (i*m+r+1)*n] {
					row[j] += v
				}
			}
		}
	})
}

// gemmMacroKernel runs the micro-kernel over B slivers s0..s1 and every A
// sliver of a packed mc x kc block, adding alpha*product into C - or, with
// store, writing 0 + alpha*product: what adding to a cleared C gives, bit
// for bit (-0 included), without reading C.
func gemmMacroKernel(store bool, mc, nc, kc int, alpha float32, ap, bp []float32, s0, s1 int, c []float32, ldc int) {
	if gemmMacro != nil {
		gemmMacro(store, mc, nc, kc, alpha, ap, bp, s0, s1, c, ldc)
		return
	}
	kp := gemmRoundUp(kc, gemmKU)
	nrw, micro, full := gemmNR, gemmMicro, gemmMicroFull
	var buf [gemmMaxMR * gemmMaxNR]float32
	tile := buf[:gemmMR*nrw]
	for s := s0; s < s1; s++ {
		j0 := s * nrw
		nr := min(nrw, nc-j0)
		bs := bp[s*kp*nrw : (s+1)*kp*nrw]
		i0 := 0
		if full != nil && nr == nrw && mc >= gemmMR {
			// Every whole A sliver against this B sliver in one call.
			i0 = mc - mc%gemmMR
			full(ap[:i0*kp], bs, c[j0:], ldc, alpha, !store)
		}
		for ; i0 < mc; i0 += gemmMR {
			mr := min(gemmMR, mc-i0)
			as := ap[(i0/gemmMR)*kp*gemmMR : (i0/gemmMR+1)*kp*gemmMR]
			micro(as, bs, tile)
			if mr == gemmMR && nr == nrw {
				for i := 0; i < gemmMR; i++ {
					row := c[(i0+i)*ldc+j0 : (i0+i)*ldc+j0+nrw]
					t := tile[i*nrw : (i+1)*nrw]
					if store {
						for j, v := range t {
							row[j] = 0 + alpha*v
						}
						continue
					}
					for j, v := range t {
						row[j] += alpha * v
					}
				}
				continue
			}
			for i := 0; i < mr; i++ {
				row := c[(i0+i)*ldc+j0:]
				for j := 0; j < nr; j++ {
					if store {
						row[j] = 0 + alpha*tile[i*nrw+j]
					} else {
						row[j] += alpha * tile[i*nrw+j]
					}
				}
			}
		}
	}
}

// gemmPackAOnly turns gemmMicroRows off (tests compare the two paths).
var gemmPackAOnly bool

// gemmReadsAInPlace reports whether a block of mc rows, kc steps and B
// slivers up to s1 (of a column block nc wide) is whole tiles that
// gemmMicroRows can take with A unpacked: A not transposed, kc even.
func gemmReadsAInPlace(transA bool, mc, kc, nc, s1 int) bool {
	return gemmMicroRows != nil && !gemmPackAOnly && gemmMacro == nil && !transA &&
		kc%2 == 0 && mc%gemmMR == 0 && s1*gemmNR <= nc
}

// gemmMacroKernelInPlace is gemmMacroKernel for such a block: a (row
// stride lda) starts at the block's first row and k step.
func gemmMacroKernelInPlace(store bool, mc, kc int, alpha float32, a []float32, lda int, bp []float32, s0, s1 int, c []float32, ldc int) {
	kp := gemmRoundUp(kc, gemmKU)
	for s := s0; s < s1; s++ {
		gemmMicroRows(a, lda, mc/gemmMR, kc, bp[s*kp*gemmNR:(s+1)*kp*gemmNR], c[s*gemmNR:], ldc, alpha, !store)
	}
}

// gemmPackA copies op(A)[ic:ic+mc, pc:pc+kc] into gemmMR-row slivers, each
// laid out k-major (element (p, i) at p*gemmMR+i) and zero-padded to gemmMR
// rows and to a multiple of gemmKU steps.
func gemmPackA(trans bool, a []float32, lda, ic, mc, pc, kc int, dst []float32) {
	kp := gemmRoundUp(kc, gemmKU)
	start := 0
	if hostKernels && !trans && gemmMR == 4 && mc >= 4 && kc > 0 {
		start = mc &^ 3 // the full slivers, in the browser build's SIMD module
		hostPackA4(dst[:start*kp], a[ic*lda+pc:(ic+start-1)*lda+pc+kc], lda, start, kc, kp)
	}
	for i0 := start; i0 < mc; i0 += gemmMR {
		s := dst[(i0/gemmMR)*kp*gemmMR : (i0/gemmMR+1)*kp*gemmMR]
		clear(s[kc*gemmMR:])
		if trans && i0+gemmMR <= mc {
			// A full sliver of op(A) = Aᵀ is gemmMR adjacent elements of
			// each row of A: copy them row by row rather than walk gemmMR
			// strided columns one after another.
			for p := 0; p < kc; p++ {
				at := (pc+p)*lda + ic + i0
				for i, v := range a[at : at+gemmMR] {
					s[p*gemmMR+i] = v
				}
			}
			continue
		}
		if !trans && i0+gemmMR <= mc && gemmMR == 8 {
			// Eight rows of A transposed eight k steps at a time in vector
			// registers (transpose8Vec), the rest one step at a time.
			at := (ic+i0)*lda + pc
			done := transpose8Vec(s, gemmMR, a[at:], lda, kc)
			for p := done; p < kc; p++ {
				for i := range 8 {
					s[p*8+i] = a[at+i*lda+p]
				}
			}
			continue
		}
		if !trans && i0+gemmMR <= mc && gemmMR%4 == 0 {
			// A full sliver of A: four rows at a time read side by side and
			// each k step's four values written together, not gemmMR passes
			// that each scatter a row at stride gemmMR (packing was a tenth
			// of a MiniLM forward that way).
			// Eight k steps at a time in vector registers where the CPU
			// can (transpose4Vec: the scalar copy was 6% of a MiniLM
			// forward's samples on two cores, the vector one 3.5%, most of
			// it the reads of A from memory).
			for g := 0; g < gemmMR; g += 4 {
				at := (ic+i0+g)*lda + pc
				done := transpose4Vec(s[g:], gemmMR, a[at:], lda, kc)
				r0 := a[at : at+kc]
				r1 := a[at+lda : at+lda+kc][:len(r0)]
				r2 := a[at+2*lda : at+2*lda+kc][:len(r0)]
				r3 := a[at+3*lda : at+3*lda+kc][:len(r0)]
				for p := done; p < len(r0); p++ {
					d := s[p*gemmMR+g : p*gemmMR+g+4 : p*gemmMR+g+4]
					d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
				}
			}
			continue
		}
		for i := 0; i < gemmMR; i++ {
			row := ic + i0 + i
			switch {
			case i0+i >= mc:
				for p := 0; p < kc; p++ {
					s[p*gemmMR+i] = 0
				}
			case trans:
				for p := 0; p < kc; p++ {
					s[p*gemmMR+i] = a[(pc+p)*lda+row]
				}
			default:
				for p, v := range a[row*lda+pc : row*lda+pc+kc] {
					s[p*gemmMR+i] = v
				}
			}
		}
	}
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

// gemvF32 handles a C with one row or one column, a matrix-vector product:
// it is bound by streaming the matrix once, so packing (a second pass over
// the matrix, and padding the vector side to the micro-kernel's tile) only
// costs. Each output is a dot product when the matrix is read along its
// rows, otherwise the outputs accumulate whole matrix rows (axpy).
func gemvF32(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	// Name the matrix M (outs x k) and the vector v (k long) so both cases
	// read alike: C's i-th output is alpha * sum_p M(i, p) v(p).
	outs, mat, ldm, vec, incv, incc := m, a, lda, b, ldb, ldc
	rowsContiguous := !transA
	if transB {
		incv = 1
	}
	if m == 1 {
		outs, mat, ldm, vec, incv, incc = n, b, ldb, a, 1, 1
		rowsContiguous = transB
		if transA {
			incv = lda
		}
	}
	work := func(lo, hi int) {
		if rowsContiguous {
			dot := gemmDot
			if incv == 1 {
				dot = dotF32
			}
			for i := lo; i < hi; i++ {
				c[i*incc] += alpha * dot(mat[i*ldm:i*ldm+k], vec, incv)
			}
			return
		}
		acc := make([]float32, hi-lo)
		for p := 0; p < k; p++ {
			gemmAxpy(vec[p*incv], mat[p*ldm+lo:p*ldm+hi], acc)
		}
		for i, v := range acc {
			c[(lo+i)*incc] += alpha * v
		}
	}
	if !parallel {
		work(0, outs)
		return
	}
	parallelFor(outs, 2*k, work)
}

// gemmDot is the dot product of x with y read at stride incy, in four
// independent sums so the additions pipeline.
func gemmDot(x, y []float32, incy int) float32 {
	var s0, s1, s2, s3 float32
	n := len(x)
	i := 0
	if incy == 1 {
		y = y[:n]
		for ; i+4 <= n; i += 4 {
			xs, ys := x[i:i+4:i+4], y[i:i+4:i+4]
			s0 += xs[0] * ys[0]
			s1 += xs[1] * ys[1]
			s2 += xs[2] * ys[2]
			s3 += xs[3] * ys[3]
		}
	}
	for ; i < n; i++ {
		s0 += x[i] * y[i*incy]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotF32 is gemmDot of a contiguous y: the vector kernel (rdDotF32) over
// the largest multiple of 16 elements, gemmDot over the rest.
func dotF32(x, y []float32, _ int) float32 {
	body := vecBody(len(x))
	var s float32
	if body > 0 {
		s = vecDotF32(wide(), &x[0], &y[0], body)
	}
	return s + gemmDot(x[body:], y[body:len(x)], 1)
}

// gemmAxpy adds alpha*x to y.
func gemmAxpy(alpha float32, x, y []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += alpha * x[i]
	}
}

// gemmF32Naive adds alpha*op(A)*op(B) into C for products too small to pack.
func gemmF32Naive(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if transB && m > 1 && k*n <= gemmSmall {
		// Bᵀ stored: its columns are read n times over, each element a
		// stride apart (attention scores q·kᵀ of a few frames, 6% of a
		// TimeSformer forward). Transposed once into a k x n copy, the
		// loop below reads rows; the products and sums are the same.
		var bt [gemmSmall]float32
		for j := range n {
			for p, v := range b[j*ldb : j*ldb+k] {
				bt[p*n+j] = v
			}
		}
		b, ldb, transB = bt[:k*n], n, false
	}
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
