package ir

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// FuseEpilogues folds the elementwise work that consumes a matmul, a
// sparse product (spmm) or a convolution - a fused tree from FuseElementwise or a single
// elementwise op, such as relu(x @ w + b), x @ w + b + residual or
// relu(spmm(A, h) + b) - into the producer's store, so the product is never
// written to memory and read back. Run it after FuseElementwise; the fused
// node is named fused_<op>. A fold is made only when it is legal: the
// product has no other use and is not a graph output, the consumer's result
// has the product's shape (every extra operand broadcasts into it, so each
// output element is computed from its own product element: no read-write
// hazard), the operands are f32 (matrices, or batches of them, for matmul)
// and the extras fit the device's binding limit beside the producer's
// operands and output (core.Capabilities). It returns how many producers took
// an epilogue; a backend that cannot fuse leaves the graph as it is.
func (g *Graph) FuseEpilogues(dev core.Device) (int, error) {
	b, fuser, ok, err := passBackend[fusion.EpilogueFuser](dev)
	if !ok {
		return 0, err
	}
	lim := limitsOf(b)
	uses := g.useCounts()
	consumer := map[*Value]*Node{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			consumer[v] = n
		}
	}
	replace := map[*Node]*Node{}
	removed := map[*Node]bool{}
	folded := 0
	for _, m := range g.Nodes {
		if !epilogueProducer(m, fuser) {
			continue
		}
		prod := m.Outputs[0]
		c := consumer[prod]
		if uses[prod] != 1 || c == nil || replace[c] != nil || removed[c] {
			continue
		}
		expr, leaves, sub, ok := epilogueOf(c, fuser)
		if !ok || len(c.Outputs) != 1 || !sameShape(c.Outputs[0].Shape, prod.Shape) || c.Outputs[0].DType != core.F32 {
			continue
		}
		// Renumber the leaves: the product first, the extras after it.
		remap := make([]int, len(leaves))
		extras := []*Value{}
		for i, v := range leaves {
			if v == prod {
				remap[i] = 0
				continue
			}
			if v == nil || v.DType != core.F32 || len(v.Shape) > len(prod.Shape) {
				ok = false
			}
			remap[i] = len(extras) + 1
			extras = append(extras, v)
		}
		if !ok || len(extras) > lim.room(operandSlots(m)+1) || !lim.rankFits(len(prod.Shape)) {
			continue
		}
		inputs := append(append([]*Value{}, m.Inputs...), extras...)
		replace[c] = &Node{Op: "fused_" + m.Op, Inputs: inputs, Outputs: c.Outputs,
			Fused: renumber(expr, remap), Sub: append([]*Node{m}, sub...)}
		removed[m] = true
		folded++
	}
	g.rewriteNodes(replace, removed)
	return folded, nil
}

// epilogueProducer says whether n's output could take an epilogue: a
// matmul of two f32 matrices (or batches of them), an spmm of f32 values
// and a dense f32 matrix, or an f32 convolution.
func epilogueProducer(n *Node, fuser fusion.EpilogueFuser) bool {
	if n.Fused != nil || len(n.Outputs) != 1 || n.Outputs[0].DType != core.F32 || !fuser.TakesEpilogue(n.Op) {
		return false
	}
	conv := n.Op == "conv2d" || n.Op == "conv1d"
	for i, v := range n.Inputs {
		if v == nil && !(conv && i == 2) { // a convolution's bias is optional
			return false
		}
	}
	f32 := func(vs ...*Value) bool {
		for _, v := range vs {
			if v.DType != core.F32 {
				return false
			}
		}
		return true
	}
	switch n.Op {
	case "matmul":
		return len(n.Inputs) == 2 && len(n.Attrs) == 0 && f32(n.Inputs...) &&
			len(n.Inputs[0].Shape) >= 2 && len(n.Inputs[1].Shape) >= 2
	case "spmm":
		return len(n.Inputs) == 4 && f32(n.Inputs[2], n.Inputs[3]) && len(n.Inputs[3].Shape) == 2
	case "conv2d", "conv1d":
		return len(n.Inputs) >= 2 && f32(n.Inputs[0], n.Inputs[1]) && (len(n.Inputs) < 3 || n.Inputs[2] == nil || f32(n.Inputs[2]))
	}
	return false
}

