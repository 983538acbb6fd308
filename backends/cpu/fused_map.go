package cpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// The graph IR's elementwise fusion on the CPU (fusion.MapFuser): a tree
// such as gelu(x·w + b) runs as one loop over cache-sized blocks, each
// node applied to the block with the same functions its op's kernel uses
// (the vector kernels, or the float32 and float64 functions), so the fused
// result has the bits of the op chain and only the tree's inputs and
// output cross memory. One pass instead of one per op is what the memory
// bound chains of a training step gain: gelu(x·w + b) over 4M f32 took
// 4.3 ms fused against 6.5 ms op by op (BenchmarkCPUFusedChain in core/ir,
// 2 cores).

// mapBlock is the elements one node covers per step: a few blocks of
// intermediate values stay in L1 and L2 while the tree is evaluated.
const mapBlock = 2048

// Fusable reports whether op, with attrs and an f32 result, has its
// functions here: the unary and binary ops with float32 kernels and the
// ops described by their arithmetic (core.Pointwise).
func (*Backend) Fusable(op string, attrs core.Attrs, dtype core.DType) bool {
	if dtype != core.F32 {
		return false
	}
	_, un := ewUnaryFns[op]
	_, bin := ewBinaryFns[op]
	_, binAttrs := ewBinaryAttrFns[op]
	if un || bin || binAttrs {
		return true
	}
	def, ok := core.LookupOp(op)
	return ok && def.Pointwise != nil && core.LookupKernel("cpu", op) != nil
}

// mapNode is one node of a compiled tree: a leaf reads input arg, a
// constant is val, an operator applies un or bin to its operand slots.
type mapNode struct {
	leaf  bool
	arg   int
	konst bool
	val   float32
	un    *unaryFns
	bin   *binaryFns
	a, b  int // operand slots
}

// FuseMap computes the tree e over inputs (broadcast to shape) into a new
// f32 tensor of shape.
func (b *Backend) FuseMap(e *fusion.Expr, inputs []*core.Tensor, shape core.Shape, dtype core.DType) (*core.Tensor, error) {
	if dtype != core.F32 {
		return nil, fmt.Errorf("cpu: fused trees are f32, not %s", dtype)
	}
	nodes, err := compileMap(e, len(inputs))
	if err != nil {
		return nil, err
	}
	leaves := make([]mapLeaf, len(inputs))
	for i, t := range inputs {
		if leaves[i], err = newMapLeaf(t, shape); err != nil {
			return nil, fmt.Errorf("cpu: fused input %d: %w", i, err)
		}
	}
	out, err := core.Empty(b, shape, core.F32)
	if err != nil {
		return nil, err
	}
	claimOutput(out) // evalMapInto writes every element
	n := shape.Numel()
	if n == 0 {
		return out, nil
	}
	dst := f32view(host(out))[out.Offset() : out.Offset()+n]
	blocks := (n + mapBlock - 1) / mapBlock
	parallelFor(blocks, mapBlock*len(nodes), func(lo, hi int) {
		slots := make([][]float32, len(nodes))
		scratch := make([]float32, len(nodes)*mapBlock)
		for blk := lo; blk < hi; blk++ {
			from := blk * mapBlock
			evalMapInto(nodes, leaves, slots, scratch, dst, from, min(mapBlock, n-from))
		}
	})
	return out, nil
}

// evalMapInto computes output elements [from, from+m) of a compiled map
// into dst[from:from+m], with room in scratch for every node's m values.
// The root writes dst in place; the other nodes only read it (an
// epilogue's product is both its leaf 0 and its output), elementwise.
func evalMapInto(nodes []mapNode, leaves []mapLeaf, slots [][]float32, scratch, dst []float32, from, m int) {
	last := len(nodes) - 1
	for s := range nodes {
		buf := scratch[s*m : (s+1)*m]
		if s == last {
			buf = dst[from : from+m] // the root writes the output in place
		}
		slots[s] = evalMapNode(&nodes[s], slots, buf, leaves, from)
	}
	if root := slots[last]; len(root) == 1 && m > 1 { // a tree of constants and scalars
		for i := range m {
			dst[from+i] = root[0]
		}
	}
}

