package ir

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// colSumOp names a node that computes a weight gradient x^T @ g and the
// sums of g's columns (the bias gradient) from one pass over g.
const colSumOp = "fused_matmul_colsum"

// FuseColumnSums finds, in a backward pass, the sum of a gradient g over
// every dim but the last (a linear layer's bias gradient) beside a matmul
// whose second operand is g, or g viewed as [rows, N] (the same layer's
// weight gradient), and makes the two one node: the product's kernel reads
// g anyway, so the bias gradient costs no launch and no second read. Where
// the device cannot for the operands it meets at run time (the product's
// layout decides), or autograd records the run, the two ops run. It returns
// how many it joined.
func (g *Graph) FuseColumnSums(dev core.Device) (int, error) {
	if _, _, ok, err := passBackend[fusion.ColumnSumFuser](dev); !ok {
		return 0, err
	}
	readers := g.readers()
	replace, removed := map[*Node]*Node{}, map[*Node]bool{}
	for _, s := range g.Nodes {
		grad, ok := biasGradOf(s)
		if !ok {
			continue
		}
		m, transposed := weightGradBeside(grad, readers, removed)
		if m == nil || dependsOn(m.Inputs[0], s) || dependsOn(m.Inputs[1], s) {
			continue
		}
		prod, sums := m.Outputs[0], s.Outputs[0]
		f := &Node{Op: colSumOp, Inputs: []*Value{m.Inputs[0], m.Inputs[1], grad},
			Outputs: []*Value{prod, sums}, Sub: []*Node{m, s}}
		if transposed {
			f.Attrs = core.Attrs{"transposed": true}
		}
		prod.Producer, prod.Index = f, 0
		sums.Producer, sums.Index = f, 1
		replace[m], removed[s], removed[m] = f, true, true
	}
	if len(replace) == 0 {
		return 0, nil
	}
	g.rewriteNodes(replace, removed)
	// The joined node runs where the product did; readers of the sum that
	// came before it move after it.
	g.sortNodes()
	return len(replace), nil
}

// biasGradOf says whether s sums one f32 tensor of rank 2 or more over
// every dim but the last, and returns that tensor.
func biasGradOf(s *Node) (*Value, bool) {
	if s.Op != "sum" || s.Fused != nil || len(s.Inputs) != 1 || s.Inputs[0] == nil || len(s.Outputs) != 1 {
		return nil, false
	}
	x := s.Inputs[0]
	r := len(x.Shape)
	if x.DType != core.F32 || r < 2 || s.Outputs[0].DType != core.F32 {
		return nil, false
	}
	for k := range s.Attrs {
		if k != "axes" && k != "keepdim" {
			return nil, false
		}
	}
	axes, err := core.NormAxes(s.Attrs.Ints("axes"), r)
	if err != nil || len(axes) != r-1 {
		return nil, false
	}
	for i, a := range axes {
		if a != i {
			return nil, false
		}
	}
	return x, true
}

// weightGradBeside finds a plain 2-D f32 matmul whose second operand is
// grad or grad viewed as [rows, N] with grad's last dim N (x^T @ g), or,
// transposed, whose first operand is that view's transpose (g^T @ x: the
// gradient of a weight used as x @ W^T, laid out as W).
func weightGradBeside(grad *Value, readers map[*Value][]*Node, removed map[*Node]bool) (*Node, bool) {
	n := grad.Shape[len(grad.Shape)-1]
	rows := grad.Shape.Numel() / max(n, 1)
	cands := []*Value{grad}
	for _, r := range readers[grad] {
		if r.Op == "reshape" && r.Fused == nil && len(r.Outputs) == 1 {
			if o := r.Outputs[0]; len(o.Shape) == 2 && o.Shape[0] == rows && o.Shape[1] == n {
				cands = append(cands, o)
			}
		}
	}
	plain := func(m *Node) bool {
		return m.Op == "matmul" && m.Fused == nil && !removed[m] && len(m.Inputs) == 2 && m.Inputs[0] != nil && m.Inputs[1] != nil
	}
	f32Matrix := func(v *Value) bool { return len(v.Shape) == 2 && v.DType == core.F32 }
	for _, b := range cands {
		if len(b.Shape) != 2 {
			continue
		}
		for _, m := range readers[b] {
			if plain(m) && m.Inputs[1] == b && f32Matrix(m.Inputs[0]) {
				return m, false
			}
		}
		for _, t := range readers[b] {
			if t.Op != "transpose" || t.Fused != nil || len(t.Outputs) != 1 || !swapsMatrix(t) {
				continue
			}
			for _, m := range readers[t.Outputs[0]] {
				if plain(m) && m.Inputs[0] == t.Outputs[0] && f32Matrix(m.Inputs[1]) {
					return m, true
				}
			}
		}
	}
	return nil, false
}

