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
func newEwPlan(out *core.Tensor, ins ...*core.Tensor) ewPlan {
	p := ewPlan{n: out.Numel(), flat: true}
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

// inline reports whether the plan runs on the caller in one piece: one
// flat run too small to split. Each op checks it before making the
// closure run takes, so a small op allocates nothing (most of its cost at
// a few elements is the call itself).
func (p *ewPlan) inline(cost int) bool {
	return p.flat && (p.n < 2 || p.n*cost < parallelMin || NumThreads() <= 1)
}

// run calls fn over every run, in parallel when the work (cost per
// element) is large enough: pos[s] is operand s's storage index of the
// run's first element, steps[s] its step.
func (p *ewPlan) run(cost int, fn func(pos, steps [4]int, m int)) {
	if p.n == 0 {
		return
	}
	if p.flat {
		base, steps := p.base, p.steps
		parallelFor(p.n, cost, func(lo, hi int) {
			var pos [4]int
			for s := range pos {
				pos[s] = base[s] + lo*steps[s]
			}
			fn(pos, steps, hi-lo)
		})
		return
	}
	// Split the outermost dim of the walk; each chunk walks its rows.
	pw := p.w
	outer := pw.shape[0]
	parallelFor(outer, p.n/outer, func(lo, hi int) {
		w := walk{shape: append([]int{hi - lo}, pw.shape[1:]...), strides: pw.strides, base: make([]int, len(pw.base))}
		for s := range w.base {
			w.base[s] = pw.base[s] + lo*pw.strides[s][0]
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
	t := binTask{op: op, f32: f32, d: d, a: host(a), b: host(b), out: host(out)}
	cost := 1
	if op == binNone {
		cost = 8
	}
	p := newEwPlan(out, a, b)
	t.stream = d == core.F32 && streamsF32(op, a, b, p.n)
	switch {
	case p.inline(cost):
		t.run(p.base, p.steps, p.n)
	case d == core.F32 && p.rowBroadcast():
		t.runRowBroadcast(&p, cost)
	default:
		p.run(cost, t.run)
	}
	return true
}

// rowBroadcast reports whether a binary plan is a dense matrix (rows x n)
// and one row repeated: a linear layer's bias added to its output.
func (p *ewPlan) rowBroadcast() bool {
	w := &p.w
	if p.flat || len(w.shape) != 2 || w.shape[1] > ewBlock {
		return false
	}
	n := w.shape[1]
	dense := func(s int) bool { return w.strides[s][0] == n && w.strides[s][1] == 1 }
	row := func(s int) bool { return w.strides[s][0] == 0 && w.strides[s][1] == 1 }
	return dense(2) && (dense(0) && row(1) || row(0) && dense(1))
}

// runRowBroadcast runs a rowBroadcast plan in blocks of whole rows against
// the row repeated to the block's length, one vector-kernel call per block
// where the general walk made one per row: at 32 features a row (2048 rows,
// the bias of a UNet attention's output projection) that halved the add.
func (t binTask) runRowBroadcast(p *ewPlan, cost int) {
	rows, n := p.w.shape[0], p.w.shape[1]
	rowOp := 1 // which operand is the repeated row
	if p.w.strides[0][0] == 0 {
		rowOp = 0
	}
	src := [2][]float32{f32view(t.a), f32view(t.b)}
	row := src[rowOp][p.w.base[rowOp] : p.w.base[rowOp]+n]
	per := max(1, ewBlock/n) // rows per kernel call
	var tiled [ewBlock]float32
	for r := range per {
		copy(tiled[r*n:(r+1)*n], row)
	}
	dense, dst := src[1-rowOp][p.w.base[1-rowOp]:], f32view(t.out)[p.w.base[2]:]
	parallelFor(rows, n*cost, func(lo, hi int) {
		for r := lo; r < hi; r += per {
			m := min(per, hi-r) * n
			x, y := dense[r*n:r*n+m], tiled[:m]
			if rowOp == 0 {
				x, y = y, x
			}
			binBlock(t.op, t.f32, dst[r*n:r*n+m], x, y)
		}
	})
}

// binTask is one binary op over the storage of its operands.
type binTask struct {
	op        ewBin
	f32       func(a, b float32) float32
	d         core.DType
	a, b, out []byte
	stream    bool // f32 add, sub, mul or div past the cache: binF32Stream
}

func (t binTask) run(pos, steps [4]int, m int) {
	if m == 0 {
		return
	}
	if t.d == core.F32 && steps[0] <= 1 && steps[1] <= 1 {
		x := loadF32(nil, t.d, t.a, pos[0], steps[0], m)
		y := loadF32(nil, t.d, t.b, pos[1], steps[1], m)
		if t.stream {
			binF32Stream(t.op, f32view(t.out)[pos[2]:pos[2]+m], x, y)
			return
		}
		binBlock(t.op, t.f32, f32view(t.out)[pos[2]:pos[2]+m], x, y)
		return
	}
	var xb, yb, ob [ewBlock]float32
	for off := 0; off < m; off += ewBlock {
		k := min(ewBlock, m-off)
		x := loadF32(xb[:], t.d, t.a, pos[0]+off*steps[0], steps[0], k)
		y := loadF32(yb[:], t.d, t.b, pos[1]+off*steps[1], steps[1], k)
		binBlock(t.op, t.f32, ob[:k], x, y)
		storeF32(t.d, t.out, pos[2]+off, ob[:k])
	}
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
	t := cmpTask{op: op, d: d, a: host(a), b: host(b), out: host(out)}
	p := newEwPlan(out, a, b)
	if p.inline(1) {
		t.run(p.base, p.steps, p.n)
	} else {
		p.run(1, t.run)
	}
	return true
}

// cmpTask is one comparison over the storage of its operands.
type cmpTask struct {
	op        ewCmp
	d         core.DType
	a, b, out []byte
}

func (t cmpTask) run(pos, steps [4]int, m int) {
	if m == 0 {
		return
	}
	if t.d == core.F32 && steps[0] <= 1 && steps[1] <= 1 {
		x := loadF32(nil, t.d, t.a, pos[0], steps[0], m)
		y := loadF32(nil, t.d, t.b, pos[1], steps[1], m)
		cmpF32(t.op, t.out[pos[2]:pos[2]+m], x, y)
		return
	}
	var xb, yb [ewBlock]float32
	for off := 0; off < m; off += ewBlock {
		k := min(ewBlock, m-off)
		x := loadF32(xb[:], t.d, t.a, pos[0]+off*steps[0], steps[0], k)
		y := loadF32(yb[:], t.d, t.b, pos[1]+off*steps[1], steps[1], k)
		cmpF32(t.op, t.out[pos[2]+off:pos[2]+off+k], x, y)
	}
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
	t := unTask{fns: fns, d: d, in: host(in), out: host(out)}
	cost := max(fns.cost, 1)
	p := newEwPlan(out, in)
	t.stream = d == core.F32 && streamsUnF32(fns.vec, p.n)
	if p.inline(cost) {
		t.run(p.base, p.steps, p.n)
	} else {
		p.run(cost, t.run)
	}
	return true
}

// unTask is one unary op over the storage of its operands.
type unTask struct {
	fns     unaryFns
	d       core.DType
	in, out []byte
	stream  bool // a memory-bound f32 op past the cache: unF32Stream
}

func (t unTask) run(pos, steps [4]int, m int) {
	if m == 0 {
		return
	}
	if t.d == core.F32 && steps[0] == 1 {
		if t.stream {
			unF32Stream(t.fns.vec, f32view(t.out)[pos[1]:pos[1]+m], f32view(t.in)[pos[0]:pos[0]+m])
			return
		}
		unDirect(&t.fns, f32view(t.out)[pos[1]:pos[1]+m], f32view(t.in)[pos[0]:pos[0]+m])
		return
	}
	var xb, ob [ewBlock]float32
	for off := 0; off < m; off += ewBlock {
		k := min(ewBlock, m-off)
		x := loadF32(xb[:], t.d, t.in, pos[0]+off*steps[0], steps[0], k)
		if len(x) < k { // a broadcast value: compute once, repeat
			unBlock(&t.fns, ob[:1], x)
			for i := 1; i < k; i++ {
				ob[i] = ob[0]
			}
		} else {
			unBlock(&t.fns, ob[:k], x)
		}
		storeF32(t.d, t.out, pos[1]+off, ob[:k])
	}
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
