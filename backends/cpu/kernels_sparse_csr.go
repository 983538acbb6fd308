package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// Products with a CSR sparse matrix: spmm, its transpose (spmm's gradient
// for the dense operand) and sddmm. A graph layer calls them on the same
// adjacency every step, so the index tensors are read in place rather than
// copied (a copy of 1M i64 indices is as much memory as a 1M x 8 f32
// feature matrix, per call), and what a check or a regrouping of one
// structure established is remembered for the tensors' life (csr_cache.go).

func init() {
	register("spmm", spmmKernel)
	register("_spmm_transposed", spmmTransposedKernel)
	register("sddmm", sddmmKernel)
}

// csrPattern is a validated CSR structure: row r's entries are
// ptr[r]..ptr[r+1]-1, entry e in column cols[e]. ptr and cols may alias
// the index tensors' storage: never written.
type csrPattern struct {
	rows      int
	ptr, cols []int64
	facts     *csrFacts // remembered about this structure; nil when not cached
}

// int64s is t's elements as int64: the storage itself for a contiguous i64
// tensor (read only), else a copy.
func int64s(t *core.Tensor) []int64 {
	if t.DType() != core.I64 || !t.IsContiguous() || t.Numel() == 0 {
		return readI64(t)
	}
	b := host(t)
	all := unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
	return all[t.Offset() : t.Offset()+t.Numel()]
}

// readCSR reads a pattern with numCols columns, checking it unless the same
// tensors passed the check before.
func readCSR(indptr, indices *core.Tensor, numCols int) (*csrPattern, error) {
	ptr, cols := int64s(indptr), int64s(indices)
	p := &csrPattern{rows: len(ptr) - 1, ptr: ptr, cols: cols}
	p.facts = cachedCSR(indptr, indices, numCols)
	if p.facts != nil && p.facts.checked.Load() {
		return p, nil
	}
	if err := kernelkit.CheckCSR(ptr, cols, numCols); err != nil {
		return nil, err
	}
	if p.facts != nil {
		p.facts.checked.Store(true)
	}
	return p, nil
}

// rowCost is the average work of one output row of n columns, for parallelFor.
func (p *csrPattern) rowCost(n, rows int) int { return max(1, n*len(p.cols)/max(1, rows)) }

// spmmKernel computes out[r] = sum over row r's entries e of values[e] *
// dense[cols[e]], one output row per task.
func spmmKernel(k *core.KernelCall) error {
	values, dense, out := k.Inputs[2], k.Inputs[3], k.Outputs[0]
	ds := dense.Shape()
	p, err := readCSR(k.Inputs[0], k.Inputs[1], ds[0])
	if err != nil {
		return err
	}
	n := ds[1]
	if denseF32(values) && denseF32(dense) && out.DType() == core.F32 {
		spmmF32(p, f32s(values), f32s(dense), f32s(out), n, nil)
		return nil
	}
	v, d := readF64(values), readF64(dense)
	res := tempF64(p.rows * n)
	parallelFor(p.rows, p.rowCost(n, p.rows), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst := res[r*n : (r+1)*n]
			for e := p.ptr[r]; e < p.ptr[r+1]; e++ {
				src := d[int(p.cols[e])*n : int(p.cols[e]+1)*n]
				for j := range dst {
					dst[j] += v[e] * src[j]
				}
			}
		}
	})
	writeF64(out, res)
	return nil
}

// spmmF32 is spmm in f32 without widening copies of the dense operand (a
// graph layer's [N, F] features): each output row accumulates its entries
// in CSR order, so the result does not depend on the core count. A non-nil
// bias [n] is added to each finished row while it is still in cache - the
// same sum, rounded the same way, as a separate add, without its [rows, n]
// tensor.
func spmmF32(p *csrPattern, v, d, out []float32, n int, bias []float32) {
	parallelFor(p.rows, p.rowCost(n, p.rows), func(lo, hi int) {
		rows := &csrPattern{rows: hi - lo, ptr: p.ptr[lo : hi+1], cols: p.cols}
		spmmRows(rows, v, d, out[lo*n:hi*n], n, bias)
	})
}

// spmmRows writes p's rows of the product (plus bias, when not nil) into
// out, on the calling goroutine. p may be a run of another pattern's rows
// (ptr a window of its row pointers, cols all of its entries).
func spmmRows(p *csrPattern, v, d, out []float32, n int, bias []float32) {
	for r := 0; r < p.rows; r++ {
		dst := out[r*n : (r+1)*n]
		clear(dst)
		e, end := p.ptr[r], p.ptr[r+1]
		for ; e+1 < end; e += 2 {
			c0, c1 := int(p.cols[e]), int(p.cols[e+1])
			axpy2(dst, v[e], d[c0*n:(c0+1)*n], v[e+1], d[c1*n:(c1+1)*n])
		}
		if e < end {
			c := int(p.cols[e])
			axpy(dst, v[e], d[c*n:(c+1)*n])
		}
		if bias != nil {
			for j, b := range bias[:n] {
				dst[j] += b
			}
		}
	}
}

// axpy is dst += w * src.
func axpy(dst []float32, w float32, src []float32) {
	src = src[:len(dst)]
	for j := range dst {
		dst[j] += w * src[j]
	}
}

