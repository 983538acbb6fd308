package cpu

import (
	"math"
	"sort"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// eigh and svd by Jacobi rotations: cyclic two-sided Jacobi on the
// symmetric matrix for eigh, one-sided (Hestenes) Jacobi on the columns
// for svd, which keeps the small singular values' relative accuracy that
// the eigenvalues of AᵀA lose. Both sweep until no rotation is needed: a
// pair is left alone once its off-diagonal element (or the columns' dot
// product) is below eps times the geometric mean of the diagonal pair
// (the columns' norms). Then the results are sorted and their signs fixed
// as core/ops_linalg_decomp.go describes.

// jacobiSweeps bounds the sweeps; converged matrices stop far earlier
// (quadratic convergence: under 10 sweeps for the sizes seen in practice).
const jacobiSweeps = 60

const eps64 = 0x1p-52

// rotation is the Jacobi rotation (c, s) that zeroes the off-diagonal
// element of [[app, apq], [apq, aqq]], with t = s/c the smaller root.
func rotation(app, aqq, apq float64) (c, s, t float64) {
	theta := (aqq - app) / (2 * apq)
	t = 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
	if theta < 0 {
		t = -t
	}
	c = 1 / math.Sqrt(t*t+1)
	return c, t * c, t
}

// negligible says whether x is too small against sqrt(a*b) to rotate for.
func negligible(x, a, b float64) bool {
	return x == 0 || math.Abs(x) <= eps64*math.Sqrt(math.Abs(a))*math.Sqrt(math.Abs(b))
}

// jacobiEigh diagonalises the n x n symmetric w in place (its diagonal
// ends up holding the eigenvalues) and accumulates the rotations in v.
func jacobiEigh(w, v []float64, n int) {
	for i := range v {
		v[i] = 0
	}
	for i := 0; i < n; i++ {
		v[i*n+i] = 1
	}
	for sweep := 0; sweep < jacobiSweeps; sweep++ {
		rotated := false
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				app, aqq, apq := w[p*n+p], w[q*n+q], w[p*n+q]
				if negligible(apq, app, aqq) {
					continue
				}
				rotated = true
				c, s, t := rotation(app, aqq, apq)
				for k := 0; k < n; k++ {
					if k == p || k == q {
						continue
					}
					akp, akq := w[k*n+p], w[k*n+q]
					w[k*n+p], w[k*n+q] = c*akp-s*akq, s*akp+c*akq
					w[p*n+k], w[q*n+k] = w[k*n+p], w[k*n+q]
				}
				w[p*n+p], w[q*n+q] = app-t*apq, aqq+t*apq
				w[p*n+q], w[q*n+p] = 0, 0
				for k := 0; k < n; k++ {
					vkp, vkq := v[k*n+p], v[k*n+q]
					v[k*n+p], v[k*n+q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
		if !rotated {
			return
		}
	}
}

// jacobiColumns orthogonalises the columns of the rows x cols row-major w
// in place by one-sided Jacobi, accumulating the rotations in v (cols x cols).
func jacobiColumns(w []float64, rows, cols int, v []float64) {
	for i := range v {
		v[i] = 0
	}
	for i := 0; i < cols; i++ {
		v[i*cols+i] = 1
	}
	for sweep := 0; sweep < jacobiSweeps; sweep++ {
		rotated := false
		for p := 0; p < cols-1; p++ {
			for q := p + 1; q < cols; q++ {
				var alpha, beta, gamma float64
				for i := 0; i < rows; i++ {
					wp, wq := w[i*cols+p], w[i*cols+q]
					alpha += wp * wp
					beta += wq * wq
					gamma += wp * wq
				}
				if negligible(gamma, alpha, beta) {
					continue
				}
				rotated = true
				c, s, _ := rotation(alpha, beta, gamma)
				for i := 0; i < rows; i++ {
					wp, wq := w[i*cols+p], w[i*cols+q]
					w[i*cols+p], w[i*cols+q] = c*wp-s*wq, s*wp+c*wq
				}
				for i := 0; i < cols; i++ {
					vp, vq := v[i*cols+p], v[i*cols+q]
					v[i*cols+p], v[i*cols+q] = c*vp-s*vq, s*vp+c*vq
				}
			}
		}
		if !rotated {
			return
		}
	}
}

// order is the permutation that sorts vals ascending (descending when
// desc), NaN last and ties in index order: a total order, so that every
// backend (the GPUs rank each value against the others) places NaN alike.
func order(vals []float64, desc bool) []int {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return before(vals[idx[a]], vals[idx[b]], desc) })
	return idx
}

// before says whether x sorts before y: smaller (larger when desc), or a
// number before NaN.
func before(x, y float64, desc bool) bool {
	if desc {
		return x > y || (!math.IsNaN(x) && math.IsNaN(y))
	}
	return x < y || (!math.IsNaN(x) && math.IsNaN(y))
}

// signOfLargest is the sign that makes column c of the rows x cols
// row-major u have its largest-magnitude element (the first of equal
// ones) positive.
func signOfLargest(u []float64, rows, cols, c int) float64 {
	best, at := -1.0, 0
	for i := 0; i < rows; i++ {
		if v := math.Abs(u[i*cols+c]); v > best {
			best, at = v, i
		}
	}
	if u[at*cols+c] < 0 {
		return -1
	}
	return 1
}

// completeColumns fills the columns of the rows x cols row-major u not
// marked in have, in index order, with an orthonormal completion of the
// marked ones: the unit vector e_p whose residual 1 - Σ u[p][j]² against
// the columns so far is largest (the first of equal ones), minus its
// projection on them, normalised. That is the same answer for the same
// subspace, whatever basis of it the columns are: how the reference
// completes PyTorch's factors too.
func completeColumns(u []float64, rows, cols int, have []bool) {
	for c := 0; c < cols; c++ {
		if have[c] {
			continue
		}
		p, best := 0, -1.0
		for i := 0; i < rows; i++ {
			r := 1.0
			for j := 0; j < cols; j++ {
				if have[j] {
					r -= u[i*cols+j] * u[i*cols+j]
				}
			}
			if r > best {
				p, best = i, r
			}
		}
		norm := 0.0
		for i := 0; i < rows; i++ {
			v := 0.0
			if i == p {
				v = 1
			}
			for j := 0; j < cols; j++ {
				if have[j] {
					v -= u[p*cols+j] * u[i*cols+j]
				}
			}
			u[i*cols+c] = v
			norm += v * v
		}
		norm = math.Sqrt(norm)
		for i := 0; i < rows; i++ {
			u[i*cols+c] /= norm
		}
		have[c] = true
	}
}

func eighKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n := d.N
	av := readF64(a)
	vals, vecs := tempF64(d.Batch*n), tempF64(a.Numel())
	eachMatrix(d.Batch, 8*n*n*n+1, func(b int) {
		w := av[b*n*n : (b+1)*n*n]
		for i := 0; i < n; i++ { // the lower triangle, mirrored
			for j := i + 1; j < n; j++ {
				w[i*n+j] = w[j*n+i]
			}
		}
		v := make([]float64, n*n)
		jacobiEigh(w, v, n)
		lam := make([]float64, n)
		for i := range lam {
			lam[i] = w[i*n+i]
		}
		out := vecs[b*n*n : (b+1)*n*n]
		for r, i := range order(lam, false) {
			vals[b*n+r] = lam[i]
			for row := 0; row < n; row++ {
				out[row*n+r] = v[row*n+i]
			}
		}
		for c := 0; c < n; c++ {
			if signOfLargest(out, n, n, c) < 0 {
				for row := 0; row < n; row++ {
					out[row*n+c] = -out[row*n+c]
				}
			}
		}
	})
	writeF64(k.Outputs[0], vals)
	writeF64(k.Outputs[1], vecs)
	return nil
}

