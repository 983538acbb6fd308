package cpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Segment reductions and CSR products. Index values are checked here, not
// in Infer, because they are data: an id or column out of range, or an
// indptr that is not a valid CSR row pointer, is an error naming the entry.

func init() {
	register("segment_sum", segmentKernel(segmentSumOp))
	register("segment_mean", segmentKernel(segmentMeanOp))
	register("segment_max", segmentKernel(segmentMaxOp))
	register("_segment_gather", segmentGatherKernel)
	register("_segment_max_grad", segmentMaxGradKernel)
	register("spmm", spmmKernel)
	register("_spmm_transposed", spmmTransposedKernel)
	register("sddmm", sddmmKernel)
}

type segmentOp int

const (
	segmentSumOp segmentOp = iota
	segmentMeanOp
	segmentMaxOp
)

// segmentIDs reads and range-checks the ids; with sorted set it also checks
// that they never decrease, as the caller promised.
func segmentIDs(ids *core.Tensor, segments int, sorted bool) ([]int, error) {
	v := readInts(ids)
	for i, s := range v {
		if s < 0 || s >= segments {
			return nil, fmt.Errorf("segment_ids[%d] = %d is outside [0, %d)", i, s, segments)
		}
		if sorted && i > 0 && s < v[i-1] {
			return nil, fmt.Errorf("sorted is true but segment_ids[%d] = %d follows %d", i, s, v[i-1])
		}
	}
	return v, nil
}

// segmentRuns returns, for non-decreasing ids, where each segment starts:
// rows starts[s]..starts[s+1]-1 belong to segment s.
func segmentRuns(ids []int, segments int) []int {
	starts := make([]int, segments+1)
	for _, s := range ids {
		starts[s+1]++
	}
	for s := 0; s < segments; s++ {
		starts[s+1] += starts[s]
	}
	return starts
}

// segmentKernel reduces rows of data into segments. Sorted ids are reduced
// one segment per task in parallel (no two tasks share an output row);
// otherwise rows are visited in order and the inner dim is split instead.
func segmentKernel(op segmentOp) core.Kernel {
	return func(k *core.KernelCall) error {
		data, out := k.Inputs[0], k.Outputs[0]
		segments := k.Attrs.Int("num_segments")
		ids, err := segmentIDs(k.Inputs[1], segments, k.Attrs.Bool("sorted"))
		if err != nil {
			return err
		}
		inner := data.Shape()[1:].Numel()
		if !data.DType().IsFloat() {
			writeI64(out, segmentReduceInt(readI64(data), ids, segments, inner, op))
			return nil
		}
		x := readF64(data)
		acc := make([]float64, segments*inner)
		count, firstRow := make([]int, segments), make([]int, segments)
		for row, s := range ids {
			if count[s] == 0 {
				firstRow[s] = row
			}
			count[s]++
		}
		reduceRow := func(row, s, lo, hi int) {
			dst, src := acc[s*inner:(s+1)*inner], x[row*inner:(row+1)*inner]
			first := row == firstRow[s]
			for j := lo; j < hi; j++ {
				dst[j] = segmentStep(op, dst[j], src[j], first)
			}
		}
		if k.Attrs.Bool("sorted") {
			starts := segmentRuns(ids, segments)
			parallelFor(segments, max(1, inner*len(ids)/max(1, segments)), func(lo, hi int) {
				for s := lo; s < hi; s++ {
					for row := starts[s]; row < starts[s+1]; row++ {
						reduceRow(row, s, 0, inner)
					}
				}
			})
		} else {
			parallelFor(inner, len(ids), func(lo, hi int) {
				for row, s := range ids {
					reduceRow(row, s, lo, hi)
				}
			})
		}
		if op == segmentMeanOp {
			for s, c := range count {
				for j := 0; j < inner && c > 0; j++ {
					acc[s*inner+j] /= float64(c)
				}
			}
		}
		writeF64(out, acc)
		return nil
	}
}

// segmentStep folds v into acc. The first row of a segment replaces the
// zero the output starts from; NaN wins over everything, like torch amax.
func segmentStep(op segmentOp, acc, v float64, first bool) float64 {
	if op != segmentMaxOp {
		return acc + v
	}
	if first || v != v || v > acc {
		return v
	}
	return acc
}

