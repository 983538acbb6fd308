package cpu

import (
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// The reductions' plan. A reduction is laid out as groups (one per output
// element) of elements in row-major order over the reduced dims, and
// every group is reduced by one sequence of steps that depends on the
// logical shape and the axes only, never on the input's strides or the
// thread count: a view and its contiguous copy, on one thread or many,
// give the same bits. (A reduced dim the view broadcasts is read once and
// counted, as stream.go says; only sums then differ, by rounding.)
//
// Two layouts, by the innermost dim with more than one element:
//
//   - it is reduced (rows): a group is segments of the trailing reduced
//     dims, each cut into blocks of at most rdBlock elements; a kernel
//     reduces a block to a partial (a float64 sum, an extreme, moments),
//     and the partials combine in order, sums with Neumaier's
//     compensation, so the error of a sum is a block's, whatever the
//     group's length. A block of a contiguous input is read in place.
//   - it is kept (columns): outputs are consecutive along it, and each
//     reduced position adds a row of them; rdColBlock rows are summed
//     plainly into a block and the blocks combine with compensation.
//
// Groups run in parallel; a few long groups split their blocks instead,
// whose partials then combine in the same order.

const (
	rdBlock    = 2048 // elements of a row block: its float64 partial sums stay in L1
	rdColBlock = 64   // rows of a column block
	rdColTile  = 1024 // columns a task accumulates at most
)

// rdKind is how the kernels read an input dtype.
type rdKind int

const (
	kindF32 rdKind = iota // f32, f16 and bf16, through float32
	kindF64
	kindInt // every integer and bool, through int64
)

func kindOf(d core.DType) rdKind {
	switch {
	case floatBlock(d):
		return kindF32
	case d == core.F64:
		return kindF64
	}
	return kindInt
}

// rdDims are some of the walk's dims, enumerated row-major.
type rdDims struct{ shape, strides []int }

func (d rdDims) count() int {
	n := 1
	for _, s := range d.shape {
		n *= s
	}
	return n
}

// offset is the storage offset of position i.
func (d rdDims) offset(i int) int {
	switch len(d.shape) { // the usual cases, without a division
	case 0:
		return 0
	case 1:
		return i * d.strides[0]
	}
	off := 0
	for k := len(d.shape) - 1; k >= 0 && i > 0; k-- {
		off += (i % d.shape[k]) * d.strides[k]
		i /= d.shape[k]
	}
	return off
}

// rdPlan is one reduction of in laid out for the kernels.
type rdPlan struct {
	in    *core.Tensor
	dt    core.DType
	kind  rdKind
	b     []byte
	mult  int // copies of each element a broadcast reduced dim stands for
	outs  int // output elements
	group int // elements per group, mult not counted
	col   bool
	base  int // storage offset of element 0
	inner int // length of the innermost walked dim
	istep int // its stride in storage
	seg   int // rows: elements per segment, a multiple of inner
	kept  rdDims
	red   rdDims // rows: the reduced dims but the innermost; columns: all of them
}

// newRdPlan lays out a reduction of a non-empty in over axes.
func newRdPlan(in *core.Tensor, axes []int) *rdPlan {
	shape := in.Shape()
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		reduced[a] = true
	}
	w, mult := reduction(in, axes, true)
	p := &rdPlan{in: in, dt: in.DType(), kind: kindOf(in.DType()), b: host(in), mult: mult, base: w.base[0]}
	// The segment is the trailing reduced dims of the logical shape, as
	// reduction collapsed it: a dim it read once counts as one element.
	p.seg = 1
	for d := len(shape) - 1; d >= 0; d-- {
		n := shape[d]
		if reduced[d] && in.Strides()[d] == 0 {
			n = 1
		}
		if n != 1 && !reduced[d] {
			break
		}
		p.seg *= n
	}
	wshape, ist, ost := w.shape, w.strides[0], w.strides[1]
	if len(wshape) == 0 {
		wshape, ist, ost = []int{1}, []int{0}, []int{0}
	}
	last := len(wshape) - 1
	p.inner, p.istep, p.col = wshape[last], ist[last], ost[last] != 0
	for d := 0; d < last; d++ {
		if ost[d] != 0 {
			p.kept.shape, p.kept.strides = append(p.kept.shape, wshape[d]), append(p.kept.strides, ist[d])
		} else {
			p.red.shape, p.red.strides = append(p.red.shape, wshape[d]), append(p.red.strides, ist[d])
		}
	}
	p.outs, p.group = p.kept.count(), p.red.count()
	if p.col {
		p.outs *= p.inner
	} else {
		p.group *= p.inner
	}
	return p
}