// compileMap lists e's nodes in evaluation order (operands first, the
// root last); a node shared within the tree is computed once.
func compileMap(e *fusion.Expr, nIn int) ([]mapNode, error) {
	nodes, _, err := compileExprs([]*fusion.Expr{e}, nIn, exprNodes[mapNode]{
		leaf:     func(arg int) mapNode { return mapNode{leaf: true, arg: arg} },
		constant: func(v float64) mapNode { return mapNode{konst: true, val: float32(v)} },
		operator: mapOperator,
		operands: func(nd *mapNode, args []int, _ []mapNode) {
			nd.a = args[0]
			if nd.bin != nil {
				nd.b = args[1]
			}
		},
	})
	return nodes, err
}

// mapOperator finds the functions of e's op, as its kernel would run them
// for e's attributes on f32 data.
func mapOperator(e *fusion.Expr) (mapNode, error) {
	arity := len(e.Args)
	// A tree keeps the attributes as called; the kernel sees them with
	// their defaults filled.
	attrs, err := core.NormalizeAttrs(e.Op, e.Attrs)
	if err != nil {
		return mapNode{}, fmt.Errorf("cpu: fused %s: %w", e.Op, err)
	}
	if build, ok := ewUnaryFns[e.Op]; ok && arity == 1 {
		fns := build(attrs, core.F32)
		return mapNode{un: withF32(fns)}, nil
	}
	if fns, ok := ewBinaryFns[e.Op]; ok && arity == 2 && len(attrs) == 0 {
		return mapNode{bin: binWithF32(fns)}, nil
	}
	if build, ok := ewBinaryAttrFns[e.Op]; ok && arity == 2 {
		return mapNode{bin: binWithF32(build(attrs))}, nil
	}
	if def, ok := core.LookupOp(e.Op); ok && def.Pointwise != nil {
		p := def.Pointwise
		switch {
		case p.F != nil && arity == 1:
			f := p.F(attrs)
			return mapNode{un: &unaryFns{f: f, f32: ewThrough64(f)}}, nil
		case p.F2 != nil && arity == 2:
			fns := pointwiseBinary(p)
			return mapNode{bin: &fns}, nil
		}
	}
	return mapNode{}, fmt.Errorf("cpu: %s with %d operands is not fused", e.Op, arity)
}

// withF32 gives fns a float32 function where it has only the float64 one:
// the f64 path rounds f's result once, as float32(f(x)) does.
func withF32(fns unaryFns) *unaryFns {
	if fns.f32 == nil {
		fns.f32 = ewThrough64(fns.f)
	}
	return &fns
}

func binWithF32(fns binaryFns) *binaryFns {
	if fns.vec == binNone && fns.f32 == nil {
		f := fns.f
		fns.f32 = func(a, b float32) float32 { return float32(f(float64(a), float64(b))) }
	}
	return &fns
}

// evalMapNode returns node s's values for the block at from: a slice of
// the block's length, or of length 1 for a uniform node.
func evalMapNode(nd *mapNode, slots [][]float32, buf []float32, leaves []mapLeaf, from int) []float32 {
	switch {
	case nd.leaf:
		return leaves[nd.arg].block(buf, from, len(buf))
	case nd.konst:
		buf[0] = nd.val
		return buf[:1]
	case nd.un != nil:
		x := slots[nd.a]
		out := buf[:len(x)]
		unDirect(nd.un, out, x)
		return out
	}
	x, y := slots[nd.a], slots[nd.b]
	out := buf[:max(len(x), len(y))]
	binBlock(nd.bin.vec, nd.bin.f32, out, x, y)
	return out
}

// mapLeaf reads one input's elements for a block of the output: a dense
// input in place, a single value as one, an input broadcast along leading
// dimensions by wrapping around it, one broadcast along trailing ones (a
// per-channel bias over [N, C, H, W], a norm's statistics) by repeating
// each element, anything else from a dense copy.
type mapLeaf struct {
	data   []float32
	period int // the output repeats data every period elements
	run    int // each element of data stands for run adjacent output elements (0: 1)
	// A view of the output's shape whose rows (its last dim, inner
	// elements) are dense but stride apart (a slice of the last dim, such
	// as one half of GEGLU's projection): row r at data[r*stride:].
	inner, stride int
}