// epilogueOf reads consumer c as an elementwise tree: a fused node's own,
// or one fusable op over its inputs. It returns the tree, its leaves and
// the original nodes it stands for.
func epilogueOf(c *Node, fuser fusion.MapFuser) (*fusion.Expr, []*Value, []*Node, bool) {
	if c.Fused != nil {
		if c.Op != "fused" {
			return nil, nil, nil, false
		}
		return c.Fused, c.Inputs, c.Sub, true
	}
	if len(c.Outputs) != 1 || !fuser.Fusable(c.Op, c.Attrs, c.Outputs[0].DType) {
		return nil, nil, nil, false
	}
	e := &fusion.Expr{Op: c.Op, Attrs: c.Attrs}
	var leaves []*Value
	for _, v := range c.Inputs {
		if v == nil {
			return nil, nil, nil, false
		}
		idx := -1
		for i, l := range leaves {
			if l == v {
				idx = i
			}
		}
		if idx < 0 {
			idx = len(leaves)
			leaves = append(leaves, v)
		}
		e.Args = append(e.Args, &fusion.Expr{Arg: idx})
	}
	return e, leaves, []*Node{c}, true
}

// renumber copies e with each leaf's Arg mapped through remap.
func renumber(e *fusion.Expr, remap []int) *fusion.Expr {
	if e.Op == "" {
		return &fusion.Expr{Arg: remap[e.Arg]}
	}
	out := &fusion.Expr{Op: e.Op, Attrs: e.Attrs, Value: e.Value, Args: make([]*fusion.Expr, len(e.Args))}
	for i, a := range e.Args {
		out.Args[i] = renumber(a, remap)
	}
	return out
}

// tryFuseEpilogue runs a fused_<op> node as one kernel where its device
// can and no gradient is recorded through it: the producer (n.Sub[0]) takes
// the first inputs, the epilogue's extras the rest.
func tryFuseEpilogue(n *Node, ins []*core.Tensor) (*core.Tensor, bool) {
	fuser, ok := fuserFor(ins)
	if !ok {
		return nil, false
	}
	ef, ok := fuser.(fusion.EpilogueFuser)
	if !ok {
		return nil, false
	}
	p := n.Sub[0]
	k := len(p.Inputs)
	t, err := ef.FuseEpilogue(p.Op, ins[:k], p.Attrs, n.Fused, ins[k:])
	return t, err == nil
}

// FuseReport says what Fuse did.
type FuseReport struct {
	Elementwise int // ops that went into elementwise trees
	Reductions  int // reductions that took a tree as their prologue
	Epilogues   int // matmuls and sparse products that took an epilogue
	Pairs       int // fused matmuls that also store a reader of their output
	ColumnSums  int // bias gradients summed by their layer's weight-gradient product
	Attention   int // attention outputs written with their heads transposed
	Layouts     int // constant weights whose other layout measured faster
	Norms       int // group norms that apply their reader's SiLU themselves
}

// Fuse runs the fusion passes for dev: group norms that take their SiLU
// (FuseNormActivation) first, then elementwise trees, then their
// folding into the reductions that consume them and into the matmuls and
// sparse products that feed them, then second stores (FusePairs), bias
// gradients into weight-gradient products (FuseColumnSums) and attention
// that writes its heads transposed (FuseAttentionTranspose); last, each
// constant weight takes the layout that measured faster
// (ChooseWeightLayouts).
// Loop bodies are fused too (their counts are included).
func (g *Graph) Fuse(dev core.Device) (FuseReport, error) {
	var r FuseReport
	passes := []struct {
		run   func(core.Device) (int, error)
		count *int
	}{
		{g.FuseNormActivation, &r.Norms}, {g.FuseElementwise, &r.Elementwise}, {g.FuseReductions, &r.Reductions}, {g.FuseEpilogues, &r.Epilogues},
		{g.FusePairs, &r.Pairs}, {g.FuseColumnSums, &r.ColumnSums}, {g.FuseAttentionTranspose, &r.Attention},
		{g.ChooseWeightLayouts, &r.Layouts},
	}
	for _, n := range g.Nodes {
		if n.Body == nil {
			continue
		}
		br, err := n.Body.Fuse(dev)
		if err != nil {
			return r, err
		}
		r.add(br)
	}
	for _, p := range passes {
		k, err := p.run(dev)
		*p.count += k
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// add counts what a loop body's Fuse did into r.
func (r *FuseReport) add(b FuseReport) {
	r.Elementwise += b.Elementwise
	r.Reductions += b.Reductions
	r.Epilogues += b.Epilogues
	r.Pairs += b.Pairs
	r.ColumnSums += b.ColumnSums
	r.Attention += b.Attention
	r.Layouts += b.Layouts
	r.Norms += b.Norms
}
