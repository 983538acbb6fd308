package parallel

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// Model is what the cost model knows of a traced forward pass (Analyze):
// per node its FLOPs and bytes, and over the whole graph the parameters,
// the activations a backward keeps, and what each way of splitting it
// must exchange.
type Model struct {
	Nodes       []NodeCost `json:"nodes"`
	FLOPs       float64    `json:"flops"` // forward
	ParamBytes  float64    `json:"param_bytes"`
	ActBytes    float64    `json:"activation_bytes"` // kept for the backward
	InputBytes  float64    `json:"input_bytes"`
	OutputBytes float64    `json:"output_bytes"`
	// Batch is the first input's dimension 0, what data parallel and a
	// pipeline's micro-batches split; Seq the positions sequence parallel
	// splits: dimension 1 of a rank-3 or higher input, else the rows.
	Batch int `json:"batch"`
	Seq   int `json:"seq"`
	// Exchanges are the nodes that mix positions (attention, or a product
	// of two activations such as q @ k^T): under sequence parallel each
	// device needs the whole of their second operands (K and V), Bytes.
	Exchanges []Exchange  `json:"exchanges,omitempty"`
	Tensor    TensorSplit `json:"tensor"`
}

// NodeCost is one node's forward cost.
type NodeCost struct {
	Op         string  `json:"op"`
	FLOPs      float64 `json:"flops"`
	Bytes      float64 `json:"bytes"` // read and written
	OutBytes   float64 `json:"out_bytes"`
	ParamBytes float64 `json:"param_bytes,omitempty"`      // parameters first read here
	ActBytes   float64 `json:"activation_bytes,omitempty"` // kept for the backward
	// Cut is the bytes of activations live across the boundary after this
	// node (what a pipeline stage ending here sends on).
	Cut float64 `json:"cut_bytes"`
	// Sharded: under tensor parallel each device runs 1/degree of it.
	Sharded bool `json:"sharded,omitempty"`
}

// Exchange is a position-mixing node and the bytes of its gathered operands.
type Exchange struct {
	Op    string  `json:"op"`
	Bytes float64 `json:"bytes"`
}

// TensorSplit is the Megatron analysis of the graph: a product with a
// parameter whose input is whole splits the parameter's columns (its
// output is sharded), one whose input is sharded splits the rows (its
// output is a partial sum, all-reduced); attention over sharded q, k and
// v splits its heads; a norm of a sharded value gathers it first.
type TensorSplit struct {
	AllReduceBytes []float64 `json:"all_reduce_bytes"` // one per row-split product
	GatherBytes    float64   `json:"gather_bytes"`
	// Widths must divide by the degree: split columns and head counts.
	Widths            []int   `json:"widths"`
	ShardedParamBytes float64 `json:"sharded_param_bytes"`
	ShardedActBytes   float64 `json:"sharded_activation_bytes"`
	ShardedFLOPs      float64 `json:"sharded_flops"`
	ReplicatedFLOPs   float64 `json:"replicated_flops"`
	ColumnSplits      int     `json:"column_splits"`
	RowSplits         int     `json:"row_splits"`
}

// positionMixing are ops whose second and later operands every position reads.
var positionMixing = map[string]bool{"scaled_dot_product_attention": true}

// gathers are ops that read a whole row of features: under tensor
// parallel their sharded input is gathered first.
var gathers = map[string]bool{"layer_norm": true, "rms_norm": true, "group_norm": true, "batch_norm": true, "sum": true, "mean": true}

// flopsPerElement prices ops that are neither products nor views by the
// elements they write.
var flopsPerElement = map[string]float64{"layer_norm": 8, "rms_norm": 6, "softmax": 5, "log_softmax": 5, "gelu": 8, "silu": 4, "tanh": 4, "sigmoid": 4, "exp": 2}

// Analyze derives a Model from a traced forward pass. Parameters are the
// constants that require gradients (as nn's parameters do) and the graph
// inputs listed in paramInputs; where no constant requires gradients and
// no input is listed, every constant of more than one element is taken
// for a parameter (a graph traced under no_grad).
func Analyze(g *ir.Graph, paramInputs ...int) (Model, error) {
	if g == nil || len(g.Inputs) == 0 {
		return Model{}, fmt.Errorf("parallel: the graph has no inputs to split (a traced forward pass takes its batch as input 0)")
	}
	for _, i := range paramInputs {
		if i < 0 || i >= len(g.Inputs) {
			return Model{}, fmt.Errorf("parallel: parameter input %d, but the graph has %d inputs", i, len(g.Inputs))
		}
	}
	a := analysis{param: map[*ir.Value]bool{}, sharded: map[*ir.Value]bool{}, seen: map[*ir.Value]bool{}}
	a.findParams(g, paramInputs)
	x := g.Inputs[0]
	if slices.Contains(paramInputs, 0) || len(x.Shape) == 0 {
		return Model{}, fmt.Errorf("parallel: input 0 is the batch, shape %v: it must be a tensor of rank 1 or more and not a parameter", x.Shape)
	}
	m := &a.m
	m.Batch, m.Seq = x.Shape[0], x.Shape[0]
	if len(x.Shape) >= 3 {
		m.Seq = x.Shape[1]
	}
	for _, v := range g.Inputs {
		if !a.param[v] {
			m.InputBytes += bytesOf(v)
			m.ActBytes += bytesOf(v)
		}
	}
	for _, v := range g.Outputs {
		m.OutputBytes += bytesOf(v)
	}
	for _, n := range g.Nodes {
		a.node(n)
	}
	for _, v := range g.Outputs {
		if a.sharded[v] {
			m.Tensor.GatherBytes += bytesOf(v)
		}
	}
	a.cuts(g)
	if len(g.Outputs) == 0 {
		return *m, fmt.Errorf("parallel: the graph returns nothing, so there is no step to split")
	}
	return *m, nil
}