func segmentReduceInt(x []int64, ids []int, segments, inner int, op segmentOp) []int64 {
	acc := make([]int64, segments*inner)
	seen := make([]bool, segments)
	for row, s := range ids {
		dst, src := acc[s*inner:(s+1)*inner], x[row*inner:(row+1)*inner]
		for j := range dst {
			switch {
			case op != segmentMaxOp:
				dst[j] += src[j]
			case !seen[s] || src[j] > dst[j]:
				dst[j] = src[j]
			}
		}
		seen[s] = true
	}
	return acc
}

func segmentGatherKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	ids, err := segmentIDs(k.Inputs[1], x.Shape()[0], false)
	if err != nil {
		return err
	}
	inner := x.Shape()[1:].Numel()
	if !x.DType().IsFloat() {
		src := readI64(x)
		dst := make([]int64, len(ids)*inner)
		for row, s := range ids {
			copy(dst[row*inner:(row+1)*inner], src[s*inner:(s+1)*inner])
		}
		writeI64(out, dst)
		return nil
	}
	src := readF64(x)
	dst := make([]float64, len(ids)*inner)
	for row, s := range ids {
		copy(dst[row*inner:(row+1)*inner], src[s*inner:(s+1)*inner])
	}
	writeF64(out, dst)
	return nil
}

// segmentMaxGradKernel shares each segment's gradient evenly among the rows
// that attain its maximum (NaN matches NaN), as torch's amax backward does.
func segmentMaxGradKernel(k *core.KernelCall) error {
	data, maxes, grad, out := k.Inputs[0], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	segments := maxes.Shape()[0]
	ids, err := segmentIDs(k.Inputs[1], segments, false)
	if err != nil {
		return err
	}
	inner := data.Shape()[1:].Numel()
	x, m, g := readF64(data), readF64(maxes), readF64(grad)
	ties := make([]float64, segments*inner)
	hit := func(row, s, j int) bool {
		a, b := x[row*inner+j], m[s*inner+j]
		return a == b || (a != a && b != b)
	}
	for row, s := range ids {
		for j := 0; j < inner; j++ {
			if hit(row, s, j) {
				ties[s*inner+j]++
			}
		}
	}
	res := make([]float64, len(x))
	for row, s := range ids {
		for j := 0; j < inner; j++ {
			if hit(row, s, j) {
				res[row*inner+j] = g[s*inner+j] / ties[s*inner+j]
			}
		}
	}
	writeF64(out, res)
	return nil
}

// csrPattern is a validated CSR structure: rowOf[e] is the row of entry e.
type csrPattern struct {
	rows   int
	indptr []int
	cols   []int
	rowOf  []int
}

func readCSR(indptr, indices *core.Tensor, numCols int) (*csrPattern, error) {
	ptr, cols := readInts(indptr), readInts(indices)
	p := &csrPattern{rows: len(ptr) - 1, indptr: ptr, cols: cols, rowOf: make([]int, len(cols))}
	if ptr[0] != 0 {
		return nil, fmt.Errorf("indptr[0] is %d, want 0", ptr[0])
	}
	if ptr[p.rows] != len(cols) {
		return nil, fmt.Errorf("indptr[%d] is %d, want the number of entries %d", p.rows, ptr[p.rows], len(cols))
	}
	for r := 0; r < p.rows; r++ {
		if ptr[r+1] < ptr[r] {
			return nil, fmt.Errorf("indptr decreases at %d: %d after %d", r+1, ptr[r+1], ptr[r])
		}
	}
	for r := 0; r < p.rows; r++ {
		for e := ptr[r]; e < ptr[r+1]; e++ {
			p.rowOf[e] = r
		}
	}
	for e, c := range cols {
		if c < 0 || c >= numCols {
			return nil, fmt.Errorf("indices[%d] = %d is outside [0, %d)", e, c, numCols)
		}
	}
	return p, nil
}

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
		spmmF32(p, f32s(values), f32s(dense), f32s(out), n)
		return nil
	}
	v, d := readF64(values), readF64(dense)
	res := make([]float64, p.rows*n)
	parallelFor(p.rows, max(1, n*len(p.cols)/max(1, p.rows)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst := res[r*n : (r+1)*n]
			for e := p.indptr[r]; e < p.indptr[r+1]; e++ {
				src := d[p.cols[e]*n : (p.cols[e]+1)*n]
				for j := range dst {
					dst[j] += v[e] * src[j]
				}
			}
		}
	})
	writeF64(out, res)
	return nil
}

