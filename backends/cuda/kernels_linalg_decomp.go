//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// The factorisations of core/ops_linalg_decomp.go (cu/linalg.cuh,
// cu/linalg_svd.cuh): one block of 64 threads per matrix runs the CPU
// backend's algorithm, f32 tensors in f32 and f64 in f64, the grid striding
// over the batch. That serves the small and medium matrices of a model and
// batches of them; a single large matrix still gets one block (cuSOLVER's
// blocked algorithms would be the way to a fast large factorisation), so
// sides are capped where one block would run for seconds: the error says
// so and names device cpu. CUDA has no loop limit, so f32 gets the Jacobi
// sweeps f64 gets on the CPU.

var linalgLib = mustRead("cu/linalg.cuh") + mustRead("cu/linalg_svd.cuh")

const (
	laBlock = 64
	// laMaxFactor and laMaxJacobi cap a matrix's side for the direct
	// factorisations and for the Jacobi sweeps.
	laMaxFactor = 4096
	laMaxJacobi = 1024
	laSweeps    = 60
)

// laRun launches fn ("wt_lu<T>(A, true)", ...) over batch matrices with the
// operands in order (each contiguous) and the sizes in A.s.
func (b *Backend) laRun(op, call string, batch int, side, limit int, ops []*core.Tensor, s ...int) error {
	if batch == 0 {
		return nil
	}
	if side > limit {
		return fmt.Errorf("cuda: %s: one block factors each matrix, which takes sides up to %d here (got %d); use device cpu for larger matrices", op, limit, side)
	}
	var a wtArgs
	for i, t := range ops {
		p, err := ptrOf(t)
		if err != nil {
			return err
		}
		a.Buf[i], a.Off[i] = p, int64(t.Offset())
	}
	a.S[0] = int64(batch)
	for i, v := range s {
		a.S[1+i] = int64(v)
	}
	typ := storageType(ops[0].DType())
	key := "linalg|" + call + "|" + typ
	k, err := b.kernelFor(key, func() (string, error) {
		return linalgLib + "typedef " + typ + " T;\nextern \"C\" __global__ void __launch_bounds__(64) " + entry +
			"(const WtArgs A) {\n" + call + ";\n}\n", nil
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", op, err)
	}
	grid := [3]uint32{uint32(min(batch, max(b.props.sms, 1)*32)), 1, 1}
	return b.launch(launchSpec{op: op, k: k, grid: grid, block: laBlock}, &a)
}

// contiguousAll makes each tensor dense (a copy of a view; nil stays nil).
func contiguousAll(ts ...*core.Tensor) ([]*core.Tensor, error) {
	out := make([]*core.Tensor, len(ts))
	for i, t := range ts {
		if t == nil {
			continue // an absent optional input
		}
		out[i] = t.Contiguous()
		if err := out[i].Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *Backend) laScratch(n int, d core.DType) (*core.Tensor, error) {
	return b.scratch(max(n, 1), d)
}

func laSolveKernel(k *core.KernelCall) error {
	d, err := oprules.PlanDecomp(k.Inputs[0].Shape(), true)
	if err != nil {
		return err
	}
	in, err := contiguousAll(k.Inputs[0], k.Inputs[1])
	if err != nil {
		return err
	}
	b, out := in[1], k.Outputs[0]
	n, nrhs := d.N, b.Shape()[b.Rank()-1]
	if d.Batch*n*nrhs == 0 {
		return nil
	}
	g := cudaOf(k)
	w, err := g.laScratch(d.Batch*n*n, out.DType())
	if err != nil {
		return err
	}
	defer w.Release()
	return g.laRun("_solve", "wt_lu<T>(A, true)", d.Batch, n, laMaxFactor, []*core.Tensor{in[0], b, out, w}, n, nrhs)
}

func laSlogdetKernel(k *core.KernelCall) error {
	d, err := oprules.PlanDecomp(k.Inputs[0].Shape(), true)
	if err != nil {
		return err
	}
	in, err := contiguousAll(k.Inputs[0])
	if err != nil {
		return err
	}
	g := cudaOf(k)
	w, err := g.laScratch(d.Batch*d.N*d.N, in[0].DType())
	if err != nil {
		return err
	}
	defer w.Release()
	return g.laRun("slogdet", "wt_lu<T>(A, false)", d.Batch, d.N, laMaxFactor, []*core.Tensor{in[0], k.Outputs[0], k.Outputs[1], w}, d.N, 0)
}

func laCholeskyKernel(k *core.KernelCall) error {
	d, err := oprules.PlanDecomp(k.Inputs[0].Shape(), true)
	if err != nil || d.N == 0 {
		return err
	}
	in, err := contiguousAll(k.Inputs[0])
	if err != nil {
		return err
	}
	upper := 0
	if k.Attrs.Bool("upper") {
		upper = 1
	}
	return cudaOf(k).laRun("cholesky", "wt_cholesky<T>(A)", d.Batch, d.N, laMaxFactor, []*core.Tensor{in[0], k.Outputs[0]}, d.N, upper)
}

func laQRKernel(k *core.KernelCall) error {
	d, err := oprules.PlanDecomp(k.Inputs[0].Shape(), false)
	if err != nil || d.M == 0 {
		return err
	}
	qs, rs := d.QRShapes(k.Attrs.String("mode") == "complete")
	qc, rr := qs[len(qs)-1], rs[len(rs)-2]
	in, err := contiguousAll(k.Inputs[0])
	if err != nil {
		return err
	}
	g, dt := cudaOf(k), in[0].DType()
	w, err := g.laScratch(d.Batch*d.M*d.N, dt)
	if err != nil {
		return err
	}
	defer w.Release()
	tau, err := g.laScratch(d.Batch*d.K(), dt)
	if err != nil {
		return err
	}
	defer tau.Release()
	return g.laRun("qr", "wt_qr<T>(A)", d.Batch, max(d.M, d.N), laMaxFactor,
		[]*core.Tensor{in[0], k.Outputs[0], k.Outputs[1], w, tau}, d.M, d.N, qc, rr)
}

func laEighKernel(k *core.KernelCall) error {
	d, err := oprules.PlanDecomp(k.Inputs[0].Shape(), true)
	if err != nil || d.N == 0 {
		return err
	}
	in, err := contiguousAll(k.Inputs[0])
	if err != nil {
		return err
	}
	g := cudaOf(k)
	x, err := g.laScratch(d.Batch*2*d.N*d.N, in[0].DType())
	if err != nil {
		return err
	}
	defer x.Release()
	return g.laRun("eigh", "wt_eigh<T>(A)", d.Batch, d.N, laMaxJacobi,
		[]*core.Tensor{in[0], k.Outputs[0], k.Outputs[1], x}, d.N, laSweeps)
}

func laSVDKernel(k *core.KernelCall) error {
	d, err := oprules.PlanDecomp(k.Inputs[0].Shape(), false)
	if err != nil {
		return err
	}
	m, n := d.M, d.N
	rows, cols := max(m, n), min(m, n)
	if rows == 0 {
		return nil
	}
	us, _, vhs := d.SVDShapes(k.Attrs.Bool("full_matrices"))
	uc, vr := us[len(us)-1], vhs[len(vhs)-2]
	lc := cols // the left factor's columns: U's (tall) or Vh's rows (wide)
	if (m >= n && uc == m) || (m < n && vr == n) {
		lc = rows
	}
	in, err := contiguousAll(k.Inputs[0])
	if err != nil {
		return err
	}
	g := cudaOf(k)
	x, err := g.laScratch(d.Batch*(rows*cols+2*cols*cols+rows*lc+cols+lc+rows), in[0].DType())
	if err != nil {
		return err
	}
	defer x.Release()
	return g.laRun("svd", "wt_svd<T>(A)", d.Batch, cols, laMaxJacobi,
		[]*core.Tensor{in[0], k.Outputs[0], k.Outputs[1], k.Outputs[2], x}, m, n, lc, uc, vr, laSweeps)
}

func init() {
	register("_solve", laSolveKernel)
	register("slogdet", laSlogdetKernel)
	register("cholesky", laCholeskyKernel)
	register("qr", laQRKernel)
	register("eigh", laEighKernel)
	register("svd", laSVDKernel)
}