type analysis struct {
	m       Model
	param   map[*ir.Value]bool // parameters and views of them
	sharded map[*ir.Value]bool // under tensor parallel
	seen    map[*ir.Value]bool // parameters already counted
}

func bytesOf(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	return float64(v.Shape.Numel() * v.DType.Size())
}

func (a *analysis) findParams(g *ir.Graph, paramInputs []int) {
	for _, i := range paramInputs {
		a.param[g.Inputs[i]] = true
	}
	var consts []*ir.Value
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil && v.Const != nil && !slices.Contains(consts, v) {
				consts = append(consts, v)
			}
		}
	}
	found := len(paramInputs) > 0
	for _, v := range consts {
		if v.Const.RequiresGrad() {
			a.param[v], found = true, true
		}
	}
	if !found {
		for _, v := range consts {
			if v.Shape.Numel() > 1 {
				a.param[v] = true
			}
		}
	}
}

// node prices n and carries the tensor-parallel state through it.
func (a *analysis) node(n *ir.Node) {
	m := &a.m
	c := NodeCost{Op: n.Op}
	layout := n.Kind() == ir.KindLayout
	allParam, anySharded, out := len(n.Inputs) > 0, false, n.Outputs[0]
	for _, v := range n.Inputs {
		if v == nil {
			continue
		}
		if a.param[v] && a.isRoot(v) && !a.seen[v] {
			a.seen[v] = true
			c.ParamBytes += bytesOf(v)
		}
		allParam = allParam && a.param[v]
		anySharded = anySharded || a.sharded[v]
		if !layout {
			c.Bytes += bytesOf(v)
		}
	}
	for _, o := range n.Outputs {
		c.OutBytes += bytesOf(o)
	}
	m.ParamBytes += c.ParamBytes
	if layout {
		c.Bytes = 0
		for _, o := range n.Outputs {
			a.param[o] = allParam
			a.sharded[o] = anySharded
		}
		m.Nodes = append(m.Nodes, c)
		return
	}
	c.Bytes += c.OutBytes
	in := func(i int) *ir.Value {
		if i < len(n.Inputs) {
			return n.Inputs[i]
		}
		return nil
	}
	switch {
	case n.Op == "matmul" && in(0) != nil && in(1) != nil && len(in(0).Shape) > 0:
		k := in(0).Shape[len(in(0).Shape)-1]
		c.FLOPs = 2 * float64(out.Shape.Numel()) * float64(k)
		a.product(n, &c)
	case positionMixing[n.Op] && len(in(0).Shape) >= 3 && in(1) != nil:
		q, k := in(0).Shape, in(1).Shape
		bh := float64(q.Numel() / (q[len(q)-1] * q[len(q)-2]))
		sq, sk, d := float64(q[len(q)-2]), float64(k[len(k)-2]), float64(q[len(q)-1])
		c.FLOPs = bh * sq * sk * (4*d + 5)
		m.Exchanges = append(m.Exchanges, Exchange{Op: n.Op, Bytes: bytesOf(in(1)) + bytesOf(in(2))})
		if anySharded {
			c.Sharded = true
			m.Tensor.Widths = append(m.Tensor.Widths, q[len(q)-3]) // the heads split
		}
	default:
		per := flopsPerElement[n.Op]
		if per == 0 {
			per = 1
		}
		c.FLOPs = per * float64(out.Shape.Numel())
		if anySharded && gathers[n.Op] {
			for _, v := range n.Inputs {
				if a.sharded[v] {
					m.Tensor.GatherBytes += bytesOf(v)
				}
			}
		} else {
			c.Sharded = anySharded
		}
	}
	for _, o := range n.Outputs {
		a.param[o] = allParam // a parameter's transform is computed once, not per batch
		a.sharded[o] = c.Sharded
	}
	if !allParam {
		c.ActBytes = c.OutBytes
		m.ActBytes += c.OutBytes
		if c.Sharded {
			m.Tensor.ShardedActBytes += c.OutBytes
		}
	}
	m.FLOPs += c.FLOPs
	if c.Sharded || a.splitsParam(n) {
		m.Tensor.ShardedFLOPs += c.FLOPs
	} else {
		m.Tensor.ReplicatedFLOPs += c.FLOPs
	}
	m.Nodes = append(m.Nodes, c)
}

