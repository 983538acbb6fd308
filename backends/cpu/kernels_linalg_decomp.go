package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels of core/ops_linalg_decomp.go, the reference the GPU kernels are
// held to: every matrix is factored in float64 (f32 results are the f64
// ones rounded once), the matrices of a batch in parallel. The algorithms
// are LAPACK's where the result depends on them: LU with partial pivoting
// (the first largest pivot, a zero column skipped as getf2 does), a
// column Cholesky, Householder QR with geqrf's reflectors and orgqr's Q.
// eigh and svd (Jacobi) are in kernels_linalg_jacobi.go.

func init() {
	register("_solve", solveKernel)
	register("slogdet", slogdetKernel)
	register("cholesky", choleskyKernel)
	register("qr", qrKernel)
	register("eigh", eighKernel)
	register("svd", svdKernel)
}

// eachMatrix runs fn for every matrix index of a batch, in parallel; cost
// is the work of one.
func eachMatrix(batch, cost int, fn func(b int)) {
	parallelFor(batch, cost, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			fn(b)
		}
	})
}

// luEliminate factors the n x n row-major w in place (L's multipliers below
// the diagonal, U on and above it), applying the same row swaps and
// elimination to the n x k right-hand sides x, and returns the number of
// swaps. A column that is zero from the diagonal down is left as it is
// (LAPACK's getf2 does the same), so U's zero diagonal marks a singular
// matrix without NaN from 0/0.
func luEliminate(w []float64, n int, x []float64, k int) int {
	swaps := 0
	for c := 0; c < n; c++ {
		p, best := c, math.Abs(w[c*n+c])
		for i := c + 1; i < n; i++ {
			if v := math.Abs(w[i*n+c]); v > best {
				p, best = i, v
			}
		}
		if p != c {
			swaps++
			for j := 0; j < n; j++ {
				w[c*n+j], w[p*n+j] = w[p*n+j], w[c*n+j]
			}
			for j := 0; j < k; j++ {
				x[c*k+j], x[p*k+j] = x[p*k+j], x[c*k+j]
			}
		}
		piv := w[c*n+c]
		if piv == 0 {
			continue
		}
		for i := c + 1; i < n; i++ {
			l := w[i*n+c] / piv
			w[i*n+c] = l
			for j := c + 1; j < n; j++ {
				w[i*n+j] -= l * w[c*n+j]
			}
			for j := 0; j < k; j++ {
				x[i*k+j] -= l * x[c*k+j]
			}
		}
	}
	return swaps
}

// backSubstitute solves U X = Y in place for the upper triangle of w.
func backSubstitute(w []float64, n int, x []float64, k int) {
	for c := n - 1; c >= 0; c-- {
		d := w[c*n+c]
		for j := 0; j < k; j++ {
			v := x[c*k+j] / d
			x[c*k+j] = v
			for i := 0; i < c; i++ {
				x[i*k+j] -= w[i*n+c] * v
			}
		}
	}
}

func solveKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n, nrhs := d.N, b.Shape()[b.Rank()-1]
	av, x := readF64(a), readF64(b)
	eachMatrix(d.Batch, n*n*(n+nrhs), func(i int) {
		w, xs := av[i*n*n:(i+1)*n*n], x[i*n*nrhs:(i+1)*n*nrhs]
		luEliminate(w, n, xs, nrhs)
		backSubstitute(w, n, xs, nrhs)
	})
	writeF64(out, x)
	return nil
}

// slogdetOf is the sign and log|det| of a factored matrix: U's diagonal
// and the parity of the swaps; a zero pivot gives (0, -inf).
func slogdetOf(w []float64, n, swaps int) (float64, float64) {
	sign, logabs := 1.0, 0.0
	if swaps%2 == 1 {
		sign = -1
	}
	for c := 0; c < n; c++ {
		u := w[c*n+c]
		if u == 0 {
			return 0, math.Inf(-1)
		}
		if u < 0 {
			sign = -sign
		}
		logabs += math.Log(math.Abs(u))
	}
	return sign, logabs
}

func slogdetKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n := d.N
	av := readF64(a)
	sign, logabs := tempF64(d.Batch), tempF64(d.Batch)
	eachMatrix(d.Batch, n*n*n, func(i int) {
		w := av[i*n*n : (i+1)*n*n]
		sign[i], logabs[i] = slogdetOf(w, n, luEliminate(w, n, nil, 0))
	})
	writeF64(k.Outputs[0], sign)
	writeF64(k.Outputs[1], logabs)
	return nil
}

