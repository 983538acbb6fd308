package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Exporters write some of the ops webtensor has as one kernel as chains
// of ONNX operators: torch.onnx writes the exact GELU as Div by √2, Erf,
// Add 1, Mul by x and Mul by 0.5, attention as MatMul, a scale, an
// additive mask, Softmax and MatMul (then, merging the heads, a
// Transpose to [batch, seq, heads, head dim], which on the CPU the
// attention kernel's store does), and a linear layer as MatMul by the
// weight and Add of the bias (on the CPU the product's store adds the
// bias, and applies a GELU chain that follows: the matmul epilogue). Run one op at a time, a chain makes
// every intermediate in memory (five passes over a BERT layer's widest
// activation for GELU, the [batch, heads, seq, seq] scores three times
// for attention). fuseChains finds these chains at load and runs each as
// the one op (gelu, scaled_dot_product_attention), as ONNX Runtime's
// graph transformers do. A chain is fused only when its intermediates are
// read by nothing else and are not graph outputs; when at run time its
// inputs are not what the fused op takes (a narrow element type, shapes
// it does not broadcast), the chain's own nodes run instead.

// chainNode is a node standing for a chain of the graph's nodes: fused
// computes the chain's result, or reports false to have the chain run.
type chainNode struct {
	chain []*node
	fused func(c *ctx) (*core.Tensor, bool)
}

// fuseChains replaces the chains it recognises in m.nodes.
func (m *Model) fuseChains() {
	g := newChainGraph(m)
	for i := range m.nodes {
		if !g.taken[i] && g.linear(i) == nil && g.gelu(i) == nil {
			g.attention(i)
		}
	}
	// A chain's node stands where its last node stood: every input it
	// reads was made before one of the chain's nodes read it, and only the
	// last node's output leaves the chain.
	var out []*node
	for i, n := range m.nodes {
		if f := g.at[i]; f != nil {
			out = append(out, f)
		} else if !g.taken[i] {
			out = append(out, n)
		}
	}
	m.nodes = out
}

// chainGraph indexes the nodes for matching: who reads each value.
type chainGraph struct {
	m     *Model
	reads map[string][]int // value -> indices of the nodes that read it
	taken map[int]bool     // nodes inside a fused chain
	at    map[int]*node    // a chain's node, by the index of its last node
}

func newChainGraph(m *Model) *chainGraph {
	g := &chainGraph{m: m, reads: map[string][]int{}, taken: map[int]bool{}, at: map[int]*node{}}
	for i, n := range m.nodes {
		for _, in := range n.reads() {
			g.reads[in] = append(g.reads[in], i)
		}
	}
	return g
}

// next is the one node after index i that reads value, of operator op,
// when value is an intermediate only it reads; -1 otherwise.
func (g *chainGraph) next(i int, value, op string) int {
	r := g.reads[value]
	if len(r) != 1 || r[0] <= i || g.m.outputSet[value] || g.taken[r[0]] {
		return -1
	}
	n := g.m.nodes[r[0]]
	if n.pb.GetOpType() != op || n.pb.GetDomain() != "" || len(n.outputs) != 1 || n.outputs[0] == "" || len(n.implicit) > 0 {
		return -1
	}
	return r[0]
}

// constScalar is value's number when it is a one-element float constant.
func (g *chainGraph) constScalar(value string) (float64, bool) {
	t := g.m.consts[value]
	if t == nil || t.Numel() != 1 || !t.DType().IsFloat() || g.m.types[value] != 0 {
		return 0, false
	}
	v, err := t.Item()
	return v, err == nil
}

// other is the input of binary node n that is not value.
func other(n *node, value string) (string, bool) {
	if len(n.inputs) != 2 {
		return "", false
	}
	switch value {
	case n.inputs[0]:
		return n.inputs[1], true
	case n.inputs[1]:
		return n.inputs[0], true
	}
	return "", false
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }

