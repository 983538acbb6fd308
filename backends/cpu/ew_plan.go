package cpu

import (
	"github.com/webtensor/webtensor/core"
)

// ewPlan walks the operands of an elementwise op in runs: stretches of the
// output along which each input moves by a fixed step (1 for contiguous
// data, 0 for a broadcast value, anything for a strided view). Dense and
// single-value operands - nearly every call - make one flat run with no
// bookkeeping; other layouts walk the output row-major (stream.go), so a
// bias added to every row, a column of scales or a transposed view is a
// run per row, read in place. The output is always contiguous: stride set
// len(ins) is its element index.
type ewPlan struct {
	n     int
	flat  bool
	steps [4]int // per operand, along a run (the output's is 1)
	base  [4]int
	w     walk // the layout when not flat
}

// newEwPlan plans the walk of out over ins (at most three inputs).
func newEwPlan(out *core.Tensor, ins ...*core.Tensor) *ewPlan {
	p := &ewPlan{n: out.Numel(), flat: true}
	for s, t := range ins {
		p.base[s] = t.Offset()
		switch {
		case t.Numel() == 1:
			p.steps[s] = 0
		case t.IsContiguous() && t.Numel() == p.n:
			// Broadcasting that keeps the element count repeats nothing:
			// the operand is in the output's order.
			p.steps[s] = 1
		default:
			p.flat = false
		}
	}
	p.base[len(ins)], p.steps[len(ins)] = out.Offset(), 1
	if p.flat {
		return p
	}
	shape := out.Shape()
	strides := make([][]int, len(ins)+1)
	base := make([]int, len(ins)+1)
	for s, t := range ins {
		strides[s], base[s] = viewStrides(t, shape), t.Offset()
	}
	strides[len(ins)], base[len(ins)] = rowMajor(shape), out.Offset()
	p.w = walk{shape: shape.Clone(), strides: strides, base: base}
	p.w.coalesce()
	if len(p.w.shape) <= 1 {
		// One dim left: a single run with the walk's steps.
		p.flat = true
		for s := range base {
			p.steps[s] = p.w.step(s)
		}
	}
	return p
}

// run calls fn over every run, in parallel when the work (cost per
// element) is large enough: pos[s] is operand s's storage index of the
// run's first element, steps[s] its step.
func (p *ewPlan) run(cost int, fn func(pos, steps [4]int, m int)) {
	if p.n == 0 {
		return
	}
	if p.flat {
		parallelFor(p.n, cost, func(lo, hi int) {
			var pos [4]int
			for s := range pos {
				pos[s] = p.base[s] + lo*p.steps[s]
			}
			fn(pos, p.steps, hi-lo)
		})
		return
	}
	// Split the outermost dim of the walk; each chunk walks its rows.
	outer := p.w.shape[0]
	parallelFor(outer, p.n/outer, func(lo, hi int) {
		w := walk{shape: append([]int{hi - lo}, p.w.shape[1:]...), strides: p.w.strides, base: make([]int, len(p.w.base))}
		for s := range w.base {
			w.base[s] = p.w.base[s] + lo*p.w.strides[s][0]
		}
		var steps [4]int
		for s := range w.base {
			steps[s] = w.step(s)
		}
		w.runs(func(pos []int, m int) {
			var at [4]int
			copy(at[:], pos)
			fn(at, steps, m)
		})
	})
}

// ewBlock is the length of the float32 blocks f16, bf16 and strided data
// are converted through: small enough for three to sit in L1 on the stack.
const ewBlock = 512

// binaryFloat runs a binary op over inputs and an output of one float-block
// dtype (f32, f16, bf16) in float32: op's vector kernel, or f32 per element
// when op is binNone. It reports false for other dtypes.
func binaryFloat(op ewBin, f32 func(a, b float32) float32, a, b, out *core.Tensor) bool {
	d := out.DType()
	if !floatBlock(d) || a.DType() != d || b.DType() != d || (op == binNone && f32 == nil) {
		return false
	}
	ab, bb, ob := host(a), host(b), host(out)
	cost := 1
	if op == binNone {
		cost = 8
	}
	newEwPlan(out, a, b).run(cost, func(pos, steps [4]int, m int) {
		if d == core.F32 && steps[0] <= 1 && steps[1] <= 1 {
			x := loadF32(nil, d, ab, pos[0], steps[0], m)
			y := loadF32(nil, d, bb, pos[1], steps[1], m)
			binBlock(op, f32, f32view(ob)[pos[2]:pos[2]+m], x, y)
			return
		}
		var xb, yb, ob32 [ewBlock]float32
		for off := 0; off < m; off += ewBlock {
			k := min(ewBlock, m-off)
			x := loadF32(xb[:], d, ab, pos[0]+off*steps[0], steps[0], k)
			y := loadF32(yb[:], d, bb, pos[1]+off*steps[1], steps[1], k)
			binBlock(op, f32, ob32[:k], x, y)
			storeF32(d, ob, pos[2]+off, ob32[:k])
		}
	})
	return true
}

