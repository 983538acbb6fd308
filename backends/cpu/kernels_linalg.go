package cpu

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels of core/ops_linalg.go. f32 products go to gemmF32 straight from
// the operands' storage whenever their strides are a plain or transposed
// matrix layout (transposes are views, so x.T @ y costs no copy); f16 and
// bf16 are widened to f32 and go the same way; f64 and integers use a
// direct loop in float64 and int64.

func init() {
	register("matmul", matmulKernel)
	register("outer", outerKernel)
}

// matLayout says where an operand's matrices sit in memory: the element
// offset of the matrix used by every batch index of the product, and the
// strides between rows and between columns.
type matLayout struct {
	offs   []int
	rs, cs int
}

// matrixLayoutOf describes an operand of shape/strides as matrices over the
// product's batch dims; a 1-D operand is a row (left) or column (right).
func matrixLayoutOf(shape core.Shape, strides []int, offset int, left bool, batch core.Shape) matLayout {
	r := len(shape)
	var l matLayout
	var bshape core.Shape
	var bstrides []int
	switch {
	case r == 1 && left:
		l.cs = strides[0]
	case r == 1:
		l.rs = strides[0]
	default:
		l.rs, l.cs = strides[r-2], strides[r-1]
		bshape, bstrides = shape[:r-2], strides[:r-2]
	}
	l.offs = matrixBatchOffsets(batch, bshape, bstrides, offset)
	return l
}

// matrixBatchOffsets lists base plus the offset of every index of batch (row-major)
// in an operand whose own batch dims (right-aligned) may broadcast.
func matrixBatchOffsets(batch core.Shape, own core.Shape, strides []int, base int) []int {
	st := make([]int, len(batch))
	lead := len(batch) - len(own)
	for i := range own {
		if own[i] != 1 {
			st[lead+i] = strides[i]
		}
	}
	offs := make([]int, batch.Numel())
	fillStridedPositions(offs, base, batch, st)
	return offs
}

// gemmForm maps a rows x cols matrix with strides (rs, cs) onto gemmF32's
// operand form: row-major with leading dimension ld, or its transpose.
// Degenerate dims accept any stride; ok is false for layouts gemm cannot
// read (neither stride is 1).
func gemmForm(rows, cols, rs, cs int) (trans bool, ld int, ok bool) {
	switch {
	case cs == 1 || cols == 1:
		return false, rs, rs >= 0
	case rs == 1 || rows == 1:
		return true, cs, cs >= 0
	}
	return false, 0, false
}

func matmulKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
	if err != nil {
		return err
	}
	if out.Numel() == 0 {
		return nil
	}
	switch out.DType() {
	case core.F32:
		matmulF32(a, b, d, f32s(out))
	case core.F16, core.BF16:
		c := tempF32(out.Numel())
		matmulF32(a, b, d, c)
		vals := tempF64(len(c))
		for i, v := range c {
			vals[i] = float64(v)
		}
		writeF64(out, vals)
	case core.F64:
		av, bv := readF64(a), readF64(b)
		la, lb := denseMatrixLayouts(a, b, d)
		writeF64(out, matmulLoop(av, bv, la, lb, d))
	default:
		av, bv := readI64(a), readI64(b)
		la, lb := denseMatrixLayouts(a, b, d)
		writeI64(out, matmulLoop(av, bv, la, lb, d))
	}
	return nil
}

// denseMatrixLayouts describes both operands after reading them in logical order.
func denseMatrixLayouts(a, b *core.Tensor, d oprules.MatmulDims) (matLayout, matLayout) {
	return matrixLayoutOf(a.Shape(), core.ContiguousStrides(a.Shape()), 0, true, d.Batch),
		matrixLayoutOf(b.Shape(), core.ContiguousStrides(b.Shape()), 0, false, d.Batch)
}

// f32Operand returns the float32 data gemm reads for t and its layout: the
// storage itself for f32 tensors whose matrices gemm can address, otherwise
// a dense float32 copy.
func f32Operand(t *core.Tensor, rows, cols int, left bool, batch core.Shape) ([]float32, matLayout) {
	if t.DType() == core.F32 {
		l := matrixLayoutOf(t.Shape(), t.Strides(), t.Offset(), left, batch)
		if _, _, ok := gemmForm(rows, cols, l.rs, l.cs); ok {
			return f32view(host(t)), l
		}
	}
	v := readF64(t)
	dense := tempF32(len(v))
	for i, x := range v {
		dense[i] = float32(x)
	}
	return dense, matrixLayoutOf(t.Shape(), core.ContiguousStrides(t.Shape()), 0, left, batch)
}

