//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Matrix products go to cuBLAS (cublasGemmStridedBatchedEx): f32 with f32
// arithmetic unless TF32 is allowed, f16 and bf16 on the tensor cores with
// f32 accumulation, f64 in f64. Integer products are a reduction over K
// (reduce.go) with i64 accumulation. Operands are read in place whenever
// their matrices are row- or column-major with one stride per batch.

// blasLayout says how cuBLAS can read a rows x cols matrix with strides
// (sr, sc), or ok false when it cannot without a copy.
func blasLayout(rows, cols, sr, sc int) (ld int, trans, ok bool) {
	if cols == 1 {
		sc = 1
	}
	if rows == 1 {
		sr = max(cols, 1)
	}
	switch {
	case sc == 1 && sr >= max(cols, 1):
		return sr, false, true
	case sr == 1 && sc >= max(rows, 1):
		return sc, true, true
	}
	return 0, false, false
}

func blasType(d core.DType) (int, bool) {
	switch d {
	case core.F32:
		return cudaR32F, true
	case core.F64:
		return cudaR64F, true
	case core.F16:
		return cudaR16F, true
	case core.BF16:
		return cudaR16BF, true
	}
	return 0, false
}

func matmulKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
	if err != nil {
		return err
	}
	if d.AVec {
		a = core.NewView(a, core.Shape{1, d.K}, []int{0, a.Strides()[0]}, a.Offset())
	}
	if d.BVec {
		b = core.NewView(b, core.Shape{d.K, 1}, []int{b.Strides()[0], 0}, b.Offset())
	}
	c := core.NewView(out, d.MatrixShape(), contiguousStrides(d.MatrixShape()), out.Offset())
	return cudaOf(k).matmulInto("matmul", a, b, c, d.Batch, d.M, d.K, d.N, 1)
}

func contiguousStrides(s core.Shape) []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// matmulInto computes c = alpha a @ b for a [.., M, K], b [.., K, N]
// broadcast to batch and c [batch.., M, N] contiguous. c may be f32 where
// a and b are f16 or bf16 (cuBLAS accumulates in f32 either way).
func (g *Backend) matmulInto(op string, a, b, c *core.Tensor, batch core.Shape, M, K, N int, alpha float64) error {
	if c.Numel() == 0 {
		return nil
	}
	at, ok := blasType(a.DType())
	ct, cok := blasType(c.DType())
	if !ok || !cok || a.DType() != b.DType() || (c.DType() != a.DType() && c.DType() != core.F32) {
		if alpha != 1 {
			return fmt.Errorf("cuda: %s: a scaled product of %s operands", op, a.DType())
		}
		return g.matmulByReduction(op, a, b, c, batch, M, K, N)
	}
	if K == 0 {
		return g.dev.zero(mustPtr(c)+uint64(c.Offset()*c.DType().Size()), uint64(c.Numel()*c.DType().Size()))
	}
	full := append(batch.Clone(), M, K)
	as := lower.BroadcastStrides(a, full)
	bs := lower.BroadcastStrides(b, append(batch.Clone(), K, N))
	nb := len(batch)
	ald, atr, aok := blasLayout(M, K, as[nb], as[nb+1])
	bld, btr, bok := blasLayout(K, N, bs[nb], bs[nb+1])
	if !aok || !bok {
		// A matrix cuBLAS cannot read in place: copy it contiguous.
		if !aok {
			a = core.Call1("contiguous", nil, a)
		}
		if !bok {
			b = core.Call1("contiguous", nil, b)
		}
		if err := firstErr(a, b); err != nil {
			return err
		}
		return g.matmulInto(op, a, b, c, batch, M, K, N, alpha)
	}
	cs := contiguousStrides(append(batch.Clone(), M, N))
	bshape, bst := lower.Coalesce(batch, [][]int{as[:nb], bs[:nb], cs[:nb]})
	compute := computeF32
	switch {
	case a.DType() == core.F64:
		compute = computeF64
	case a.DType() == core.F32 && g.tf32.Load():
		compute = computeF32FastTF32
	}
	size, csize := uint64(a.DType().Size()), uint64(c.DType().Size())
	pa, pb, pc := mustPtr(a), mustPtr(b), mustPtr(c)
	// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS's first
	// operand is B, its second A.
	args := gemmArgs{transA: btr, transB: atr, m: N, n: M, k: K, alpha: alpha, beta: 0,
		lda: bld, ldb: ald, ldc: N, dtypeAB: at, dtypeC: ct, compute: compute, batch: 1}
	inner := 1
	if len(bshape) > 0 {
		inner = bshape[len(bshape)-1]
		args.batch = inner
		args.strideA, args.strideB, args.strC = int64(bst[1][len(bshape)-1]), int64(bst[0][len(bshape)-1]), int64(bst[2][len(bshape)-1])
	}
	// Batch dims that do not merge into one stride take one call each.
	outer := 1
	for _, n := range bshape[:max(len(bshape)-1, 0)] {
		outer *= n
	}
	for i := range outer {
		offA, offB, offC := b.Offset(), a.Offset(), c.Offset()
		rem := i
		for dd := len(bshape) - 2; dd >= 0; dd-- {
			idx := rem % bshape[dd]
			rem /= bshape[dd]
			offA += idx * bst[1][dd]
			offB += idx * bst[0][dd]
			offC += idx * bst[2][dd]
		}
		args.a, args.b, args.c = pb+uint64(offA)*size, pa+uint64(offB)*size, pc+uint64(offC)*csize
		if err := g.gemm(op, &args); err != nil {
			return err
		}
	}
	return nil
}