// choleskyInto writes the lower Cholesky factor of a's lower triangle into
// l (zeros above the diagonal), or its transpose when upper. A matrix that
// is not positive definite gives NaN from the square root of a negative
// pivot (or infinities from a zero one).
func choleskyInto(a []float64, n int, l []float64, upper bool) {
	at := func(i, j int) int {
		if upper {
			return j*n + i
		}
		return i*n + j
	}
	for j := 0; j < n; j++ {
		s := a[j*n+j]
		for p := 0; p < j; p++ {
			s -= l[at(j, p)] * l[at(j, p)]
		}
		dj := math.Sqrt(s)
		l[at(j, j)] = dj
		for i := j + 1; i < n; i++ {
			v := a[i*n+j]
			for p := 0; p < j; p++ {
				v -= l[at(i, p)] * l[at(j, p)]
			}
			l[at(i, j)] = v / dj
		}
	}
}

func choleskyKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n := d.N
	av, lv := readF64(a), tempF64(a.Numel())
	upper := k.Attrs.Bool("upper")
	eachMatrix(d.Batch, n*n*n/3+1, func(i int) {
		choleskyInto(av[i*n*n:(i+1)*n*n], n, lv[i*n*n:(i+1)*n*n], upper)
	})
	writeF64(k.Outputs[0], lv)
	return nil
}

// householder factors the m x n row-major w in place as geqr2 does: R on
// and above the diagonal, reflector j's vector below it (its first
// element 1 implied), its factor in tau[j]. The reflector of a column
// already zero below the diagonal is the identity (tau 0), as dlarfg's.
func householder(w []float64, m, n int, tau []float64) {
	for j := range tau {
		alpha, xnorm := w[j*n+j], 0.0
		for i := j + 1; i < m; i++ {
			xnorm = math.Hypot(xnorm, w[i*n+j])
		}
		if xnorm == 0 {
			tau[j] = 0
			continue
		}
		beta := -math.Copysign(math.Hypot(alpha, xnorm), alpha)
		tau[j] = (beta - alpha) / beta
		scale := 1 / (alpha - beta)
		for i := j + 1; i < m; i++ {
			w[i*n+j] *= scale
		}
		w[j*n+j] = beta
		for c := j + 1; c < n; c++ {
			s := w[j*n+c]
			for i := j + 1; i < m; i++ {
				s += w[i*n+j] * w[i*n+c]
			}
			s *= tau[j]
			w[j*n+c] -= s
			for i := j + 1; i < m; i++ {
				w[i*n+c] -= s * w[i*n+j]
			}
		}
	}
}

// formQ writes the first qc columns of H_0 ... H_(k-1) (m x qc, row-major)
// into q: the identity's columns with the reflectors applied last first,
// as orgqr builds Q.
func formQ(w []float64, m, n int, tau []float64, q []float64, qc int) {
	for i := 0; i < m; i++ {
		for c := 0; c < qc; c++ {
			q[i*qc+c] = 0
		}
		if i < qc {
			q[i*qc+i] = 1
		}
	}
	for j := len(tau) - 1; j >= 0; j-- {
		if tau[j] == 0 {
			continue
		}
		for c := j; c < qc; c++ {
			s := q[j*qc+c]
			for i := j + 1; i < m; i++ {
				s += w[i*n+j] * q[i*qc+c]
			}
			s *= tau[j]
			q[j*qc+c] -= s
			for i := j + 1; i < m; i++ {
				q[i*qc+c] -= s * w[i*n+j]
			}
		}
	}
}

func qrKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), false)
	if err != nil {
		return err
	}
	m, n, kk := d.M, d.N, d.K()
	qs, rs := d.QRShapes(k.Attrs.String("mode") == "complete")
	qc, rr := qs[len(qs)-1], rs[len(rs)-2]
	av := readF64(a)
	qv, rv := tempF64(qs.Numel()), tempF64(rs.Numel())
	eachMatrix(d.Batch, 4*m*n*max(m, n)+1, func(b int) {
		w := av[b*m*n : (b+1)*m*n]
		tau := make([]float64, kk)
		householder(w, m, n, tau)
		r := rv[b*rr*n : (b+1)*rr*n]
		for i := 0; i < rr; i++ {
			for c := i; c < n; c++ {
				r[i*n+c] = w[i*n+c]
			}
		}
		formQ(w, m, n, tau, qv[b*m*qc:(b+1)*m*qc], qc)
	})
	writeF64(k.Outputs[0], qv)
	writeF64(k.Outputs[1], rv)
	return nil
}
