package ir

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Run computes g on inputs (shapes and dtypes as at capture) through
// core.Call: the same kernels, devices and autograd as the eager code.
func (g *Graph) Run(inputs ...*core.Tensor) ([]*core.Tensor, error) {
	if len(inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("ir: Run: %d inputs, the graph takes %d", len(inputs), len(g.Inputs))
	}
	env := make(map[*Value]*core.Tensor, len(g.Nodes)+len(inputs))
	for i, v := range g.Inputs {
		t := inputs[i]
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("ir: Run: input %d: %w", i, err)
		}
		if !sameShape(t.Shape(), v.Shape) || t.DType() != v.DType {
			return nil, fmt.Errorf("ir: Run: input %d is %s%v, the graph was captured with %s%v (trace again for new shapes)",
				i, t.DType(), []int(t.Shape()), v.DType, []int(v.Shape))
		}
		env[v] = t
	}
	for _, n := range g.Nodes {
		if err := execNode(n, env); err != nil {
			return nil, err
		}
	}
	res := make([]*core.Tensor, len(g.Outputs))
	for i, v := range g.Outputs {
		res[i] = valueOf(v, env)
	}
	return res, nil
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
	if n.Fused != nil {
		return runFused(n, ins, env)
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