// spmmTransposedKernel scatters values[e] * dense[row(e)] into out[cols[e]];
// the columns of the output are split across tasks, so no two tasks write
// the same element.
func spmmTransposedKernel(k *core.KernelCall) error {
	values, dense, out := k.Inputs[2], k.Inputs[3], k.Outputs[0]
	p, err := readCSR(k.Inputs[0], k.Inputs[1], k.Attrs.Int("cols"))
	if err != nil {
		return err
	}
	n := dense.Shape()[1]
	if denseF32(values) && denseF32(dense) && out.DType() == core.F32 {
		spmmTransposedF32(p, f32s(values), f32s(dense), f32s(out), n)
		return nil
	}
	v, d := readF64(values), readF64(dense)
	res := make([]float64, out.Numel())
	parallelFor(n, len(p.cols), func(lo, hi int) {
		for e, c := range p.cols {
			src, dst := d[p.rowOf[e]*n:], res[c*n:]
			for j := lo; j < hi; j++ {
				dst[j] += v[e] * src[j]
			}
		}
	})
	writeF64(out, res)
	return nil
}

// sddmmKernel takes one dot product of a's row and b's column per entry.
func sddmmKernel(k *core.KernelCall) error {
	a, b, out := k.Inputs[2], k.Inputs[3], k.Outputs[0]
	bs := b.Shape()
	p, err := readCSR(k.Inputs[0], k.Inputs[1], bs[1])
	if err != nil {
		return err
	}
	inner, cols := bs[0], bs[1]
	av, bv := readF64(a), readF64(b)
	res := make([]float64, len(p.cols))
	parallelFor(len(res), inner, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			r, c := p.rowOf[e], p.cols[e]
			s := 0.0
			for j := 0; j < inner; j++ {
				s += av[r*inner+j] * bv[j*cols+c]
			}
			res[e] = s
		}
	})
	writeF64(out, res)
	return nil
}

// spmmF32 is spmm in f32 without widening copies of the dense operand (a
// graph layer's [N, F] features): each output row accumulates its entries
// in CSR order, so the result does not depend on the core count.
func spmmF32(p *csrPattern, v, d, out []float32, n int) {
	parallelFor(p.rows, max(1, n*len(p.cols)/max(1, p.rows)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst := out[r*n : (r+1)*n]
			clear(dst)
			for e := p.indptr[r]; e < p.indptr[r+1]; e++ {
				w, src := v[e], d[p.cols[e]*n:(p.cols[e]+1)*n]
				for j := range dst {
					dst[j] += w * src[j]
				}
			}
		}
	})
}

// spmmTransposedF32 is out = A^T d in f32 (spmm's gradient for its dense
// operand): the entries are grouped by column first (a counting sort, O(E)),
// so each output row is one task that gathers its entries in entry order -
// row-parallel like spmm, no two tasks writing one row, and the result does
// not depend on the core count.
func spmmTransposedF32(p *csrPattern, v, d, out []float32, n int) {
	cols := len(out) / max(n, 1)
	ptr := make([]int32, cols+1)
	for _, c := range p.cols {
		ptr[c+1]++
	}
	for c := range cols {
		ptr[c+1] += ptr[c]
	}
	next := append([]int32(nil), ptr[:cols]...)
	ent := make([]int32, len(p.cols))
	for e, c := range p.cols {
		ent[next[c]] = int32(e)
		next[c]++
	}
	parallelFor(cols, max(1, n*len(p.cols)/max(1, cols)), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			dst := out[c*n : (c+1)*n]
			clear(dst)
			for _, e := range ent[ptr[c]:ptr[c+1]] {
				w, r := v[e], p.rowOf[e]
				src := d[r*n : (r+1)*n]
				for j := range dst {
					dst[j] += w * src[j]
				}
			}
		}
	})
}
