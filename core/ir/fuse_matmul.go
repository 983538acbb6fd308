package ir

import (
	"github.com/webtensor/webtensor/core"
)

// maxEpilogueExtras bounds the tensors an epilogue reads besides the
// product: with a, b and the output they fill the 8 storage buffers a
// WebGPU stage may bind by default.
const maxEpilogueExtras = 5

// FuseEpilogues folds the elementwise work that consumes a matmul - a
// fused tree from FuseElementwise or a single elementwise op, such as
// relu(x @ w + b) or x @ w + b + residual - into the matmul's store, so the
// product is never written to memory and read back. Run it after
// FuseElementwise. A fold is made only when it is legal: the product has no
// other use and is not a graph output, the consumer's result has the
// product's shape (every extra operand broadcasts into it, so each output
// element is computed from its own product element: no read-write hazard),
// all operands are f32 matrices (or batches of them) and the extras fit the
// binding limit. It returns how many matmuls took an epilogue; a backend
// that cannot fuse leaves the graph as it is.
func (g *Graph) FuseEpilogues(dev core.Device) (int, error) {
	b, err := core.BackendFor(dev)
	if err != nil {
		return 0, err
	}
	fuser, ok := b.(core.MatmulFuser)
	if !ok {
		return 0, nil
	}
	uses := map[*Value]int{}
	consumer := map[*Value]*Node{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			uses[v]++
			consumer[v] = n
		}
	}
	for _, v := range g.Outputs {
		uses[v] += 2
	}
	replace := map[*Node]*Node{}
	removed := map[*Node]bool{}
	folded := 0
	for _, m := range g.Nodes {
		if !epilogueProducer(m) {
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
		if !ok || len(extras) > maxEpilogueExtras || len(prod.Shape) > 8 {
			continue
		}
		inputs := append([]*Value{m.Inputs[0], m.Inputs[1]}, extras...)
		replace[c] = &Node{Op: "fused_matmul", Inputs: inputs, Outputs: c.Outputs,
			Fused: renumber(expr, remap), Sub: append([]*Node{m}, sub...)}
		removed[m] = true
		folded++
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if f, ok := replace[n]; ok {
			kept = append(kept, f)
		} else if !removed[n] {
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
	return folded, nil
}

// epilogueProducer says whether n is a matmul of two f32 matrices (or
// batches of them) whose product could take an epilogue.
func epilogueProducer(n *Node) bool {
	if n.Op != "matmul" || n.Fused != nil || len(n.Inputs) != 2 || len(n.Outputs) != 1 || len(n.Attrs) != 0 {
		return false
	}
	for _, v := range n.Inputs {
		if v == nil || v.DType != core.F32 || len(v.Shape) < 2 {
			return false
		}
	}
	return n.Outputs[0].DType == core.F32
}

// epilogueOf reads consumer c as an elementwise tree: a fused node's own,
// or one fusable op over its inputs. It returns the tree, its leaves and
// the original nodes it stands for.
func epilogueOf(c *Node, fuser core.MapFuser) (*core.FusedExpr, []*Value, []*Node, bool) {
	if c.Fused != nil {
		if c.Op != "fused" {
			return nil, nil, nil, false
		}
		return c.Fused, c.Inputs, c.Sub, true
	}
	if len(c.Outputs) != 1 || len(c.Attrs) != 0 || !fuser.Fusable(c.Op, c.Outputs[0].DType) {
		return nil, nil, nil, false
	}
	e := &core.FusedExpr{Op: c.Op}
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
		e.Args = append(e.Args, &core.FusedExpr{Arg: idx})
	}
	return e, leaves, []*Node{c}, true
}

// renumber copies e with each leaf's Arg mapped through remap.
func renumber(e *core.FusedExpr, remap []int) *core.FusedExpr {
	if e.Op == "" {
		return &core.FusedExpr{Arg: remap[e.Arg]}
	}
	out := &core.FusedExpr{Op: e.Op, Args: make([]*core.FusedExpr, len(e.Args))}
	for i, a := range e.Args {
		out.Args[i] = renumber(a, remap)
	}
	return out
}

// tryFuseMatmul runs a fused_matmul node as one kernel where its device
// can and no gradient is recorded through it.
func tryFuseMatmul(n *Node, ins []*core.Tensor) (*core.Tensor, bool) {
	fuser, ok := fuserFor(ins)
	if !ok {
		return nil, false
	}
	mf, ok := fuser.(core.MatmulFuser)
	if !ok {
		return nil, false
	}
	t, err := mf.FuseMatmul(ins[0], ins[1], n.Fused, ins[2:])
	return t, err == nil
}

// Fuse runs both fusion passes for dev: elementwise trees first, then
// their folding into the matmuls that feed them. It returns how many ops
// went into elementwise trees and how many matmuls took an epilogue.
func (g *Graph) Fuse(dev core.Device) (elementwise, epilogues int, err error) {
	if elementwise, err = g.FuseElementwise(dev); err != nil {
		return
	}
	epilogues, err = g.FuseEpilogues(dev)
	return
}