// svdOne factors the m x n row-major a: u (m x uc), s (min(m, n)) and
// vh (vr x n), uc and vr being m and n for full matrices, else min(m, n).
// A wide matrix is factored as its transpose (tall), whose factors swap.
func svdOne(a []float64, m, n int, u, s, vh []float64, uc, vr int) {
	tall := m >= n
	rows, cols := m, n
	if !tall {
		rows, cols = n, m
	}
	w := make([]float64, rows*cols)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if tall {
				w[i*cols+j] = a[i*n+j]
			} else {
				w[j*cols+i] = a[i*n+j]
			}
		}
	}
	v := make([]float64, cols*cols)
	jacobiColumns(w, rows, cols, v)
	sig := make([]float64, cols)
	for j := range sig {
		for i := 0; i < rows; i++ {
			sig[j] += w[i*cols+j] * w[i*cols+j]
		}
		sig[j] = math.Sqrt(sig[j])
	}
	// The tall factors: left (rows x lc) from the normalised columns,
	// right (cols x cols) from the rotations, both sorted by sig.
	lc := cols
	if (tall && uc == m) || (!tall && vr == n) {
		lc = rows
	}
	left, right := make([]float64, rows*lc), make([]float64, cols*cols)
	have := make([]bool, lc)
	for r, j := range order(sig, true) {
		s[r] = sig[j]
		for i := 0; i < cols; i++ {
			right[i*cols+r] = v[i*cols+j]
		}
		if sig[j] == 0 {
			continue // no direction: completed below
		}
		for i := 0; i < rows; i++ {
			left[i*lc+r] = w[i*cols+j] / sig[j]
		}
		have[r] = true
	}
	completeColumns(left, rows, lc, have)
	// U's columns are the left factor's (tall) or the right one's (wide):
	// flip each with its partner so U's largest element is positive.
	for r := 0; r < cols; r++ {
		var sg float64
		if tall {
			sg = signOfLargest(left, rows, lc, r)
		} else {
			sg = signOfLargest(right, cols, cols, r)
		}
		if sg > 0 {
			continue
		}
		for i := 0; i < rows; i++ {
			left[i*lc+r] = -left[i*lc+r]
		}
		for i := 0; i < cols; i++ {
			right[i*cols+r] = -right[i*cols+r]
		}
	}
	if tall { // U = left, Vh = rightᵀ
		copy(u, left)
		for r := 0; r < cols; r++ {
			for j := 0; j < n; j++ {
				vh[r*n+j] = right[j*cols+r]
			}
		}
		return
	}
	copy(u, right) // U = right (m x m), Vh = leftᵀ (vr x n)
	for r := 0; r < vr; r++ {
		for j := 0; j < n; j++ {
			vh[r*n+j] = left[j*lc+r]
		}
	}
}

func svdKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), false)
	if err != nil {
		return err
	}
	m, n, kk := d.M, d.N, d.K()
	us, _, vhs := d.SVDShapes(k.Attrs.Bool("full_matrices"))
	uc, vr := us[len(us)-1], vhs[len(vhs)-2]
	av := readF64(a)
	uv, sv, vhv := tempF64(us.Numel()), tempF64(d.Batch*kk), tempF64(vhs.Numel())
	eachMatrix(d.Batch, 16*m*n*max(m, n)+1, func(b int) {
		svdOne(av[b*m*n:(b+1)*m*n], m, n, uv[b*m*uc:(b+1)*m*uc], sv[b*kk:(b+1)*kk], vhv[b*vr*n:(b+1)*vr*n], uc, vr)
	})
	writeF64(k.Outputs[0], uv)
	writeF64(k.Outputs[1], sv)
	writeF64(k.Outputs[2], vhv)
	return nil
}