// fuse marks the chain's nodes taken and makes the node that stands for
// it: inputs, the last node's outputs, a label naming the chain.
func (g *chainGraph) fuse(idx []int, inputs []string, op string, fused func(c *ctx) (*core.Tensor, bool)) *node {
	chain := make([]*node, len(idx))
	ops := make([]string, len(idx))
	for k, i := range idx {
		g.taken[i] = true
		chain[k] = g.m.nodes[i]
		ops[k] = chain[k].pb.GetOpType()
	}
	last := chain[len(chain)-1]
	label := &pb.NodeProto{Name: proto.String(last.pb.GetName()), OpType: proto.String(fmt.Sprintf("%s fused from %s", op, strings.Join(ops, ", ")))}
	cn := &chainNode{chain: chain, fused: fused}
	n := &node{pb: label, spec: &opSpec{values: cn.run}, inputs: inputs, outputs: last.outputs, opset: last.opset,
		attrs: map[string]*pb.AttributeProto{}}
	g.at[idx[len(idx)-1]] = n
	return n
}

// run computes the fused op, or runs the chain's nodes when it declines.
func (cn *chainNode) run(c *ctx) ([]Value, error) {
	for i := range c.ins {
		if c.ins[i] == nil || c.inType(i) != naturalType(c.ins[i].DType()) {
			return cn.runChain(c)
		}
	}
	if y, ok := cn.fused(c); ok {
		return []Value{y}, nil
	}
	return cn.runChain(c)
}

func (cn *chainNode) runChain(c *ctx) ([]Value, error) {
	for _, n := range cn.chain {
		if err := c.m.exec(n, c.run); err != nil {
			return nil, err
		}
	}
	last := cn.chain[len(cn.chain)-1]
	return []Value{c.run.vals[last.outputs[0]]}, nil
}

// gelu matches x·(Erf(x/√2) + 1)·0.5 starting at node i (geluChain).
func (g *chainGraph) gelu(i int) *node {
	idx, x := g.geluChain(i)
	if idx == nil || g.m.consts[x] != nil {
		return nil
	}
	return g.fuse(idx, []string{x}, "Gelu", func(c *ctx) (*core.Tensor, bool) {
		if !c.ins[0].DType().IsFloat() {
			return nil, false
		}
		y := core.Call1("gelu", nil, c.ins[0])
		return y, y.Err() == nil
	})
}

// geluChain is the GELU chain starting at node i, Div by √2 (or Mul by
// 1/√2), Erf, Add 1, Mul by x and Mul by 0.5, each Mul and the Add
// taking their operands in either order: the chain's node indices and x;
// nil when there is none.
func (g *chainGraph) geluChain(i int) ([]int, string) {
	d := g.m.nodes[i]
	if g.taken[i] || len(d.inputs) != 2 || len(d.outputs) != 1 {
		return nil, ""
	}
	var x string
	switch d.pb.GetOpType() {
	case "Div":
		if c, ok := g.constScalar(d.inputs[1]); !ok || !near(c, math.Sqrt2) {
			return nil, ""
		}
		x = d.inputs[0]
	case "Mul":
		for k, in := range d.inputs {
			if c, ok := g.constScalar(in); ok && near(c, 1/math.Sqrt2) {
				x = d.inputs[1-k]
			}
		}
	}
	if x == "" {
		return nil, ""
	}
	e := g.next(i, d.outputs[0], "Erf")
	if e < 0 {
		return nil, ""
	}
	a := g.next(e, g.m.nodes[e].outputs[0], "Add")
	if a < 0 || !g.isConst(g.m.nodes[a], g.m.nodes[e].outputs[0], 1) {
		return nil, ""
	}
	m1 := g.next(a, g.m.nodes[a].outputs[0], "Mul")
	if m1 < 0 {
		return nil, ""
	}
	if o, _ := other(g.m.nodes[m1], g.m.nodes[a].outputs[0]); o != x {
		return nil, ""
	}
	m2 := g.next(m1, g.m.nodes[m1].outputs[0], "Mul")
	if m2 < 0 || !g.isConst(g.m.nodes[m2], g.m.nodes[m1].outputs[0], 0.5) {
		return nil, ""
	}
	return []int{i, e, a, m1, m2}, x
}