// isRoot: a parameter itself, not a view of one.
func (a *analysis) isRoot(v *ir.Value) bool { return v.Producer == nil }

func (a *analysis) splitsParam(n *ir.Node) bool {
	return n.Op == "matmul" && len(n.Inputs) > 1 && a.param[n.Inputs[1]] && !a.param[n.Inputs[0]]
}

// product is a matmul's tensor-parallel split (Megatron): x @ W with x
// whole splits W's columns, with x sharded W's rows and all-reduces; a
// product of two activations mixes positions (sequence parallel gathers
// its second operand); a bias added to a sharded value is sharded too.
func (a *analysis) product(n *ir.Node, c *NodeCost) {
	m, x, w, out := &a.m, n.Inputs[0], n.Inputs[1], n.Outputs[0]
	switch {
	case a.param[w] && !a.param[x]:
		pb := a.paramRootBytes(w)
		m.Tensor.ShardedParamBytes += pb
		if a.sharded[x] {
			m.Tensor.RowSplits++
			m.Tensor.AllReduceBytes = append(m.Tensor.AllReduceBytes, bytesOf(out))
			return // the all-reduced output is whole
		}
		m.Tensor.ColumnSplits++
		m.Tensor.Widths = append(m.Tensor.Widths, out.Shape[len(out.Shape)-1])
		c.Sharded = true
	case !a.param[w] && !a.param[x]:
		m.Exchanges = append(m.Exchanges, Exchange{Op: n.Op, Bytes: bytesOf(w)})
		c.Sharded = a.sharded[x] || a.sharded[w]
	}
}

// paramRootBytes is the bytes of the parameter a view w reads.
func (a *analysis) paramRootBytes(w *ir.Value) float64 {
	for w.Producer != nil && len(w.Producer.Inputs) > 0 && w.Producer.Kind() == ir.KindLayout {
		w = w.Producer.Inputs[0]
	}
	return bytesOf(w)
}

// cuts fills each node's Cut: the activations produced at or before it
// (graph inputs included) and read after it or returned.
func (a *analysis) cuts(g *ir.Graph) {
	at := map[*ir.Value]int{}
	for _, v := range g.Inputs {
		at[v] = -1
	}
	last := map[*ir.Value]int{}
	for i, n := range g.Nodes {
		for _, o := range n.Outputs {
			at[o] = i
		}
		for _, v := range n.Inputs {
			if v != nil {
				last[v] = i
			}
		}
	}
	for _, v := range g.Outputs {
		last[v] = len(g.Nodes)
	}
	for v, l := range last {
		p, ok := at[v]
		if !ok || a.param[v] || (v.Producer != nil && v.Producer.Kind() == ir.KindLayout) {
			continue // constants, parameters, and views (their source is counted)
		}
		for i := max(p, 0); i < l && i < len(a.m.Nodes); i++ {
			a.m.Nodes[i].Cut += bytesOf(v)
		}
	}
}

// tensorFits says why degree does not divide the split widths ("" if it does).
func (m Model) tensorFits(degree int) string { return m.Tensor.fitsOrEmpty(degree) }

func (t TensorSplit) fitsOrEmpty(degree int) string {
	if t.ColumnSplits == 0 {
		return "the graph has no product with a parameter to split"
	}
	for _, w := range t.Widths {
		if w%degree != 0 {
			return fmt.Sprintf("a split width (columns or heads) of %d does not divide over %d devices (widths %v)", w, degree, t.Widths)
		}
	}
	return ""
}

// MLPModel traces m's forward pass on the CPU (zero weights that require
// gradients, so they are its parameters) and analyses it: the MLP
// description is a convenience over the graph path.
func MLPModel(m MLP) (Model, error) {
	if m.Rows < 1 || len(m.Dims) < 2 {
		return Model{}, fmt.Errorf("parallel: an MLP needs rows and at least two dims, got %d rows, dims %v", m.Rows, m.Dims)
	}
	dev := core.Device{Kind: "cpu"}
	var ws []*core.Tensor
	for l := range len(m.Dims) - 1 {
		ws = append(ws, core.FromSlice(make([]float32, m.Dims[l]*m.Dims[l+1]), m.wshape(l), dev).SetRequiresGrad(true))
	}
	x := core.FromSlice(make([]float32, m.Rows*m.Dims[0]), core.Shape{m.Rows, m.Dims[0]}, dev)
	g, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		h := in[0]
		for l, w := range ws {
			h = h.Matmul(w)
			if l < len(ws)-1 {
				h = h.ReLU()
			}
		}
		return []*core.Tensor{h}, h.Err()
	}, x)
	if err != nil {
		return Model{}, fmt.Errorf("parallel: tracing the MLP %v: %w", m.Dims, err)
	}
	return Analyze(g)
}
