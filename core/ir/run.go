package ir

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Run computes g on inputs (shapes and dtypes as at capture) through
// core.Call: the same kernels, devices and autograd as the eager code.
// Intermediate tensors are released after their last use (see MemoryPlan)
// unless g.KeepIntermediates is set or autograd records the run.
func (g *Graph) Run(inputs ...*core.Tensor) ([]*core.Tensor, error) {
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("ir: Run: %d inputs, the graph takes %d", len(inputs), len(g.Inputs))
	}
	for i, t := range inputs {
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("ir: Run: input %d: %w", i, err)
		}
	}
	return g.run(inputs, !g.KeepIntermediates && !g.recordsGrad(inputs))
}

// run is Run with the release decision made: a loop body runs with its
// loop's.
func (g *Graph) run(inputs []*core.Tensor, release bool) ([]*core.Tensor, error) {
	env := make(map[*Value]*core.Tensor, len(g.Nodes)+len(inputs))
	for i, v := range g.Inputs {
		t := inputs[i]
		if !sameShape(t.Shape(), v.Shape) || t.DType() != v.DType {
			return nil, fmt.Errorf("ir: Run: input %d is %s%v, the graph was captured with %s%v (trace again for new shapes)",
				i, t.DType(), []int(t.Shape()), v.DType, []int(v.Shape))
		}
		env[v] = t
	}
	rel := NewStorageReleaser(release)
	var drops [][]*Value
	isOutput := map[*Value]bool{}
	if release {
		for _, t := range inputs {
			rel.Pin(t)
		}
		g.forConsts(rel.Pin)
		for _, v := range g.Outputs {
			isOutput[v] = true
		}
		drops = g.lastUses()
	}
	for i, n := range g.Nodes {
		if err := g.exec(n, env, rel); err != nil {
			return nil, err
		}
		if !release {
			continue
		}
		for _, o := range n.Outputs {
			t := env[o]
			if isOutput[o] {
				rel.Pin(t)
			} else {
				rel.Hold(t)
			}
			if core.GradEnabled() && t.RequiresGrad() {
				rel.on = false // something upstream requires a gradient after all
			}
		}
		dropFusedInternals(n, env, rel)
		for _, v := range drops[i] {
			if t, ok := env[v]; ok {
				delete(env, v)
				rel.Drop(t)
			}
		}
	}
	res := make([]*core.Tensor, len(g.Outputs))
	for i, v := range g.Outputs {
		res[i] = valueOf(v, env)
	}
	return res, nil
}

// exec runs one node of g: a loop with the run's release decision, any
// other node through execNode.
func (g *Graph) exec(n *Node, env map[*Value]*core.Tensor, rel *StorageReleaser) error {
	if n.Body == nil {
		return execNode(n, env)
	}
	ins := make([]*core.Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		ins[i] = valueOf(v, env)
	}
	return runLoop(n, ins, env, rel.on)
}

// dropFusedInternals releases the intermediates a fused node made when it
// ran its original ops one by one: nothing outside the node reads them.
func dropFusedInternals(n *Node, env map[*Value]*core.Tensor, rel *StorageReleaser) {
	if n.Fused == nil {
		return
	}
	outs := map[*Value]bool{}
	for _, o := range n.Outputs {
		outs[o] = true
	}
	var internal []*core.Tensor
	for _, s := range n.Sub {
		for _, o := range s.Outputs {
			if t, ok := env[o]; ok && !outs[o] {
				delete(env, o)
				rel.Hold(t)
				internal = append(internal, t)
			}
		}
	}
	for _, t := range internal {
		rel.Drop(t)
	}
}

// valueOf is v's tensor: a constant's own, else what env computed (nil for
// an absent optional input).
func valueOf(v *Value, env map[*Value]*core.Tensor) *core.Tensor {
	if v == nil {
		return nil
	}
	if v.Const != nil {
		return v.Const
	}
	return env[v]
}

// execNode runs one node on the values in env and records its outputs there.
func execNode(n *Node, env map[*Value]*core.Tensor) error {
	ins := make([]*core.Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		ins[i] = valueOf(v, env)
	}
	switch {
	case n.Fused != nil:
		return runFused(n, ins, env)
	case n.Op == colSumOp:
		return runColumnSums(n, ins, env)
	case n.Op == attnTransposedOp:
		return runAttentionTransposed(n, ins, env)
	case n.Body != nil:
		return runLoop(n, ins, env, false)
	}
	outs, err := core.Call(n.Op, ins, n.Attrs)
	if err != nil {
		return fmt.Errorf("ir: Run: %s: %w", n.Op, err)
	}
	for i, o := range n.Outputs {
		env[o] = outs[i]
	}
	return nil
}

func sameShape(a, b core.Shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