// linear matches MatMul(x, W) + B at node i, W a constant matrix and B a
// constant that broadcasts over the product, and a GELU chain reading the
// sum when there is one: on the CPU it runs as one product whose store
// adds the bias (and applies the GELU), the matmul epilogue.
func (g *chainGraph) linear(i int) *node {
	mm := g.m.nodes[i]
	if g.taken[i] || mm.pb.GetOpType() != "MatMul" || len(mm.inputs) != 2 || len(mm.outputs) != 1 {
		return nil
	}
	w := g.m.consts[mm.inputs[1]]
	if w == nil || w.Rank() != 2 || w.DType() != core.F32 || g.m.types[mm.inputs[1]] != 0 {
		return nil
	}
	a := g.next(i, mm.outputs[0], "Add")
	if a < 0 {
		return nil
	}
	bias, _ := other(g.m.nodes[a], mm.outputs[0])
	if bt := g.m.consts[bias]; bt == nil || bt.DType() != core.F32 || bt.Rank() > 1 || g.m.types[bias] != 0 {
		return nil
	}
	idx, op, expr := []int{i, a}, "Linear", fusion.BiasAdd
	sum := g.m.nodes[a].outputs[0]
	if r := g.reads[sum]; len(r) == 2 && !g.m.outputSet[sum] {
		if gi, x := g.geluChain(r[0]); gi != nil && x == sum && slices.Contains(gi, r[1]) {
			idx, op, expr = append(idx, gi...), "Linear+Gelu", &fusion.Expr{Op: "gelu", Args: []*fusion.Expr{fusion.BiasAdd}}
		}
	}
	gelu := op != "Linear"
	// The weight is an initializer, which nothing writes: packed once, on
	// the first run (not at import, which has its own time budget).
	var packOnce sync.Once
	var packed fusion.PackedWeight
	return g.fuse(idx, []string{mm.inputs[0], mm.inputs[1], bias}, op, func(c *ctx) (*core.Tensor, bool) {
		x := c.ins[0]
		if x.DType() != core.F32 {
			return nil, false
		}
		if c.ins[1] == w && x.Device() == core.CPU {
			packOnce.Do(func() { packed = fusion.PackWeightOnCPU(w) })
			if packed != nil {
				if y := fusion.MatmulEpiloguePackedOnCPU(x, packed, expr, c.ins[2]); y != nil {
					return y, true
				}
			}
		}
		if y := fusion.MatmulEpilogueOnCPU(x, c.ins[1], expr, c.ins[2]); y != nil {
			return y, true
		}
		// A tracer (which would not see the backend's call) and the other
		// devices get the ops, gelu as one op as the GELU chain's node runs it.
		y := core.Call1("add", nil, core.Call1("matmul", nil, x, c.ins[1]), c.ins[2])
		if gelu {
			y = core.Call1("gelu", nil, y)
		}
		return y, y.Err() == nil
	})
}

// isConst reports whether binary node n's operand other than value is the
// constant want.
func (g *chainGraph) isConst(n *node, value string, want float64) bool {
	o, ok := other(n, value)
	if !ok {
		return false
	}
	c, ok := g.constScalar(o)
	return ok && near(c, want)
}

