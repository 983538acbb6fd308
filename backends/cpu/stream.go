package cpu

import (
	"slices"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Streaming over strided layouts. A view can broadcast a few bytes to more
// elements than memory holds (expand(ones(1), [1e11])), so a kernel that
// reads a view element by element walks its layout in runs along the
// innermost dimension, each read into a small buffer, instead of widening
// the whole view into a float64 copy (a 2^30-element view of a 4 KB vector
// used to take 24 GB: the copy plus two index maps).

// runLen bounds a run: large enough that the per-run bookkeeping vanishes,
// small enough that its buffer stays in the L1/L2 cache.
const runLen = 1 << 12

// walk is a row-major traversal of shape that tracks one position per
// stride set: the input's storage index, the output element an input
// element reduces into, a coordinate, ...
type walk struct {
	shape   []int
	strides [][]int // strides[s][d]: how far position s moves per step of dim d
	base    []int   // base[s]: position s of element 0
}

// coalesce drops dims of size 1 and merges neighbouring dims that every
// stride set steps through as one, so runs are as long as possible. The
// order of the elements and every position stay the same.
func (w *walk) coalesce() {
	shape := w.shape[:0]
	keep := make([]int, 0, len(w.shape))
	for d, n := range w.shape {
		if n != 1 {
			keep = append(keep, d)
			shape = append(shape, n)
		}
	}
	for s := range w.strides {
		st := w.strides[s][:0]
		for _, d := range keep {
			st = append(st, w.strides[s][d])
		}
		w.strides[s] = st
	}
	w.shape = shape
	for d := len(w.shape) - 2; d >= 0; d-- {
		inner := w.shape[d+1]
		merge := true
		for _, st := range w.strides {
			if st[d] != st[d+1]*inner {
				merge = false
				break
			}
		}
		if !merge {
			continue
		}
		w.shape[d] *= inner
		w.shape = slices.Delete(w.shape, d+1, d+2)
		for s, st := range w.strides {
			st[d] = st[d+1]
			w.strides[s] = slices.Delete(st, d+1, d+2)
		}
	}
}

// step is how far position s moves along the innermost dim (0 for a scalar).
func (w *walk) step(s int) int {
	if len(w.shape) == 0 {
		return 0
	}
	return w.strides[s][len(w.shape)-1]
}

// runs calls fn for every run of at most runLen consecutive elements along
// the innermost dim, in row-major order: pos[s] is position s of the run's
// first element; later elements of the run step by w.step(s). fn must not
// keep pos.
func (w *walk) runs(fn func(pos []int, n int)) {
	rank := len(w.shape)
	if slices.Contains(w.shape, 0) {
		return
	}
	pos := slices.Clone(w.base)
	if rank == 0 {
		fn(pos, 1)
		return
	}
	last, inner := rank-1, w.shape[rank-1]
	idx := make([]int, rank)
	run := make([]int, len(pos))
	for {
		copy(run, pos)
		for j := 0; j < inner; j += runLen {
			n := min(runLen, inner-j)
			fn(run, n)
			for s := range run {
				run[s] += n * w.strides[s][last]
			}
		}
		d := last - 1
		for ; d >= 0; d-- {
			idx[d]++
			for s := range pos {
				pos[s] += w.strides[s][d]
			}
			if idx[d] < w.shape[d] {
				break
			}
			for s := range pos {
				pos[s] -= w.strides[s][d] * w.shape[d]
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// viewStrides are t's strides broadcast to shape: a broadcast dim (added on
// the left, or of size 1 in t) gets stride 0.
func viewStrides(t *core.Tensor, shape core.Shape) []int {
	ts, st := t.Shape(), t.Strides()
	out := make([]int, len(shape))
	off := len(shape) - len(ts)
	for i := range ts {
		if ts[i] != 1 {
			out[off+i] = st[i]
		}
	}
	return out
}

// rowMajor are the strides of a contiguous array of shape.
func rowMajor(shape core.Shape) []int {
	st := make([]int, len(shape))
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = acc
		acc *= shape[d]
	}
	return st
}

// reduction walks in for a reduction over axes: stride set 0 is the input's
// storage index, set 1 the output element (row-major over the kept dims).
// With collapse, a reduced dim that in broadcasts (stride 0) is walked
// once and counted in mult: each element of a group then stands for mult
// equal elements, which max, min, any and all ignore and sums scale by.
func reduction(in *core.Tensor, axes []int, collapse bool) (w walk, mult int) {
	shape := in.Shape()
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		reduced[a] = true
	}
	ist := in.Strides()
	ost := make([]int, len(shape))
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if !reduced[d] {
			ost[d] = acc
			acc *= shape[d]
		}
	}
	mult = 1
	if collapse && shape.Numel() > 0 {
		for d := range shape {
			if reduced[d] && ist[d] == 0 && shape[d] > 1 {
				mult *= shape[d]
				shape[d] = 1
			}
		}
	}
	w = walk{shape: shape, strides: [][]int{ist, ost}, base: []int{in.Offset(), 0}}
	w.coalesce()
	return w, mult
}

// outCount is the number of outputs of a reduction of shape over axes.
func outCount(shape core.Shape, axes []int) int {
	return core.ReduceShape(shape, axes, false).Numel()
}

// runBuf is the length of a buffer that holds w's longest run.
func (w *walk) runBuf() int {
	if len(w.shape) == 0 {
		return 1
	}
	return min(runLen, w.shape[len(w.shape)-1])
}

// runsF64 streams t's elements as float64 along w (stride set 0 being t's
// storage index): fn gets each run's values and its positions.
func runsF64(w *walk, t *core.Tensor, fn func(pos []int, vals []float64)) {
	b, d, step := host(t), t.DType(), w.step(0)
	buf := make([]float64, w.runBuf())
	w.runs(func(pos []int, n int) {
		v := buf[:n]
		gatherF64(v, d, b, pos[0], step)
		fn(pos, v)
	})
}

// runsI64 is runsF64 in int64.
func runsI64(w *walk, t *core.Tensor, fn func(pos []int, vals []int64)) {
	b, d, step := host(t), t.DType(), w.step(0)
	buf := make([]int64, w.runBuf())
	w.runs(func(pos []int, n int) {
		v := buf[:n]
		gatherI64(v, d, b, pos[0], step)
		fn(pos, v)
	})
}

// gatherF64 reads len(dst) elements of dtype d from b, starting at element
// pos and stepping by step, as float64.
func gatherF64(dst []float64, d core.DType, b []byte, pos, step int) {
	switch d {
	case core.F32:
		v := f32view(b)
		for k := range dst {
			dst[k] = float64(v[pos+k*step])
		}
	case core.F64:
		v := f64view(b)
		for k := range dst {
			dst[k] = v[pos+k*step]
		}
	case core.I32:
		v := i32view(b)
		for k := range dst {
			dst[k] = float64(v[pos+k*step])
		}
	default:
		for k := range dst {
			dst[k] = numerics.GetF64(d, b, pos+k*step)
		}
	}
}

// gatherI64 is gatherF64 in int64.
func gatherI64(dst []int64, d core.DType, b []byte, pos, step int) {
	switch d {
	case core.I64:
		v := i64view(b)
		for k := range dst {
			dst[k] = v[pos+k*step]
		}
	case core.I32:
		v := i32view(b)
		for k := range dst {
			dst[k] = int64(v[pos+k*step])
		}
	case core.U8:
		for k := range dst {
			dst[k] = int64(b[pos+k*step])
		}
	case core.Bool:
		for k := range dst {
			dst[k] = int64(b[pos+k*step] & 1)
		}
	default:
		for k := range dst {
			dst[k] = numerics.GetI64(d, b, pos+k*step)
		}
	}
}

// fillF64 is a checked temporary of n copies of v.
func fillF64(n int, v float64) []float64 {
	out := tempF64(n)
	if v != 0 {
		for i := range out {
			out[i] = v
		}
	}
	return out
}

// fillI64 is fillF64 in int64.
func fillI64(n int, v int64) []int64 {
	out := tempI64(n)
	if v != 0 {
		for i := range out {
			out[i] = v
		}
	}
	return out
}