// matmulSmallBatch is the per-matrix work below which a batched product runs
// whole matrices in parallel rather than parallelising inside each one.
const matmulSmallBatch = 64 * 64 * 64

func matmulF32(a, b *core.Tensor, d oprules.MatmulDims, c []float32) {
	av, la := f32Operand(a, d.M, d.K, true, d.Batch)
	bv, lb := f32Operand(b, d.K, d.N, false, d.Batch)
	gemmBatchedF32(av, la, bv, lb, d.M, d.N, d.K, c)
}

// gemmBatchedF32 writes the product of every pair of matrices (one per
// entry of la.offs and lb.offs) into consecutive dense m x n blocks of c.
// Both layouts must satisfy gemmForm.
func gemmBatchedF32(av []float32, la matLayout, bv []float32, lb matLayout, m, n, k int, c []float32) {
	ta, lda, _ := gemmForm(m, k, la.rs, la.cs)
	tb, ldb, _ := gemmForm(k, n, lb.rs, lb.cs)
	one := func(i int, gemm func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int)) {
		gemm(ta, tb, m, n, k, 1, av[la.offs[i]:], lda, bv[lb.offs[i]:], ldb, 0, c[i*m*n:(i+1)*m*n], n)
	}
	batches := len(la.offs)
	if batches > 1 && !ta && foldsIntoRows(la, lb, m) {
		// One B for every entry and A's matrices stacked row after row (a
		// linear layer over [batch, tokens, features]): one product of
		// batches*m rows packs B once, where a product per entry packed it
		// again each time (14% of a BERT encoder's time).
		gemmF32(false, tb, batches*m, n, k, 1, av[la.offs[0]:], lda, bv[lb.offs[0]:], ldb, 0, c[:batches*m*n], n)
		return
	}
	if batches > 1 && m*n*k < matmulSmallBatch {
		parallelFor(batches, 2*m*n*max(k, 1), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				one(i, gemmF32Serial)
			}
		})
		return
	}
	for i := 0; i < batches; i++ {
		one(i, gemmF32)
	}
}

// foldsIntoRows reports whether every batch entry multiplies the same B and
// the entries' row-major A matrices follow one another with A's row stride,
// so that the batch is one matrix of batches*m rows.
func foldsIntoRows(la, lb matLayout, m int) bool {
	for i := range la.offs {
		if lb.offs[i] != lb.offs[0] || la.offs[i] != la.offs[0]+i*m*la.rs {
			return false
		}
	}
	return true
}

// linalgElem is an element type products are computed in.
type linalgElem interface{ float32 | float64 | int64 }

// matmulLoop is the direct product for f64 and integers, parallel over the
// rows of every matrix in the batch.
func matmulLoop[T linalgElem](av, bv []T, la, lb matLayout, d oprules.MatmulDims) []T {
	m, n, kk := d.M, d.N, d.K
	c := make([]T, len(la.offs)*m*n)
	parallelFor(len(la.offs)*m, n*max(kk, 1), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			bi, i := r/m, r%m
			row := c[r*n : (r+1)*n]
			aBase, bBase := la.offs[bi]+i*la.rs, lb.offs[bi]
			for p := 0; p < kk; p++ {
				x := av[aBase+p*la.cs]
				bRow := bBase + p*lb.rs
				for j := range row {
					row[j] += x * bv[bRow+j*lb.cs]
				}
			}
		}
	})
	return c
}

func outerKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	n, m := a.Numel(), b.Numel()
	if out.DType().IsFloat() {
		av, bv := readF64(a), readF64(b)
		res := tempF64(n * m)
		for i, x := range av {
			row := res[i*m : (i+1)*m]
			for j, y := range bv {
				row[j] = x * y
			}
		}
		writeF64(out, res)
		return nil
	}
	av, bv := readI64(a), readI64(b)
	res := tempI64(n * m)
	for i, x := range av {
		for j, y := range bv {
			res[i*m+j] = x * y
		}
	}
	writeI64(out, res)
	return nil
}