// swapsMatrix says whether a transpose node swaps a matrix's two dims.
func swapsMatrix(t *Node) bool {
	d0, d1 := -2, -1
	if t.Attrs.Has("dim0") {
		d0 = t.Attrs.Int("dim0")
	}
	if t.Attrs.Has("dim1") {
		d1 = t.Attrs.Int("dim1")
	}
	d0, d1 = (d0+2)%2, (d1+2)%2
	return d0 != d1
}

// dependsOn says whether v is computed, at any depth, from n's outputs.
func dependsOn(v *Value, n *Node) bool {
	seen := map[*Node]bool{}
	var visit func(*Value) bool
	visit = func(v *Value) bool {
		p := v.Producer
		if p == nil || seen[p] {
			return false
		}
		if p == n {
			return true
		}
		seen[p] = true
		for _, in := range p.Inputs {
			if in != nil && visit(in) {
				return true
			}
		}
		return false
	}
	return visit(v)
}

// sortNodes puts g's nodes in an order where each runs after the nodes it
// reads, keeping the present order wherever it already is one.
// A value counts as computed once a placed node lists it among its outputs
// (a fused node's values may still name an original op as producer).
func (g *Graph) sortNodes() {
	placed := make(map[*Node]bool, len(g.Nodes))
	computed := map[*Value]bool{}
	ready := func(n *Node) bool {
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil && !computed[v] {
				return false
			}
		}
		return true
	}
	sorted := make([]*Node, 0, len(g.Nodes))
	for len(sorted) < len(g.Nodes) {
		progress := false
		for _, n := range g.Nodes {
			if !placed[n] && ready(n) {
				placed[n] = true
				for _, o := range n.Outputs {
					computed[o] = true
				}
				sorted = append(sorted, n)
				progress = true
				break
			}
		}
		if !progress {
			return // a cycle cannot arise from the passes; keep the order
		}
	}
	g.Nodes = sorted
}

// runColumnSums runs a joined weight and bias gradient as one kernel where
// the device can, else the product and the sum it replaced.
func runColumnSums(n *Node, ins []*core.Tensor, env map[*Value]*core.Tensor) error {
	if f, ok := fuserFor(ins); ok {
		if cs, ok := f.(fusion.ColumnSumFuser); ok {
			a, b := ins[0], ins[1]
			transposed := n.Attrs.Bool("transposed")
			if transposed { // g^T @ x is (x^T @ g)^T: the same product with g second
				a, b = b.Transpose(), a.Transpose()
			}
			prod, sums, err := cs.MatmulColumnSums(a, b)
			if err == nil && transposed {
				prod = prod.Transpose()
				err = prod.Err()
			}
			if err == nil {
				shaped, err := core.Call("reshape", []*core.Tensor{sums}, core.Attrs{"shape": []int(n.Outputs[1].Shape)})
				if err != nil {
					return fmt.Errorf("ir: Run: %s: %w", n.Op, err)
				}
				env[n.Outputs[0]], env[n.Outputs[1]] = prod, shaped[0]
				fusedRuns.Add(1)
				return nil
			}
		}
	}
	return runOriginal(n, env)
}
