package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// The reductions as the kernels call them, on the plan of reduce_plan.go:
// each returns one value per output element (row-major over the kept
// dims), a broadcast group counted mult times where that changes the
// result. Float inputs of the float32 kind (f32, f16, bf16) are read as
// float32 and go through the vector kernels; f64 and the integers through
// float64, except where an integer result must stay exact (sums,
// products, extremes, in int64).

// planSums is the float64 sum of form f over every group.
func planSums(in *core.Tensor, axes []int, f sumForm) []float64 {
	out := tempF64(outCount(in.Shape(), axes))
	if in.Numel() == 0 {
		return out
	}
	p := newRdPlan(in, axes)
	if p.col {
		colSums(p, out, func(s *rdScratch, blk []float64, off int) {
			if p.kind == kindF32 {
				colSumF32(f, blk, p.runF32(s.bufF32(len(blk)), off, len(blk), p.istep))
			} else {
				colSumF64(f, blk, p.runF64(s.bufF64(len(blk)), off, len(blk), p.istep))
			}
		})
	} else if rows, ok := p.denseRowsF32(); ok {
		denseRowSums(p, f, rows, out)
	} else {
		rowSums(p, out, func(s *rdScratch, g, k int) float64 {
			if p.kind == kindF32 {
				return sumF32(f, p.blockF32(s, g, k))
			}
			return sumF64(f, p.blockF64(s, g, k))
		})
	}
	scaleF64(out, p.mult)
	return out
}

// planSumsMap is the float64 sum of fn(g, x) over the elements x of every
// group g; fast, when it is not nil, sums a float32 block of a row
// instead.
func planSumsMap(in *core.Tensor, axes []int, fn func(g int, v float64) float64, fast func(g int, x []float32) float64) []float64 {
	out := tempF64(outCount(in.Shape(), axes))
	if in.Numel() == 0 {
		return out
	}
	p := newRdPlan(in, axes)
	if p.col {
		colSums(p, out, func(s *rdScratch, blk []float64, off int) {
			g := s.first
			for j, v := range p.runF64(s.bufF64(len(blk)), off, len(blk), p.istep) {
				blk[j] += fn(g+j, v)
			}
		})
	} else {
		rowSums(p, out, func(s *rdScratch, g, k int) float64 {
			if fast != nil && p.kind == kindF32 {
				return fast(g, p.blockF32(s, g, k))
			}
			var a [4]float64
			for j, v := range p.blockF64(s, g, k) {
				a[j&3] += fn(g, v)
			}
			return (a[0] + a[1]) + (a[2] + a[3])
		})
	}
	scaleF64(out, p.mult)
	return out
}

// rowSums folds the block sums of every group with compensation (a
// group of one block is its sum: the fold would give the same bits).
func rowSums(p *rdPlan, out []float64, part func(s *rdScratch, g, k int) float64) {
	if p.blocks() == 1 {
		rowReduce(p, 1, part, func(g, _ int, v float64) { out[g] = v })
		return
	}
	acc := make([]neumaier, p.outs)
	rowReduce(p, 1, part, func(g, _ int, v float64) { acc[g].add(v) })
	for g, a := range acc {
		out[g] = a.value()
	}
}

// colSums runs add over the rows of every column tile: add sums a row,
// read from storage offset off, into blk; every rdColBlock rows the block
// joins the compensated totals.
func colSums(p *rdPlan, out []float64, add func(s *rdScratch, blk []float64, off int)) {
	if colSumsSplit(p, out, add) {
		return
	}
	colReduce(p, 1, func(s *rdScratch, o, width int, rows func(yield func(int) bool)) {
		acc := s.accF64(3 * width)
		sum, comp, blk := acc[:width], acc[width:2*width], acc[2*width:]
		s.first = o
		n := 0
		for off := range rows {
			add(s, blk, off)
			if n++; n%rdColBlock == 0 {
				foldCols(sum, comp, blk)
				clear(blk)
			}
		}
		if n%rdColBlock != 0 {
			foldCols(sum, comp, blk)
		}
		for j := range width {
			out[o+j] = neumaier{sum[j], comp[j]}.value()
		}
	})
}

