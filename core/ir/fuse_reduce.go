package ir

import (
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// reducePrefix names nodes that reduce a fused tree: fused_reduce_<op>.
const reducePrefix = "fused_reduce_"

// FuseReductions folds an elementwise tree - a fused node from
// FuseElementwise or one fusable op - into the reduction that consumes it
// (sum(x * y), mean(square(x - m))), so the tree runs inside the reduction's
// loop and its result is never written. Run it after FuseElementwise. A
// fold is made only when it is legal: the tree's result has no other use
// and is not a graph output, every operand is f32 (the leaves broadcast to
// the tree's shape by construction) and the backend takes that reduction.
// It returns how many reductions took a tree.
func (g *Graph) FuseReductions(dev core.Device) (int, error) {
	b, fuser, ok, err := passBackend[fusion.ReduceFuser](dev)
	if !ok {
		return 0, err
	}
	// A reduction kernel may bind a flag or partial sums beside its output
	// (split and checked reductions): its prologue gets one leaf less than
	// an elementwise tree.
	maxLeaves := limitsOf(b).room(3)
	uses := g.useCounts()
	producer := map[*Value]*Node{} // Value.Producer is the captured node, not a fused one that replaced it
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			producer[o] = n
		}
	}
	replace := map[*Node]*Node{}
	removed := map[*Node]bool{}
	folded := 0
	for _, r := range g.Nodes {
		if r.Fused != nil || !fuser.FusableReduction(r.Op) || len(r.Inputs) != 1 || len(r.Outputs) != 1 ||
			r.Inputs[0] == nil || r.Inputs[0].DType != core.F32 || r.Outputs[0].DType != core.F32 {
			continue
		}
		v := r.Inputs[0]
		p := producer[v]
		if p == nil || uses[v] != 1 || removed[p] || replace[p] != nil {
			continue
		}
		expr, leaves, sub, ok := epilogueOf(p, fuser)
		if !ok || len(leaves) > maxLeaves {
			continue
		}
		for _, l := range leaves {
			if l == nil || l.DType != core.F32 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		replace[r] = &Node{Op: reducePrefix + r.Op, Attrs: r.Attrs, Inputs: leaves, Outputs: r.Outputs,
			Fused: expr, Sub: append(append([]*Node{}, sub...), r)}
		removed[p] = true
		folded++
	}
	g.rewriteNodes(replace, removed)
	return folded, nil
}

// tryFuseReduce runs a fused_reduce_<op> node as one kernel where its
// device can and no gradient is recorded: the reduction is the last of
// n.Sub, the tree's shape its input's.
func tryFuseReduce(n *Node, ins []*core.Tensor) (*core.Tensor, bool) {
	fuser, ok := fuserFor(ins)
	if !ok {
		return nil, false
	}
	rf, ok := fuser.(fusion.ReduceFuser)
	if !ok {
		return nil, false
	}
	r := n.Sub[len(n.Sub)-1]
	t, err := rf.FuseReduce(strings.TrimPrefix(n.Op, reducePrefix), r.Attrs, n.Fused, ins, r.Inputs[0].Shape)
	return t, err == nil
}
