package ir

import "github.com/webtensor/webtensor/core"

// DenseMatmulOperands copies, once per run, a matmul's right operand that
// reaches it transposed (x @ w^T, a linear layer whose weight is a graph
// input, as in a compiled training step), so the product runs on the
// vectorised kernel for contiguous rows instead of the strided one. The
// copy reads the weight once; the product reads it once per row block. It
// is made only for 2-D operands - weights - and only on a device that
// fuses (the CPU's GEMM packs strided operands itself). Autograd sees a
// contiguous op, whose gradient passes straight through. It returns how
// many operands it copies.
func (g *Graph) DenseMatmulOperands(dev core.Device) (int, error) {
	b, err := core.BackendFor(dev)
	if err != nil {
		return 0, err
	}
	if _, ok := b.(core.EpilogueFuser); !ok {
		return 0, nil
	}
	producer := map[*Value]*Node{}
	for _, n := range g.Nodes {
		for _, o := range n.Outputs {
			producer[o] = n
		}
	}
	dense := map[*Value]*Value{} // one copy per transposed weight, however many matmuls read it
	var out []*Node
	copies := 0
	for _, n := range g.Nodes {
		if n.Op == "matmul" && n.Fused == nil && len(n.Inputs) == 2 && n.Inputs[1] != nil {
			w := n.Inputs[1]
			if p := producer[w]; p != nil && transposes2D(p) && w.DType == core.F32 {
				d, ok := dense[w]
				if !ok {
					d = g.newValue(w.Shape, w.DType)
					c := &Node{Op: "contiguous", Inputs: []*Value{w}, Outputs: []*Value{d}}
					d.Producer = c
					dense[w] = d
					out = append(out, c)
					copies++
				}
				n.Inputs[1] = d
			}
		}
		out = append(out, n)
	}
	g.Nodes = out
	return copies, nil
}

// transposes2D says whether n swaps the two dims of a matrix.
func transposes2D(n *Node) bool {
	if len(n.Inputs) != 1 || n.Inputs[0] == nil || len(n.Inputs[0].Shape) != 2 {
		return false
	}
	switch n.Op {
	case "transpose":
		d0, d1 := n.Attrs.Int("dim0"), n.Attrs.Int("dim1")
		return (d0+2)%2 != (d1+2)%2
	case "permute":
		dims := n.Attrs.Ints("dims")
		return len(dims) == 2 && (dims[0]+2)%2 == 1
	}
	return false
}