// colSumsSplit is colSums for few, long columns (a sum over the leading
// axis): column tiles would read a strip of every row, a page apart,
// and leave threads idle, so the reduced positions split instead, in
// blocks of rdColBlock rows that tasks sum into partials whole rows
// wide, folded in order afterwards: the same blocks and the same fold as
// colSums, so the same bits. It reports whether it applied.
func colSumsSplit(p *rdPlan, out []float64, add func(s *rdScratch, blk []float64, off int)) bool {
	blocks, width := (p.group+rdColBlock-1)/rdColBlock, p.inner
	if p.kept.count() >= 2*NumThreads() || blocks < 2 || blocks*width > 1<<20 {
		return false
	}
	parts := tempF64(blocks * width)
	sum, comp := make([]float64, width), make([]float64, width)
	for q := range p.kept.count() {
		base := p.base + p.kept.offset(q)
		clear(parts)
		parallelFor(blocks, rdColBlock*width, func(lo, hi int) {
			s := rdScratch{first: q * width}
			for b := lo; b < hi; b++ {
				blk := parts[b*width : (b+1)*width]
				for r := b * rdColBlock; r < min((b+1)*rdColBlock, p.group); r++ {
					add(&s, blk, base+p.red.offset(r))
				}
			}
		})
		clear(sum)
		clear(comp)
		parallelFor(width, blocks*4, func(lo, hi int) {
			for b := range blocks {
				foldCols(sum[lo:hi], comp[lo:hi], parts[b*width+lo:b*width+hi])
			}
			for j := lo; j < hi; j++ {
				out[q*width+j] = neumaier{sum[j], comp[j]}.value()
			}
		})
	}
	return true
}

// planFold reduces every group from init by step, which must be
// associative in the order kept: rows fold the partials that b32 or b64
// make of their blocks, columns every element.
func planFold(in *core.Tensor, axes []int, init float64, b32 func([]float32) float64, b64 func([]float64) float64, step func(a, v float64) float64) ([]float64, *rdPlan) {
	out := fillF64(outCount(in.Shape(), axes), init)
	if in.Numel() == 0 {
		return out, nil
	}
	p := newRdPlan(in, axes)
	if p.col {
		colReduce(p, 2, func(s *rdScratch, o, width int, rows func(yield func(int) bool)) {
			acc := out[o : o+width]
			for off := range rows {
				if p.kind == kindF32 {
					colFold(acc, p.runF32(s.bufF32(width), off, width, p.istep), step)
				} else {
					colFold(acc, p.runF64(s.bufF64(width), off, width, p.istep), step)
				}
			}
		})
		return out, p
	}
	rowReduce(p, 2, func(s *rdScratch, g, k int) float64 {
		if p.kind == kindF32 {
			return b32(p.blockF32(s, g, k))
		}
		return b64(p.blockF64(s, g, k))
	}, func(g, _ int, v float64) { out[g] = step(out[g], v) })
	return out, p
}

func colFold[T floatElem](acc []float64, x []T, step func(a, v float64) float64) {
	for j, v := range x {
		acc[j] = step(acc[j], float64(v))
	}
}

// planFoldI64 is planFold in int64, for integer inputs; b32, when not
// nil, takes a dense int32 block in place.
func planFoldI64(in *core.Tensor, axes []int, init int64, block func([]int64) int64, b32 func([]int32) int64, step func(a, v int64) int64) ([]int64, *rdPlan) {
	out := fillI64(outCount(in.Shape(), axes), init)
	if in.Numel() == 0 {
		return out, nil
	}
	p := newRdPlan(in, axes)
	if p.col {
		colReduce(p, 2, func(s *rdScratch, o, width int, rows func(yield func(int) bool)) {
			acc := out[o : o+width]
			for off := range rows {
				for j, v := range p.runI64(s.bufI64(width), off, width, p.istep) {
					acc[j] = step(acc[j], v)
				}
			}
		})
		return out, p
	}
	rowReduce(p, 2, func(s *rdScratch, g, k int) int64 {
		if off, n, ok := p.blockRun(g, k); ok && p.dt == core.I32 && b32 != nil {
			return b32(i32view(p.b)[off : off+n])
		}
		return block(p.blockI64(s, g, k))
	}, func(g, _ int, v int64) { out[g] = step(out[g], v) })
	return out, p
}

