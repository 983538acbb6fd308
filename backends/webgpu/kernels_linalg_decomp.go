package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// The factorisations of core/ops_linalg_decomp.go: one workgroup per matrix
// runs the CPU backend's algorithm with its vector steps split over the
// workgroup (wgsl/linalg_factor.wgsl: LU, Cholesky, Householder QR;
// wgsl/linalg_jacobi.wgsl: Jacobi eigh and svd), f32 throughout. That is
// right for the small and medium matrices these ops see in models (a
// batch of many small matrices runs one workgroup each); one large matrix
// gets a single workgroup, so sizes are capped below (a bigger one would
// run for seconds in one dispatch, which drivers may cut off as hung):
// the error says so and names device cpu. Under a driver that limits
// loop iterations per thread (lavapipe: 65,535, gpu_looplimit.go) the cap
// is lower still, checked from each kernel's loop count: there, square
// matrices of about 170 on a side for solve with one right-hand side (128
// for inv, n of them), 190 for slogdet, 210 for cholesky, 125 for qr, 52
// for eigh and 36 for svd (32 columns for a full SVD of twice as many rows).

const (
	linalgWG = 64
	// linalgMaxFactor and linalgMaxJacobi cap a matrix's side for the
	// direct factorisations and for the Jacobi sweeps.
	linalgMaxFactor = 1024
	linalgMaxJacobi = 256
	// gpuSweeps bounds the Jacobi sweeps in f32 (convergence is quadratic:
	// under 10 sweeps for these sizes; a matrix that still rotates after
	// gpuSweeps keeps what it has).
	gpuSweeps = 24
	eps32     = 0x1p-23
)

// linalgStrides are the steps of the unrolled tree sums over a workgroup.
var linalgStrides = func() []int {
	var s []int
	for w := linalgWG / 2; w > 0; w /= 2 {
		s = append(s, w)
	}
	return s
}()

func cdiv(a, b int) int { return (a + b - 1) / b }

// linalgLaunch is one launch of a factorisation kernel over batch matrices:
// ins bound read-only, outs (outputs and scratch) read-write, each one's
// element offset in slot 10 + its position.
type linalgLaunch struct {
	family, mode string
	what         string // the work, for the size and loop-limit refusals
	side, max    int    // the matrix side that is capped, and the cap
	trips        int    // loop iterations one thread runs
	batch        int
	ins, outs    []*core.Tensor
	set          func(*params)
}

func (g *Backend) linalgRun(l linalgLaunch) error {
	if l.batch == 0 {
		return nil
	}
	if l.side > l.max {
		return fmt.Errorf("webgpu: %s: one workgroup factors each matrix, which takes sides up to %d here (got %d); use device cpu for larger matrices", l.what, l.max, l.side)
	}
	if err := g.checkTrips(l.what, l.trips); err != nil {
		return err
	}
	p, err := g.pipelineFor("linalg|"+l.family+"|"+l.mode, len(l.ins), len(l.outs), func() (string, error) {
		return wgsl.Render(l.family, map[string]any{"WG": linalgWG, "Mode": l.mode, "Strides": linalgStrides})
	})
	if err != nil {
		return err
	}
	var prm params
	prm.setN(0, l.batch)
	l.set(&prm)
	all := append(append([]*core.Tensor{}, l.ins...), l.outs...)
	for i, t := range all {
		prm.setN(10+i, t.Offset())
	}
	bufs, err := buffers(all...)
	if err != nil {
		return err
	}
	return g.run(p, &prm, l.batch*linalgWG, linalgWG, bufs...)
}

// dense is t as a contiguous tensor (a copy when it is a view).
func dense(t *core.Tensor) (*core.Tensor, error) {
	c := t.Contiguous()
	return c, c.Err()
}

func scratchF32(k *core.KernelCall, n int) (*core.Tensor, error) {
	return core.Empty(k.Backend, core.Shape{max(n, 1)}, core.F32)
}