// attention matches Softmax(MatMul(q, kᵀ)·s [+ mask]) @ v starting at
// the first MatMul (node i); the scale is a Mul or Div by a constant or
// absent, the mask an Add of anything (the fused op takes an additive
// float mask that broadcasts to the scores; other masks run the chain).
func (g *chainGraph) attention(i int) *node {
	mm := g.m.nodes[i]
	if g.taken[i] || mm.pb.GetOpType() != "MatMul" || len(mm.inputs) != 2 || len(mm.outputs) != 1 || g.m.Opset < 13 {
		return nil
	}
	idx, scale, mask := []int{i}, 1.0, ""
	cur, at := mm.outputs[0], i
	if k := g.scaleStep(at, cur, &scale); k >= 0 {
		idx, cur, at = append(idx, k), g.m.nodes[k].outputs[0], k
	}
	if k := g.next(at, cur, "Add"); k >= 0 {
		mask, _ = other(g.m.nodes[k], cur)
		idx, cur, at = append(idx, k), g.m.nodes[k].outputs[0], k
	}
	sm := g.next(at, cur, "Softmax")
	if sm < 0 || len(g.m.nodes[sm].attrs) > 1 {
		return nil
	}
	axis := int64(-1)
	if a := g.m.nodes[sm].attrs["axis"]; a != nil {
		axis = a.GetI()
	}
	mm2 := g.next(sm, g.m.nodes[sm].outputs[0], "MatMul")
	if mm2 < 0 || g.m.nodes[mm2].inputs[0] != g.m.nodes[sm].outputs[0] {
		return nil
	}
	idx = append(idx, sm, mm2)
	// The heads merged after it (Transpose to [B, L, H, E], which a Reshape
	// then flattens): the CPU kernel stores its output that way round.
	merge := g.headsMerge(mm2)
	if merge >= 0 {
		idx = append(idx, merge)
	}
	inputs := []string{mm.inputs[0], mm.inputs[1], g.m.nodes[mm2].inputs[1]}
	if mask != "" {
		inputs = append(inputs, mask)
	}
	return g.fuse(idx, inputs, "Attention", func(c *ctx) (*core.Tensor, bool) {
		q, kt, v := c.ins[0], c.ins[1], c.ins[2]
		r := q.Rank()
		if r < 2 || kt.Rank() != r || v.Rank() != r || (axis != -1 && axis != int64(r-1)) || !q.DType().IsFloat() ||
			kt.DType() != q.DType() || v.DType() != q.DType() {
			return nil, false
		}
		in := []*core.Tensor{q, core.Call1("transpose", nil, kt), v, nil}
		if len(c.ins) > 3 {
			if c.ins[3].DType() != q.DType() || c.ins[3].Rank() > r {
				return nil, false
			}
			in[3] = c.ins[3]
		}
		attrs := core.Attrs{"scale": scale}
		if merge >= 0 {
			if r != 4 {
				return nil, false
			}
			if y := fusion.AttentionTransposedOnCPU(in[0], in[1], in[2], in[3], attrs); y != nil {
				return y, true
			}
		}
		y := core.Call1("scaled_dot_product_attention", attrs, in...)
		if merge >= 0 {
			y = core.Call1("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, y)
		}
		return y, y.Err() == nil
	})
}

// headsMerge is the Transpose with perm [0, 2, 1, 3] that alone reads
// attention's last MatMul (node mm2), or -1.
func (g *chainGraph) headsMerge(mm2 int) int {
	k := g.next(mm2, g.m.nodes[mm2].outputs[0], "Transpose")
	if k < 0 {
		return -1
	}
	perm := g.m.nodes[k].attrs["perm"]
	if perm == nil || !slices.Equal(perm.GetInts(), []int64{0, 2, 1, 3}) || len(g.m.nodes[k].attrs) != 1 {
		return -1
	}
	return k
}

// scaleStep is the Mul or Div by a constant after node at (reading
// value), setting scale; -1 when there is none.
func (g *chainGraph) scaleStep(at int, value string, scale *float64) int {
	for _, op := range []string{"Mul", "Div"} {
		k := g.next(at, value, op)
		if k < 0 {
			continue
		}
		n := g.m.nodes[k]
		o, _ := other(n, value)
		c, ok := g.constScalar(o)
		if !ok || c == 0 || (op == "Div" && n.inputs[0] != value) {
			return -1
		}
		if op == "Div" {
			c = 1 / c
		}
		*scale = c
		return k
	}
	return -1
}