// planSumsI64 is the exact, wrapping int64 sum of every group.
func planSumsI64(in *core.Tensor, axes []int) []int64 {
	out, p := planFoldI64(in, axes, 0, sumInt64, sumInt32, func(a, v int64) int64 { return a + v })
	if p != nil && p.mult > 1 {
		for i := range out {
			out[i] *= int64(p.mult)
		}
	}
	return out
}

// extremeStep keeps the larger (max) or smaller of a and v: a NaN, once
// met, stays, and of equal values the first.
func extremeStep(max bool) func(a, v float64) float64 {
	return func(a, v float64) float64 {
		if a != a || (v == v && !((max && v > a) || (!max && v < a))) {
			return a
		}
		return v
	}
}

// planExtremes is the largest (max) or smallest value of every group, of
// |x| with abs; NaN where the group holds one.
func planExtremes(in *core.Tensor, axes []int, max, abs bool) []float64 {
	init := math.Inf(1)
	if max {
		init = math.Inf(-1)
	}
	step := extremeStep(max)
	if abs {
		step = func(a, v float64) float64 { return extremeStep(max)(a, math.Abs(v)) }
	}
	out, _ := planFold(in, axes, init, func(x []float32) float64 {
		r, nan := extremeF32(max, abs, x)
		if r == 0 && !nan { // the vector kernel may pick either zero: the first counts
			r, nan = extremeGo(max, abs, x)
		}
		return nanOr(nan, float64(r))
	}, func(x []float64) float64 {
		r, nan := extremeF64(max, abs, x)
		if r == 0 && !nan {
			r, nan = extremeGo(max, abs, x)
		}
		return nanOr(nan, r)
	}, step)
	return out
}

func nanOr(nan bool, v float64) float64 {
	if nan {
		return math.NaN()
	}
	return v
}

// planExtremesI64 is planExtremes of an integer input, exactly.
func planExtremesI64(in *core.Tensor, axes []int, max bool) []int64 {
	init := int64(math.MaxInt64)
	if max {
		init = math.MinInt64
	}
	step := func(a, v int64) int64 {
		if (max && v > a) || (!max && v < a) {
			return v
		}
		return a
	}
	out, _ := planFoldI64(in, axes, init, func(x []int64) int64 {
		r := init
		for _, v := range x {
			r = step(r, v)
		}
		return r
	}, nil, step)
	return out
}

// planProds is the float64 product of every group, a broadcast group
// raised to the mult-th power.
func planProds(in *core.Tensor, axes []int) []float64 {
	out, p := planFold(in, axes, 1, prodF32, prodF64, func(a, v float64) float64 { return a * v })
	if p != nil && p.mult > 1 {
		for i := range out {
			out[i] = math.Pow(out[i], float64(p.mult))
		}
	}
	return out
}

// planProdsI64 is the wrapping int64 product of every group.
func planProdsI64(in *core.Tensor, axes []int) []int64 {
	mul := func(a, v int64) int64 { return a * v }
	out, p := planFoldI64(in, axes, 1, func(x []int64) int64 {
		r := int64(1)
		for _, v := range x {
			r *= v
		}
		return r
	}, nil, mul)
	if p != nil && p.mult > 1 {
		for i := range out {
			out[i] = powWrap(out[i], p.mult)
		}
	}
	return out
}