// gemm runs one cuBLAS call, in stream order with the kernels.
func (g *Backend) gemm(op string, args *gemmArgs) error {
	if err := g.usable(); err != nil {
		return err
	}
	g.mu.Lock()
	if len(g.recent) < 64 {
		g.recent = append(g.recent, op)
	}
	g.mu.Unlock()
	if err := g.dev.gemm(args); err != nil {
		return g.fault(op, err)
	}
	if g.syncAll {
		return g.Sync()
	}
	return nil
}

// matmulByReduction computes integer (or mixed) products as a reduction
// over K of a[.., m, 1, k] * b[.., 1, n, k], accumulated in i64 (f64 for
// floats).
func (g *Backend) matmulByReduction(op string, a, b, c *core.Tensor, batch core.Shape, M, K, N int) error {
	nb := len(batch)
	shape := append(batch.Clone(), M, N, K)
	as := lower.BroadcastStrides(a, append(batch.Clone(), M, K))
	bs := lower.BroadcastStrides(b, append(batch.Clone(), K, N))
	av := append(append([]int{}, as[:nb]...), as[nb], 0, as[nb+1])
	bv := append(append([]int{}, bs[:nb]...), 0, bs[nb+1], bs[nb])
	ax := core.NewView(a, shape, av, a.Offset())
	bx := core.NewView(b, shape, bv, b.Offset())
	acc := "SumAcc<" + accType(computeType(c.DType())) + ">"
	return g.reduce(reduction{op: op, frame: lower.NewFrame(shape, []int{nb + 2}), ins: []*core.Tensor{ax, bx}, out: c,
		acc: acc, value: "x0 * x1", final: "acc.s"})
}

func outerKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	col := core.NewView(a, core.Shape{a.Shape()[0], 1}, []int{a.Strides()[0], 0}, a.Offset())
	ct := computeType(out.DType())
	e := lower.Conv("x0", computeType(a.DType()), ct) + " * " + lower.Conv("x1", computeType(b.DType()), ct)
	return cudaOf(k).mapRun("outer", []*core.Tensor{col, b}, out, "("+e+")", nil)
}

func mustPtr(t *core.Tensor) devicePtr {
	p, err := ptrOf(t)
	if err != nil {
		panic(fmt.Sprintf("cuda: %v", err)) // callers checked the operands' storage
	}
	return p
}

func firstErr(ts ...*core.Tensor) error {
	for _, t := range ts {
		if err := t.Err(); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	register("matmul", matmulKernel)
	register("outer", outerKernel)
}
