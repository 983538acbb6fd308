package oprules

import "fmt"

// The geometry of the matrix factorisations (cholesky, qr, eigh, svd,
// slogdet, _solve): a stack of matrices over the leading (batch) dims.

// Decomp is a batch of M x N matrices: Batch matrices in all, over the
// batch dims Lead.
type Decomp struct {
	Lead        Shape
	Batch, M, N int
}

// K is the number of reflectors, singular values or pivots: min(M, N).
func (d Decomp) K() int { return min(d.M, d.N) }

// PlanDecomp reads the matrices of a shape of rank >= 2; square requires
// M == N (what cholesky, eigh, slogdet and solve factor).
func PlanDecomp(s Shape, square bool) (Decomp, error) {
	if len(s) < 2 {
		return Decomp{}, fmt.Errorf("need a matrix or a stack of matrices (rank >= 2), got shape %v", s)
	}
	r := len(s)
	d := Decomp{Lead: s[:r-2].Clone(), M: s[r-2], N: s[r-1]}
	if square && d.M != d.N {
		return Decomp{}, fmt.Errorf("need square matrices, got %d x %d (shape %v)", d.M, d.N, s)
	}
	d.Batch = d.Lead.Numel()
	return d, nil
}

// With is the shape of the batch dims followed by dims.
func (d Decomp) With(dims ...int) Shape { return append(d.Lead.Clone(), dims...) }

// QRShapes is the shapes of Q and R for mode "reduced" (Q: M x K, R: K x
// N) or "complete" (Q: M x M, R: M x N).
func (d Decomp) QRShapes(complete bool) (q, r Shape) {
	if complete {
		return d.With(d.M, d.M), d.With(d.M, d.N)
	}
	return d.With(d.M, d.K()), d.With(d.K(), d.N)
}

// SVDShapes is the shapes of U, S and Vh: U M x M and Vh N x N with full
// matrices, else M x K and K x N.
func (d Decomp) SVDShapes(full bool) (u, s, vh Shape) {
	k := d.K()
	if full {
		return d.With(d.M, d.M), d.With(k), d.With(d.N, d.N)
	}
	return d.With(d.M, k), d.With(k), d.With(k, d.N)
}
