package cpu

// A product with a few rows against a transposed operand, x Wᵀ for a
// handful of tokens (a decoder verifying a draft, a prefill of the forced
// tokens, a small batch), is bound by reading W once: the packed path
// copies all of W into slivers first (as much memory traffic as the product
// itself, and most of a step's time at 2-8 rows) to feed a micro-kernel
// that then has almost no rows to reuse the copy for. gemmFewRowsTransB
// reads each row of W once, in place, and takes its dot product with every
// row of A while it is in L1 - the same dot gemvF32 takes for one row, in
// the same order, so a row's outputs do not depend on how many rows came
// with it: a draft verified as 4 rows gives the bits 4 single-row steps
// give.
const gemmFewRows = 8

// gemmFewRowsFits reports whether C = alpha*A*Bᵀ + beta*C goes through
// gemmFewRowsTransB: a few rows, B transposed (each output a dot product of
// two contiguous rows), A not transposed, dots long enough for the vector
// kernel, and the sizes at which one row of A takes gemvF32 (n*k past
// gemmSmall) and many rows would not split k (gemmSplitK).
func gemmFewRowsFits(transA, transB bool, m, n, k int) bool {
	return transB && !transA && m > 1 && m <= gemmFewRows && n > 1 && n*k > gemmSmall &&
		k >= 16 && k < 2*gemmSplitPiece
}

// gemmFewRowsTransB computes C = alpha*A*Bᵀ + beta*C for A m x k and B
// n x k, row-major, splitting B's rows across cores.
func gemmFewRowsTransB(parallel bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmScaleC(m, n, beta, c, ldc)
	if alpha == 0 {
		return
	}
	work := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			w := b[j*ldb : j*ldb+k]
			for i := range m {
				c[i*ldc+j] += alpha * dotF32(w, a[i*lda:i*lda+k], 1)
			}
		}
	}
	if !parallel {
		work(0, n)
		return
	}
	parallelFor(n, 2*k*m, work)
}