// rdScratch holds one task's buffers; first is the flat index of the
// first output of a column task.
type rdScratch struct {
	f32   []float32
	f64   []float64
	i64   []int64
	acc   []float64
	first int
}

// accF64 is a zeroed accumulator of n values, apart from the read buffers.
func (s *rdScratch) accF64(n int) []float64 {
	if len(s.acc) < n {
		s.acc = make([]float64, n)
	}
	clear(s.acc[:n])
	return s.acc[:n]
}

func (s *rdScratch) bufF32(n int) []float32 {
	if len(s.f32) < n {
		s.f32 = make([]float32, n)
	}
	return s.f32[:n]
}

func (s *rdScratch) bufF64(n int) []float64 {
	if len(s.f64) < n {
		s.f64 = make([]float64, n)
	}
	return s.f64[:n]
}

func (s *rdScratch) bufI64(n int) []int64 {
	if len(s.i64) < n {
		s.i64 = make([]int64, n)
	}
	return s.i64[:n]
}

// runF32 reads n elements from storage offset off, step apart, as
// float32: in place when they are dense f32, else into buf.
func (p *rdPlan) runF32(buf []float32, off, n, step int) []float32 {
	if step == 0 {
		v := loadF32(buf, p.dt, p.b, off, 1, 1)[0]
		for i := range buf[:n] {
			buf[i] = v
		}
		return buf[:n]
	}
	return loadF32(buf, p.dt, p.b, off, step, n)
}

func (p *rdPlan) runF64(buf []float64, off, n, step int) []float64 {
	if p.dt == core.F64 {
		v := f64view(p.b)
		if step == 1 {
			return v[off : off+n]
		}
		for i := range buf[:n] {
			buf[i] = v[off+i*step]
		}
		return buf[:n]
	}
	gatherF64(buf[:n], p.dt, p.b, off, step)
	return buf[:n]
}

func (p *rdPlan) runI64(buf []int64, off, n, step int) []int64 {
	if p.dt == core.I64 && step == 1 {
		return i64view(p.b)[off : off+n]
	}
	gatherI64(buf[:n], p.dt, p.b, off, step)
	return buf[:n]
}

// blockRun reports where block k of group g (rows) lies in storage when
// it is one dense run, which the kernels read in place.
func (p *rdPlan) blockRun(g, k int) (off, n int, dense bool) {
	j, lo, hi := p.blockRange(k)
	if p.istep != 1 {
		return 0, 0, false
	}
	if p.inner == p.seg { // a segment is one run: no division
		return p.base + p.kept.offset(g) + p.red.offset(j) + lo, hi - lo, true
	}
	first := lo % p.inner
	if first+hi-lo > p.inner {
		return 0, 0, false
	}
	r := j*(p.seg/p.inner) + lo/p.inner
	return p.base + p.kept.offset(g) + p.red.offset(r) + first, hi - lo, true
}

// gatherBlock reads block k of group g (rows) run by run into buf
// through read.
func gatherBlock[T any](p *rdPlan, buf []T, g, k int, read func([]T, int, int, int) []T) []T {
	j, lo, hi := p.blockRange(k)
	off := p.base + p.kept.offset(g)
	r := j*(p.seg/p.inner) + lo/p.inner
	buf = buf[:hi-lo]
	for at := lo; at < hi; r++ {
		first := at % p.inner
		n := min(p.inner-first, hi-at)
		part := read(buf[at-lo:at-lo+n], off+p.red.offset(r)+first*p.istep, n, p.istep)
		copy(buf[at-lo:], part)
		at += n
	}
	return buf
}

// blockF32 is block k of group g (rows) as float32: in place for a dense
// f32 run; blockF64 and blockI64 likewise.
func (p *rdPlan) blockF32(s *rdScratch, g, k int) []float32 {
	if off, n, ok := p.blockRun(g, k); ok && p.dt == core.F32 {
		return f32view(p.b)[off : off+n]
	}
	_, lo, hi := p.blockRange(k)
	return gatherBlock(p, s.bufF32(hi-lo), g, k, p.runF32)
}

func (p *rdPlan) blockF64(s *rdScratch, g, k int) []float64 {
	if off, n, ok := p.blockRun(g, k); ok && p.dt == core.F64 {
		return f64view(p.b)[off : off+n]
	}
	_, lo, hi := p.blockRange(k)
	return gatherBlock(p, s.bufF64(hi-lo), g, k, p.runF64)
}