// luTrips is the loop count of one thread of LU elimination of an n x n
// matrix with k right-hand sides, back substitution included.
func luTrips(n, k int) int {
	t := cdiv(n*n, linalgWG) + cdiv(n*k, linalgWG) + 2*n + 16
	for c := 0; c < n; c++ {
		r := n - c
		t += r + cdiv(n, linalgWG) + cdiv(k, linalgWG) + cdiv(r, linalgWG)*(1+r+k)
	}
	return t + cdiv(k, linalgWG)*(n+n*n/2)
}

func linalgSolveKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n, nrhs := d.N, b.Shape()[b.Rank()-1]
	if d.Batch*n*nrhs == 0 {
		return nil
	}
	if a, err = dense(a); err != nil {
		return err
	}
	if b, err = dense(b); err != nil {
		return err
	}
	w, err := scratchF32(k, d.Batch*n*n)
	if err != nil {
		return err
	}
	defer w.Release()
	return gpuOf(k).linalgRun(linalgLaunch{family: "linalg_factor", mode: "lu_solve",
		what: fmt.Sprintf("solve (LU) of %d x %d matrices with %d right-hand sides", n, n, nrhs), side: n, max: linalgMaxFactor,
		trips: luTrips(n, nrhs), batch: d.Batch, ins: []*core.Tensor{a, b}, outs: []*core.Tensor{out, w},
		set: func(p *params) { p.setN(1, n); p.setN(2, nrhs) }})
}

func linalgSlogdetKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n := d.N
	if a, err = dense(a); err != nil {
		return err
	}
	w, err := scratchF32(k, d.Batch*n*n)
	if err != nil {
		return err
	}
	defer w.Release()
	return gpuOf(k).linalgRun(linalgLaunch{family: "linalg_factor", mode: "lu_det",
		what: fmt.Sprintf("slogdet (LU) of %d x %d matrices", n, n), side: n, max: linalgMaxFactor,
		trips: luTrips(n, 0), batch: d.Batch, ins: []*core.Tensor{a}, outs: []*core.Tensor{k.Outputs[0], k.Outputs[1], w},
		set: func(p *params) { p.setN(1, n) }})
}

func linalgCholeskyKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n := d.N
	if d.Batch*n == 0 {
		return nil
	}
	if a, err = dense(a); err != nil {
		return err
	}
	trips := cdiv(n*n, linalgWG) + 16
	for j := 0; j < n; j++ {
		r := cdiv(n-j, linalgWG)
		trips += 1 + 2*r + r*(n-j)
	}
	upper := uint32(0)
	if k.Attrs.Bool("upper") {
		upper = 1
	}
	return gpuOf(k).linalgRun(linalgLaunch{family: "linalg_factor", mode: "chol",
		what: fmt.Sprintf("cholesky of %d x %d matrices", n, n), side: n, max: linalgMaxFactor,
		trips: trips, batch: d.Batch, ins: []*core.Tensor{a}, outs: []*core.Tensor{k.Outputs[0]},
		set: func(p *params) { p.setN(1, n); p.setU(3, upper) }})
}

func linalgQRKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), false)
	if err != nil {
		return err
	}
	m, n, kk := d.M, d.N, d.K()
	qs, rs := d.QRShapes(k.Attrs.String("mode") == "complete")
	qc, rr := qs[len(qs)-1], rs[len(rs)-2]
	if d.Batch*m == 0 {
		return nil
	}
	if a, err = dense(a); err != nil {
		return err
	}
	trips := cdiv(m*n, linalgWG) + cdiv(rr*n, linalgWG) + cdiv(m*qc, linalgWG) + 16
	for j := 0; j < kk; j++ {
		trips += 2 + (m - j) + cdiv(m-j, linalgWG) + cdiv(n-j, linalgWG)*2*(m-j) + cdiv(qc-j, linalgWG)*2*(m-j)
	}
	w, err := scratchF32(k, d.Batch*m*n)
	if err != nil {
		return err
	}
	defer w.Release()
	tau, err := scratchF32(k, d.Batch*kk)
	if err != nil {
		return err
	}
	defer tau.Release()
	return gpuOf(k).linalgRun(linalgLaunch{family: "linalg_factor", mode: "qr",
		what: fmt.Sprintf("qr of %d x %d matrices", m, n), side: max(m, n), max: linalgMaxFactor,
		trips: trips, batch: d.Batch, ins: []*core.Tensor{a}, outs: []*core.Tensor{k.Outputs[0], k.Outputs[1], w, tau},
		set: func(p *params) { p.setN(1, m); p.setN(2, n); p.setN(4, qc); p.setN(5, rr) }})
}

func linalgEighKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), true)
	if err != nil {
		return err
	}
	n := d.N
	if d.Batch*n == 0 {
		return nil
	}
	if a, err = dense(a); err != nil {
		return err
	}
	trips := cdiv(n*n, linalgWG) + gpuSweeps*(n*(n-1)/2*(1+cdiv(n, linalgWG))+n) + cdiv(n, linalgWG)*3*n + 16
	x, err := scratchF32(k, d.Batch*2*n*n)
	if err != nil {
		return err
	}
	defer x.Release()
	return gpuOf(k).linalgRun(linalgLaunch{family: "linalg_jacobi", mode: "eigh",
		what: fmt.Sprintf("eigh (Jacobi) of %d x %d matrices", n, n), side: n, max: linalgMaxJacobi,
		trips: trips, batch: d.Batch, ins: []*core.Tensor{a}, outs: []*core.Tensor{k.Outputs[0], k.Outputs[1], x},
		set: func(p *params) { p.setN(1, n); p.setN(4, gpuSweeps); p.setF(5, eps32) }})
}

func linalgSVDKernel(k *core.KernelCall) error {
	a := k.Inputs[0]
	d, err := oprules.PlanDecomp(a.Shape(), false)
	if err != nil {
		return err
	}
	m, n := d.M, d.N
	us, _, vhs := d.SVDShapes(k.Attrs.Bool("full_matrices"))
	uc, vr := us[len(us)-1], vhs[len(vhs)-2]
	rows, cols := max(m, n), min(m, n)
	lc := cols // the left factor's columns: U's (tall) or Vh's rows (wide)
	if (m >= n && uc == m) || (m < n && vr == n) {
		lc = rows
	}
	if d.Batch*rows == 0 {
		return nil
	}
	if a, err = dense(a); err != nil {
		return err
	}
	rw := cdiv(rows, linalgWG)
	trips := cdiv(rows*cols, linalgWG) + cdiv(cols*cols, linalgWG) + cdiv(rows*lc, linalgWG) + cdiv(lc, linalgWG) + 16
	trips += gpuSweeps * (cols*(cols-1)/2*(1+2*rw+cdiv(cols, linalgWG)) + cols)
	trips += cdiv(cols, linalgWG)*(2*rows+2*cols) + rw*lc + lc*(3+rows+rw*(lc+2)) + cdiv(lc, linalgWG)*(rows+m+n)
	x, err := scratchF32(k, d.Batch*(rows*cols+2*cols*cols+rows*lc+cols+lc+rows))
	if err != nil {
		return err
	}
	defer x.Release()
	return gpuOf(k).linalgRun(linalgLaunch{family: "linalg_jacobi", mode: "svd",
		what: fmt.Sprintf("svd (one-sided Jacobi) of %d x %d matrices", m, n), side: cols, max: linalgMaxJacobi,
		trips: trips, batch: d.Batch, ins: []*core.Tensor{a}, outs: []*core.Tensor{k.Outputs[0], k.Outputs[1], k.Outputs[2], x},
		set: func(p *params) {
			p.setN(1, m)
			p.setN(2, n)
			p.setN(3, lc)
			p.setN(4, gpuSweeps)
			p.setF(5, eps32)
			p.setN(6, uc)
			p.setN(7, vr)
		}})
}

func init() {
	register("_solve", linalgSolveKernel)
	register("slogdet", linalgSlogdetKernel)
	register("cholesky", linalgCholeskyKernel)
	register("qr", linalgQRKernel)
	register("eigh", linalgEighKernel)
	register("svd", linalgSVDKernel)
}