// axpy2 is axpy(dst, w0, s0) then axpy(dst, w1, s1) in one pass, the same
// sums in the same order: the two rows' loads are in flight together. The
// rows are gathered from all over a feature matrix that does not fit in
// cache, so a product waits on memory; two at a time took a 64-wide spmm
// over 1.1M entries from about 290 to 180 ms on one core.
func axpy2(dst []float32, w0 float32, s0 []float32, w1 float32, s1 []float32) {
	s0, s1 = s0[:len(dst)], s1[:len(dst)]
	for j := range dst {
		dst[j] = dst[j] + w0*s0[j] + w1*s1[j]
	}
}

// spmmTransposedKernel is out = A^T dense: values[e] * dense[row(e)] summed
// into out[cols[e]].
func spmmTransposedKernel(k *core.KernelCall) error {
	values, dense, out := k.Inputs[2], k.Inputs[3], k.Outputs[0]
	p, err := readCSR(k.Inputs[0], k.Inputs[1], k.Attrs.Int("cols"))
	if err != nil {
		return err
	}
	n := dense.Shape()[1]
	if denseF32(values) && denseF32(dense) && out.DType() == core.F32 {
		cols := out.Numel() / max(n, 1)
		if n == 0 || cols == 0 {
			clear(f32s(out))
			return nil
		}
		b, err := p.columns(cols)
		if err != nil {
			return err
		}
		spmmTransposedF32(p, b, f32s(values), f32s(dense), f32s(out), n)
		return nil
	}
	// Other dtypes: the columns of the output are split across tasks, so no
	// two tasks write one element; entries are visited in order.
	v, d := readF64(values), readF64(dense)
	res := tempF64(out.Numel())
	parallelFor(n, len(p.cols), func(lo, hi int) {
		for r := 0; r < p.rows; r++ {
			src := d[r*n:]
			for e := p.ptr[r]; e < p.ptr[r+1]; e++ {
				dst := res[int(p.cols[e])*n:]
				for j := lo; j < hi; j++ {
					dst[j] += v[e] * src[j]
				}
			}
		}
	})
	writeF64(out, res)
	return nil
}

// csrColumns is a pattern's entries grouped by column (a CSC view without
// the values): column c's entries are ent[ptr[c]:ptr[c+1]], in entry order,
// from rows row[ptr[c]:ptr[c+1]].
type csrColumns struct {
	ptr, ent, row []int32
}

// columns groups p's entries by column (a counting sort, O(E)), once per
// structure when the pattern is cached.
func (p *csrPattern) columns(cols int) (*csrColumns, error) {
	if p.facts != nil {
		if b := p.facts.columns.Load(); b != nil {
			return b, nil
		}
	}
	if len(p.cols) > math.MaxInt32 || p.rows > math.MaxInt32 {
		return nil, fmt.Errorf("%d entries in %d rows: the transposed product handles at most %d", len(p.cols), p.rows, math.MaxInt32)
	}
	b := &csrColumns{ptr: make([]int32, cols+1), ent: make([]int32, len(p.cols)), row: make([]int32, len(p.cols))}
	for _, c := range p.cols {
		b.ptr[c+1]++
	}
	for c := range cols {
		b.ptr[c+1] += b.ptr[c]
	}
	next := append([]int32(nil), b.ptr[:cols]...)
	for r := 0; r < p.rows; r++ {
		for e := p.ptr[r]; e < p.ptr[r+1]; e++ {
			at := next[p.cols[e]]
			next[p.cols[e]]++
			b.ent[at], b.row[at] = int32(e), int32(r)
		}
	}
	if p.facts != nil {
		p.facts.columns.Store(b)
	}
	return b, nil
}

// spmmTransposedF32 is out = A^T d in f32: each output row (a column of A)
// is one task that gathers its entries in entry order - row-parallel like
// spmm, no two tasks writing one row, and the result does not depend on
// the core count.
func spmmTransposedF32(p *csrPattern, b *csrColumns, v, d, out []float32, n int) {
	cols := len(b.ptr) - 1
	parallelFor(cols, p.rowCost(n, cols), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			dst := out[c*n : (c+1)*n]
			clear(dst)
			i, end := b.ptr[c], b.ptr[c+1]
			for ; i+1 < end; i += 2 {
				r0, r1 := int(b.row[i]), int(b.row[i+1])
				axpy2(dst, v[b.ent[i]], d[r0*n:(r0+1)*n], v[b.ent[i+1]], d[r1*n:(r1+1)*n])
			}
			if i < end {
				r := int(b.row[i])
				axpy(dst, v[b.ent[i]], d[r*n:(r+1)*n])
			}
		}
	})
}

// sddmmKernel takes one dot product of a's row and b's column per entry,
// one row of the pattern per task.
func sddmmKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[2], k.Inputs[3], k.Outputs[0]
	bs := b.Shape()
	p, err := readCSR(k.Inputs[0], k.Inputs[1], bs[1])
	if err != nil {
		return err
	}
	inner, cols := bs[0], bs[1]
	av, bv := readF64(a), readF64(b)
	res := tempF64(len(p.cols))
	parallelFor(p.rows, p.rowCost(inner, p.rows), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for e := p.ptr[r]; e < p.ptr[r+1]; e++ {
				c := int(p.cols[e])
				s := 0.0
				for j := 0; j < inner; j++ {
					s += av[r*inner+j] * bv[j*cols+c]
				}
				res[e] = s
			}
		}
	})
	writeF64(out, res)
	return nil
}
