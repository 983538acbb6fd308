package geom

import (
	"fmt"
	"sort"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// EdgeType names a relation of a heterogeneous graph: edges from nodes of
// type Src to nodes of type Dst, called Rel ("author", "writes", "paper").
type EdgeType struct{ Src, Rel, Dst string }

// String is the relation as PyG prints it ("author__writes__paper").
func (e EdgeType) String() string { return e.Src + "__" + e.Rel + "__" + e.Dst }

// Key names the relation's layer in a HeteroConv state dict as PyG 2.4+
// does ("<author___writes___paper>"), so PyG checkpoints load.
func (e EdgeType) Key() string { return "<" + e.Src + "___" + e.Rel + "___" + e.Dst + ">" }

// HeteroGraph is a graph with typed nodes and relations: NumNodes per node
// type, and per relation its edges (a bipartite Graph between two types, or
// an ordinary one within a type).
type HeteroGraph struct {
	NumNodes map[string]int
	Edges    map[EdgeType]*Graph
}

// NewHeteroGraph starts a graph with these node types and counts.
func NewHeteroGraph(numNodes map[string]int) *HeteroGraph {
	return &HeteroGraph{NumNodes: numNodes, Edges: map[EdgeType]*Graph{}}
}

// AddEdges adds relation t with edges src[k] -> dst[k] (ids within their types).
func (h *HeteroGraph) AddEdges(t EdgeType, src, dst []int64, dev ...core.Device) error {
	ns, okS := h.NumNodes[t.Src]
	nd, okD := h.NumNodes[t.Dst]
	if !okS || !okD {
		return fmt.Errorf("geom: AddEdges %s: node types must be declared first (have %v)", t, h.NumNodes)
	}
	if _, dup := h.Edges[t]; dup {
		return fmt.Errorf("geom: AddEdges: relation %s is added twice", t)
	}
	var g *Graph
	var err error
	if t.Src == t.Dst {
		g, err = NewGraph(nd, src, dst, nil, dev...)
	} else {
		g, err = NewBipartite(ns, nd, src, dst, nil, dev...)
	}
	if err != nil {
		return fmt.Errorf("geom: AddEdges %s: %w", t, err)
	}
	h.Edges[t] = g
	return nil
}

// Relations lists the edge types in a fixed order (by key).
func (h *HeteroGraph) Relations() []EdgeType {
	out := make([]EdgeType, 0, len(h.Edges))
	for t := range h.Edges {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// moduleDict holds named sub-modules (PyG's ModuleDict).
type moduleDict struct{ nn.Base }

// HeteroConv is PyG's HeteroConv with a SAGEConv per relation: each node
// type's output is the sum (aggr "sum"; also "mean", "max") of the outputs
// of the relations into it. State: convs.<src___rel___dst>.lin_l.weight, ...
type HeteroConv struct {
	nn.Base
	Convs map[EdgeType]*SAGEConv
	Aggr  string
}

// NewHeteroSAGE makes a HeteroConv of SAGEConv((in[src], in[dst]), out,
// sageAggr) over every relation of h; inDims gives each node type's feature
// size.
func NewHeteroSAGE(h *HeteroGraph, inDims map[string]int, out int, sageAggr, aggr string, o Options) (*HeteroConv, error) {
	switch aggr {
	case "sum", "mean", "max":
	default:
		return nil, fmt.Errorf("geom: HeteroConv: unknown aggregation %q across relations (sum, mean, max)", aggr)
	}
	c := &HeteroConv{Convs: map[EdgeType]*SAGEConv{}, Aggr: aggr}
	dict := &moduleDict{}
	for _, t := range h.Relations() {
		is, okS := inDims[t.Src]
		id, okD := inDims[t.Dst]
		if !okS || !okD {
			return nil, fmt.Errorf("geom: HeteroConv: no feature size for %s or %s (have %v)", t.Src, t.Dst, inDims)
		}
		conv, err := NewBipartiteSAGEConv(is, id, out, sageAggr, o)
		if err != nil {
			return nil, err
		}
		c.Convs[t] = conv
		if err := dict.RegisterModule(t.Key(), conv); err != nil {
			return nil, err
		}
	}
	return c, c.RegisterModule("convs", dict)
}

// Forward maps features per node type to outputs per destination type.
func (c *HeteroConv) Forward(x map[string]*core.Tensor, h *HeteroGraph) (map[string]*core.Tensor, error) {
	parts := map[string][]*core.Tensor{}
	var types []string
	for _, t := range h.Relations() {
		conv, ok := c.Convs[t]
		if !ok {
			return nil, fmt.Errorf("geom: HeteroConv: no layer for relation %s", t)
		}
		xs, xd := x[t.Src], x[t.Dst]
		if xs == nil || xd == nil {
			return nil, fmt.Errorf("geom: HeteroConv: no features for node type %s or %s", t.Src, t.Dst)
		}
		y := conv.ForwardBipartite(xs, xd, h.Edges[t])
		if err := y.Err(); err != nil {
			return nil, fmt.Errorf("geom: HeteroConv %s: %w", t, err)
		}
		if parts[t.Dst] == nil {
			types = append(types, t.Dst)
		}
		parts[t.Dst] = append(parts[t.Dst], y)
	}
	out := map[string]*core.Tensor{}
	for _, ty := range types {
		ys := parts[ty]
		acc := ys[0]
		switch c.Aggr {
		case "sum", "mean":
			for _, y := range ys[1:] {
				acc = op("add", nil, acc, y)
			}
			if c.Aggr == "mean" && len(ys) > 1 {
				acc = op("div", nil, acc, core.Scalar(float64(len(ys)), acc.DType(), acc.Device()))
			}
		case "max":
			for _, y := range ys[1:] {
				acc = op("maximum", nil, acc, y)
			}
		}
		out[ty] = acc
	}
	return out, nil
}