// binBlock computes one block of a binary op: op's kernel, or f32 per
// element; x and y have len(dst) elements or one.
func binBlock(op ewBin, f32 func(a, b float32) float32, dst, x, y []float32) {
	if op != binNone {
		binF32(op, dst, x, y)
		return
	}
	xm, ym := min(len(x)-1, 1), min(len(y)-1, 1)
	for i := range dst {
		dst[i] = f32(x[i*xm], y[i*ym])
	}
}

// compareFloat compares inputs of one float-block dtype into a bool
// output; it reports false for other dtypes.
func compareFloat(op ewCmp, a, b, out *core.Tensor) bool {
	d := a.DType()
	if !floatBlock(d) || b.DType() != d || out.DType() != core.Bool {
		return false
	}
	ab, bb, ob := host(a), host(b), host(out)
	newEwPlan(out, a, b).run(1, func(pos, steps [4]int, m int) {
		if d == core.F32 && steps[0] <= 1 && steps[1] <= 1 {
			x := loadF32(nil, d, ab, pos[0], steps[0], m)
			y := loadF32(nil, d, bb, pos[1], steps[1], m)
			cmpF32(op, ob[pos[2]:pos[2]+m], x, y)
			return
		}
		var xb, yb [ewBlock]float32
		for off := 0; off < m; off += ewBlock {
			k := min(ewBlock, m-off)
			x := loadF32(xb[:], d, ab, pos[0]+off*steps[0], steps[0], k)
			y := loadF32(yb[:], d, bb, pos[1]+off*steps[1], steps[1], k)
			cmpF32(op, ob[pos[2]+off:pos[2]+off+k], x, y)
		}
	})
	return true
}

// unaryFloat runs a unary op from a float-block dtype into the same dtype
// in float32: op's vector kernel where there is one, else loop (or f32
// per element). It reports false for other dtypes.
func unaryFloat(fns unaryFns, in, out *core.Tensor) bool {
	d := out.DType()
	if !floatBlock(d) || in.DType() != d || (fns.vec == unNone && fns.f32 == nil && fns.f32Loop == nil) {
		return false
	}
	if fns.f32 == nil && (d != core.F32 || !isDense(in, out.Shape())) {
		return false // only a loop over dense f32
	}
	ib, ob := host(in), host(out)
	newEwPlan(out, in).run(max(fns.cost, 1), func(pos, steps [4]int, m int) {
		if d == core.F32 && steps[0] == 1 {
			unDirect(&fns, f32view(ob)[pos[1]:pos[1]+m], f32view(ib)[pos[0]:pos[0]+m])
			return
		}
		var xb, ob32 [ewBlock]float32
		for off := 0; off < m; off += ewBlock {
			k := min(ewBlock, m-off)
			x := loadF32(xb[:], d, ib, pos[0]+off*steps[0], steps[0], k)
			if len(x) < k { // a broadcast value: compute once, repeat
				unBlock(&fns, ob32[:1], x)
				for i := 1; i < k; i++ {
					ob32[i] = ob32[0]
				}
			} else {
				unBlock(&fns, ob32[:k], x)
			}
			storeF32(d, ob, pos[1]+off, ob32[:k])
		}
	})
	return true
}

// unDirect computes a unary op over f32 data in place: its vector kernel,
// its loop, or f32 per element.
func unDirect(fns *unaryFns, dst, src []float32) {
	if fns.vec != unNone && unF32(fns.vec, dst, src) {
		return
	}
	if fns.f32Loop != nil {
		fns.f32Loop(dst, src)
		return
	}
	for i, x := range src {
		dst[i] = fns.f32(x)
	}
}

// unBlock is unDirect for the stack blocks of f16, bf16 and strided
// data, without the loop: a call through a function value would move the
// blocks to the heap.
func unBlock(fns *unaryFns, dst, src []float32) {
	if fns.vec != unNone && unF32(fns.vec, dst, src) {
		return
	}
	for i, x := range src {
		dst[i] = fns.f32(x)
	}
}