func (p *rdPlan) blockI64(s *rdScratch, g, k int) []int64 {
	if off, n, ok := p.blockRun(g, k); ok && p.dt == core.I64 {
		return i64view(p.b)[off : off+n]
	}
	_, lo, hi := p.blockRange(k)
	return gatherBlock(p, s.bufI64(hi-lo), g, k, p.runI64)
}

// blocksPerSeg and blocks count a group's blocks (rows).
func (p *rdPlan) blocksPerSeg() int { return (p.seg + rdBlock - 1) / rdBlock }

func (p *rdPlan) blocks() int { return p.group / p.seg * p.blocksPerSeg() }

// blockRange is block k's segment and range within it.
func (p *rdPlan) blockRange(k int) (j, lo, hi int) {
	per := p.blocksPerSeg()
	if per == 1 {
		return k, 0, p.seg
	}
	j, lo = k/per, k%per*rdBlock
	return j, lo, min(lo+rdBlock, p.seg)
}

// rowReduce reduces every group (rows): part(s, g, k) is block k of
// group g's partial, fold(g, k, v) takes them in order.
func rowReduce[P any](p *rdPlan, cost int, part func(s *rdScratch, g, k int) P, fold func(g, k int, v P)) {
	per := p.blocks()
	if p.outs >= 2*NumThreads() || per == 1 {
		parallelFor(p.outs, p.group*cost, func(lo, hi int) {
			var s rdScratch
			for g := lo; g < hi; g++ {
				for k := range per {
					fold(g, k, part(&s, g, k))
				}
			}
		})
		return
	}
	parts := make([]P, p.outs*per)
	parallelFor(len(parts), min(p.seg, rdBlock)*cost, func(lo, hi int) {
		var s rdScratch
		for i := lo; i < hi; i++ {
			parts[i] = part(&s, i/per, i%per)
		}
	})
	parallelFor(p.outs, per, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			for k, v := range parts[g*per : (g+1)*per] {
				fold(g, k, v)
			}
		}
	})
}

// colTile is the width of the column tasks: every output of a kept
// position in one, or narrower tiles when there are few positions.
func (p *rdPlan) colTile() int {
	tile := min(p.inner, rdColTile)
	if q, t := p.kept.count(), NumThreads(); q < 2*t && p.inner > 64 {
		tile = min(tile, max(64, (p.inner*q/(2*t)+15)&^15))
	}
	return tile
}

// colReduce runs task for every column tile (columns): out is the flat
// index of its first output, width its outputs, and rows the storage
// offsets of its first element at each reduced position, in order.
func colReduce(p *rdPlan, cost int, task func(s *rdScratch, out, width int, rows func(yield func(int) bool))) {
	tile := p.colTile()
	tiles := (p.inner + tile - 1) / tile
	parallelFor(p.kept.count()*tiles, tile*p.group*cost, func(lo, hi int) {
		var s rdScratch
		for u := lo; u < hi; u++ {
			q, first := u/tiles, u%tiles*tile
			base := p.base + p.kept.offset(q) + first*p.istep
			rows := func(yield func(int) bool) {
				idx := make([]int, len(p.red.shape))
				off := base
				for range p.group {
					if !yield(off) {
						return
					}
					for d := len(idx) - 1; d >= 0; d-- {
						idx[d]++
						off += p.red.strides[d]
						if idx[d] < p.red.shape[d] {
							break
						}
						off -= p.red.strides[d] * p.red.shape[d]
						idx[d] = 0
					}
				}
			}
			task(&s, q*p.inner+first, min(tile, p.inner-first), rows)
		}
	})
}

// neumaier is a compensated running sum: sum + comp is within a rounding
// of the exact sum of what was added, whatever their number.
type neumaier struct{ sum, comp float64 }

// add takes the rounding error of sum + v by Knuth's TwoSum: the exact
// error Neumaier's branch on the larger magnitude gives, without a branch
// that random signs would mispredict.
func (a *neumaier) add(v float64) {
	t := a.sum + v
	z := t - a.sum
	a.comp += (a.sum - (t - z)) + (v - z)
	a.sum = t
}

// value is the sum; an infinite or NaN sum stands (its compensation is NaN).
func (a neumaier) value() float64 {
	if math.IsInf(a.sum, 0) || a.sum != a.sum {
		return a.sum
	}
	return a.sum + a.comp
}

// foldCols adds a column block into compensated sums.
func foldCols(sum, comp, blk []float64) {
	for i, v := range blk {
		a := neumaier{sum[i], comp[i]}
		a.add(v)
		sum[i], comp[i] = a.sum, a.comp
	}
}

// f64view reinterprets aligned storage bytes as float64.
func f64view(b []byte) []float64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
}
