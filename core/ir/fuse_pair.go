package ir

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// FusePairs gives a fused matmul a second output when one of its output's
// readers is a single elementwise op whose other operands already exist
// where the matmul runs: the product's store writes both, so a
// pre-activation the backward pass keeps and its activation come from one
// kernel (x = x0 @ w + b and gelu(x)) instead of a store, a read and a
// second store. Run after FuseEpilogues; it returns how many it paired.
// Where the device cannot, or autograd records the run, the original
// nodes run.
func (g *Graph) FusePairs(dev core.Device) (int, error) {
	b, fuser, ok, err := passBackend[fusion.EpiloguePairFuser](dev)
	if !ok {
		return 0, err
	}
	lim := limitsOf(b)
	pos := map[*Node]int{}
	for i, n := range g.Nodes {
		pos[n] = i
	}
	readers := g.readers()
	removed := map[*Node]bool{}
	paired := 0
	for i, f := range g.Nodes {
		if f.Fused == nil || f.Also != nil || len(f.Outputs) != 1 || len(f.Sub) == 0 || removed[f] ||
			!fuser.TakesEpiloguePair(f.Sub[0].Op) || "fused_"+f.Sub[0].Op != f.Op {
			continue
		}
		x := f.Outputs[0]
		for _, c := range readers[x] {
			also, extras, ok := pairTree(f, c, x, i, pos, fuser, lim)
			if !ok || removed[c] {
				continue
			}
			f.Also = also
			f.Inputs = append(f.Inputs, extras...)
			y := c.Outputs[0]
			y.Producer, y.Index = f, 1
			f.Outputs = append(f.Outputs, y)
			f.Sub = append(f.Sub, c)
			removed[c] = true
			paired++
			break
		}
	}
	g.rewriteNodes(nil, removed)
	return paired, nil
}

// pairTree reads c, a reader of f's output x, as a tree over f's inputs:
// x is f's own tree, c's other operands become extras after f's. It
// refuses c unless it is one fusable f32 op of x's shape whose other
// operands are computed before f (at index at) and fit the binding limit
// beside the producer's operands and its two outputs.
func pairTree(f, c *Node, x *Value, at int, pos map[*Node]int, fuser fusion.EpiloguePairFuser, lim kernelLimits) (*fusion.Expr, []*Value, bool) {
	if c.Fused != nil || c.Body != nil || len(c.Outputs) != 1 || c.Outputs[0].DType != core.F32 ||
		!sameShape(c.Outputs[0].Shape, x.Shape) || !fuser.Fusable(c.Op, c.Attrs, core.F32) {
		return nil, nil, false
	}
	nf := len(f.Inputs) - len(f.Sub[0].Inputs) // f's extras: its leaves after the product
	e := &fusion.Expr{Op: c.Op, Attrs: c.Attrs}
	var extras []*Value
	for _, v := range c.Inputs {
		if v == x {
			e.Args = append(e.Args, f.Fused)
			continue
		}
		// c's output has x's shape, so its operands broadcast into it.
		if v == nil || v.DType != core.F32 {
			return nil, nil, false
		}
		if p := v.Producer; p != nil && pos[p] > at {
			return nil, nil, false // not yet computed where f runs
		}
		extras = append(extras, v)
		e.Args = append(e.Args, &fusion.Expr{Arg: nf + len(extras)})
	}
	if nf+len(extras) > lim.room(operandSlots(f.Sub[0])+2) {
		return nil, nil, false
	}
	return e, extras, true
}

// tryFuseEpiloguePair runs a paired node as one kernel where its device can.
func tryFuseEpiloguePair(n *Node, ins []*core.Tensor) (*core.Tensor, *core.Tensor, bool) {
	fuser, ok := fuserFor(ins)
	if !ok {
		return nil, nil, false
	}
	pf, ok := fuser.(fusion.EpiloguePairFuser)
	if !ok {
		return nil, nil, false
	}
	p := n.Sub[0]
	k := len(p.Inputs)
	a, b, err := pf.FuseEpiloguePair(p.Op, ins[:k], p.Attrs, n.Fused, n.Also, ins[k:])
	return a, b, err == nil
}
