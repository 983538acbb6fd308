package ir

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
)

// Fusion limits: leaves are storage bindings (the device allows 10 with the
// output), and a tree is one WGSL expression (a value used twice inside it
// is computed twice, so trees stay small).
const (
	maxFusedLeaves = 8
	maxFusedOps    = 24
)

// FuseElementwise replaces trees of elementwise ops - each intermediate
// used only by the next op of the tree - with fused nodes that dev's backend
// runs as one kernel (core.MapFuser). It returns how many ops went into
// fused nodes; a backend that cannot fuse leaves the graph as it is.
func (g *Graph) FuseElementwise(dev core.Device) (int, error) {
	b, err := core.BackendFor(dev)
	if err != nil {
		return 0, err
	}
	fuser, ok := b.(core.MapFuser)
	if !ok {
		return 0, nil
	}
	uses := map[*Value]int{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			uses[v]++
		}
	}
	for _, v := range g.Outputs {
		uses[v] += 2 // an output must stay materialised
	}
	fusable := func(n *Node) bool {
		if n.Fused != nil || len(n.Outputs) != 1 || len(n.Attrs) != 0 || !fuser.Fusable(n.Op, n.Outputs[0].DType) {
			return false
		}
		for _, v := range n.Inputs {
			if v == nil || v.DType != core.F32 {
				return false
			}
		}
		return true
	}
	absorbed := map[*Node]bool{}
	replace := map[*Node]*Node{}
	fusedOps := 0
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		root := g.Nodes[i]
		if absorbed[root] || !fusable(root) {
			continue
		}
		t := &treeBuilder{leafOf: map[*Value]int{}, fusable: fusable, uses: uses, absorbed: absorbed}
		expr := t.build(root)
		if t.ops < 2 || len(t.leaves) > maxFusedLeaves {
			for _, n := range t.sub {
				delete(absorbed, n)
			}
			continue
		}
		// Sub in execution order: the tree was walked from the root.
		sub := make([]*Node, 0, len(t.sub))
		for _, n := range g.Nodes[:i+1] {
			if t.in[n] {
				sub = append(sub, n)
			}
		}
		replace[root] = &Node{Op: "fused", Inputs: t.leaves, Outputs: root.Outputs, Fused: expr, Sub: sub}
		fusedOps += t.ops
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if f, ok := replace[n]; ok {
			kept = append(kept, f)
		} else if !absorbed[n] {
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
	return fusedOps, nil
}

type treeBuilder struct {
	leaves   []*Value
	leafOf   map[*Value]int
	sub      []*Node
	in       map[*Node]bool
	ops      int
	fusable  func(*Node) bool
	uses     map[*Value]int
	absorbed map[*Node]bool
}

func (t *treeBuilder) build(n *Node) *core.FusedExpr {
	if t.in == nil {
		t.in = map[*Node]bool{}
	}
	t.ops++
	t.sub = append(t.sub, n)
	t.in[n] = true
	if t.ops > 1 {
		t.absorbed[n] = true
	}
	e := &core.FusedExpr{Op: n.Op}
	for _, v := range n.Inputs {
		p := v.Producer
		if p != nil && t.uses[v] == 1 && !t.absorbed[p] && t.fusable(p) && t.ops < maxFusedOps {
			e.Args = append(e.Args, t.build(p))
			continue
		}
		idx, ok := t.leafOf[v]
		if !ok {
			idx = len(t.leaves)
			t.leafOf[v] = idx
			t.leaves = append(t.leaves, v)
		}
		e.Args = append(e.Args, &core.FusedExpr{Arg: idx})
	}
	return e
}

// fusedRuns and fallbackRuns count fused nodes run as one kernel and those
// that ran their original ops instead (gradients recorded, a device that
// cannot fuse, or a kernel the backend refused).
var fusedRuns, fallbackRuns atomic.Int64

// FusionCounts reports how many fused nodes ran as one kernel and how many
// fell back to their original ops, since the process started.
func FusionCounts() (fused, fellBack int64) { return fusedRuns.Load(), fallbackRuns.Load() }

// runFused computes a fused node: as one kernel when every input is on a
// device that fuses and no gradient is being recorded through it, else by
// running its original nodes.
func runFused(n *Node, ins []*core.Tensor, env map[*Value]*core.Tensor) error {
	out := n.Outputs[0]
	try := tryFuse
	switch {
	case strings.HasPrefix(n.Op, reducePrefix):
		try = func(n *Node, ins []*core.Tensor, _ *Value) (*core.Tensor, bool) { return tryFuseReduce(n, ins) }
	case n.Op != "fused":
		try = func(n *Node, ins []*core.Tensor, _ *Value) (*core.Tensor, bool) { return tryFuseEpilogue(n, ins) }
	}
	if fused, ok := try(n, ins, out); ok {
		fusedRuns.Add(1)
		env[out] = fused
		return nil
	}
	fallbackRuns.Add(1)
	for _, s := range n.Sub {
		if err := execNode(s, env); err != nil {
			return fmt.Errorf("%w (in a fused node)", err)
		}
	}
	return nil
}

func tryFuse(n *Node, ins []*core.Tensor, out *Value) (*core.Tensor, bool) {
	fuser, ok := fuserFor(ins)
	if !ok {
		return nil, false
	}
	t, err := fuser.FuseMap(n.Fused, ins, out.Shape, out.DType)
	return t, err == nil
}

// fuserFor is the fusing backend of ins when they share one device and no
// gradient is recorded through any of them.
func fuserFor(ins []*core.Tensor) (core.MapFuser, bool) {
	if len(ins) == 0 {
		return nil, false
	}
	dev := ins[0].Device()
	for _, t := range ins {
		if t.Device() != dev || (core.GradEnabled() && t.RequiresGrad()) {
			return nil, false
		}
	}
	b, err := core.BackendFor(dev)
	if err != nil {
		return nil, false
	}
	fuser, ok := b.(core.MapFuser)
	return fuser, ok
}