func newMapLeaf(t *core.Tensor, shape core.Shape) (mapLeaf, error) {
	if t.DType() != core.F32 || t.Device() != core.CPU {
		return mapLeaf{}, fmt.Errorf("is %s on %s, want f32 on the CPU", t.DType(), t.Device())
	}
	if t.Numel() == 1 {
		v, err := t.Float64s()
		if err != nil {
			return mapLeaf{}, err
		}
		return mapLeaf{data: []float32{float32(v[0])}, period: 1}, nil
	}
	if run, ok := runsOf(t.Shape(), shape); ok && t.IsContiguous() {
		// Expanding would write run copies of every element into a
		// tensor of the output's size before the loop reads it once.
		n := t.Numel()
		return mapLeaf{data: f32view(host(t))[t.Offset() : t.Offset()+n], period: n * run, run: run}, nil
	}
	if inner, stride, ok := stridedRows(t, shape); ok {
		// Read in place, row by row: the compiled UNet copied such views
		// (GEGLU's halves) whole before each fused map, 10% of its time.
		b := f32view(host(t))
		rows := t.Numel() / inner
		return mapLeaf{data: b[t.Offset() : t.Offset()+(rows-1)*stride+inner], period: t.Numel(), inner: inner, stride: stride}, nil
	}
	if !t.IsContiguous() || !trailingOf(t.Shape(), shape) {
		dense := t.Expand(core.Attrs{"shape": []int(shape)}).Contiguous()
		if err := dense.Err(); err != nil {
			return mapLeaf{}, err
		}
		t = dense
	}
	n := t.Numel()
	return mapLeaf{data: f32view(host(t))[t.Offset() : t.Offset()+n], period: n}, nil
}

// trailingOf reports whether in, without its leading 1s, is the trailing
// dimensions of out: its elements then repeat along out's leading ones.
func trailingOf(in, out core.Shape) bool {
	for len(in) > 0 && in[0] == 1 {
		in = in[1:]
	}
	if len(in) > len(out) {
		return false
	}
	return in.Equal(out[len(out)-len(in):])
}

// stridedRows reports whether t is a view of shape whose last dim is
// dense and whose other dims step through its storage by whole rows of one
// stride (they collapse into one dim of rows), and gives the row length
// and stride.
func stridedRows(t *core.Tensor, shape core.Shape) (inner, stride int, ok bool) {
	s, st := t.Shape(), t.Strides()
	if !s.Equal(shape) || len(s) < 2 || t.IsContiguous() || t.Numel() == 0 || st[len(s)-1] != 1 {
		return 0, 0, false
	}
	inner, stride = s[len(s)-1], st[len(s)-2]
	if stride < inner {
		return 0, 0, false
	}
	for d := len(s) - 2; d > 0; d-- {
		if s[d-1] > 1 && st[d-1] != s[d]*st[d] {
			return 0, 0, false
		}
	}
	return inner, stride, true
}

// runsOf reports whether in, without its leading 1s, is some of out's
// dimensions followed by trailing 1s (at least one of them over a dim
// above 1), and how many output elements each input element covers.
func runsOf(in, out core.Shape) (run int, ok bool) {
	for len(in) > 0 && in[0] == 1 {
		in = in[1:]
	}
	k := len(in)
	for k > 0 && in[k-1] == 1 {
		k--
	}
	if k == 0 || k == len(in) || len(in) > len(out) {
		return 0, false
	}
	off := len(out) - len(in)
	if !in[:k].Equal(out[off : off+k]) {
		return 0, false
	}
	run = 1
	for _, d := range out[off+k:] {
		run *= d
	}
	return run, run > 1
}

func (l mapLeaf) block(buf []float32, from, m int) []float32 {
	if l.period == 1 {
		return l.data[:1]
	}
	if l.inner > 0 {
		for i := 0; i < m; {
			r, c := (from+i)/l.inner, (from+i)%l.inner
			i += copy(buf[i:m], l.data[r*l.stride+c:r*l.stride+l.inner])
		}
		return buf[:m]
	}
	if l.run > 1 {
		for i := 0; i < m; {
			at := (from + i) % l.period
			v, n := l.data[at/l.run], min(l.run-at%l.run, m-i)
			if n == m { // the whole block is one value: a uniform node
				buf[0] = v
				return buf[:1]
			}
			for j := range n {
				buf[i+j] = v
			}
			i += n
		}
		return buf[:m]
	}
	if start := from % l.period; start+m <= l.period {
		return l.data[start : start+m] // in place: a dense input, or a block within one period
	}
	for i := 0; i < m; {
		start := (from + i) % l.period
		i += copy(buf[i:m], l.data[start:])
	}
	return buf[:m]
}