// planDeviations is, for every group, the sum of squared deviations from
// its mean (mean[g], given), from shifted sums: with d = x - mean,
// sum(d²) - sum(d)²/n, where sum(d) is a rounding error of the mean.
func planDeviations(in *core.Tensor, axes []int, mean []float64) []float64 {
	out := tempF64(len(mean))
	if in.Numel() == 0 {
		return out
	}
	p := newRdPlan(in, axes)
	s1, s2 := make([]float64, len(out)), make([]float64, len(out))
	if p.col {
		colReduce(p, 2, func(s *rdScratch, o, width int, rows func(yield func(int) bool)) {
			acc := s.accF64(6 * width)
			a1, c1, b1 := acc[:width], acc[width:2*width], acc[2*width:3*width]
			a2, c2, b2 := acc[3*width:4*width], acc[4*width:5*width], acc[5*width:]
			k, n := mean[o:o+width], 0
			for off := range rows {
				if p.kind == kindF32 {
					colShiftF32(b1, b2, k, p.runF32(s.bufF32(width), off, width, p.istep))
				} else {
					colShiftF64(b1, b2, k, p.runF64(s.bufF64(width), off, width, p.istep))
				}
				if n++; n%rdColBlock == 0 || n == p.group {
					foldCols(a1, c1, b1)
					foldCols(a2, c2, b2)
					clear(b1)
					clear(b2)
				}
			}
			for j := range width {
				s1[o+j], s2[o+j] = neumaier{a1[j], c1[j]}.value(), neumaier{a2[j], c2[j]}.value()
			}
		})
	} else {
		acc1, acc2 := make([]neumaier, p.outs), make([]neumaier, p.outs)
		rowReduce(p, 3, func(s *rdScratch, g, k int) [2]float64 {
			var a, b float64
			if p.kind == kindF32 {
				a, b = shiftSumsF32(p.blockF32(s, g, k), mean[g])
			} else {
				a, b = shiftSumsF64(p.blockF64(s, g, k), mean[g])
			}
			return [2]float64{a, b}
		}, func(g, _ int, v [2]float64) {
			acc1[g].add(v[0])
			acc2[g].add(v[1])
		})
		for g := range out {
			s1[g], s2[g] = acc1[g].value(), acc2[g].value()
		}
	}
	n := float64(p.group)
	for g := range out {
		out[g] = math.Max(s2[g]-s1[g]*s1[g]/n, 0) * float64(p.mult)
	}
	return out
}

// planArgExtremes is the index of the first NaN of every group, else of
// its first largest (max) or smallest value, in row-major order over the
// reduced dims; ok is false where the plan does not apply (integers,
// which float64 would round, and a broadcast reduced dim, whose copies
// the plan reads once).
func planArgExtremes(in *core.Tensor, axes []int, max bool) (at []int64, ok bool) {
	if !in.DType().IsFloat() || in.Numel() == 0 || in.Numel() > math.MaxInt32 {
		return nil, false
	}
	p := newRdPlan(in, axes)
	if p.mult != 1 {
		return nil, false
	}
	at = tempI64(p.outs)
	if p.col {
		colArgs(p, max, at)
		return at, true
	}
	type best struct {
		v  float64
		at int
	}
	bests := make([]best, p.outs)
	rowReduce(p, 2, func(s *rdScratch, g, k int) best {
		j, lo, _ := p.blockRange(k)
		var i int
		var v float64
		if p.kind == kindF32 {
			x := p.blockF32(s, g, k)
			i = argExtremeF32(max, x)
			v = float64(x[i])
		} else {
			x := p.blockF64(s, g, k)
			i = argExtremeGo(max, x)
			v = x[i]
		}
		return best{v, j*p.seg + lo + i}
	}, func(g, k int, b best) {
		a := bests[g]
		if k == 0 || (a.v == a.v && (b.v != b.v || (max && b.v > a.v) || (!max && b.v < a.v))) {
			bests[g] = b
		}
	})
	for g, b := range bests {
		at[g] = int64(b.at)
	}
	return at, true
}

// colArgs is planArgExtremes of a columns layout.
func colArgs(p *rdPlan, max bool, at []int64) {
	colReduce(p, 2, func(s *rdScratch, o, width int, rows func(yield func(int) bool)) {
		idx := make([]int32, width)
		j := 0
		if p.kind == kindF32 {
			best := make([]float32, width)
			for off := range rows {
				x := p.runF32(s.bufF32(width), off, width, p.istep)
				if j == 0 {
					copy(best, x)
				} else {
					colArgF32(max, best, idx, x, j)
				}
				j++
			}
		} else {
			best := make([]float64, width)
			for off := range rows {
				x := p.runF64(s.bufF64(width), off, width, p.istep)
				if j == 0 {
					copy(best, x)
				} else {
					colArgGo(max, best, idx, x, j)
				}
				j++
			}
		}
		for i, v := range idx {
			at[o+i] = int64(v)
		}
	})
}
