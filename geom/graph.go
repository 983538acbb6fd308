package geom

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Graph is a directed graph of NumNodes nodes as an edge list: edge k goes
// from Src[k] to Dst[k], with an optional Weight[k]. Src and Dst are i64
// tensors of shape [E] on the graph's device; the host copies are kept for
// samplers and checks.
type Graph struct {
	NumNodes int  // nodes that receive messages (the destinations)
	numSrc   int  // nodes that send them, when bipartite
	bipart   bool // sources and destinations are different node sets
	Src, Dst *core.Tensor
	Weight   *core.Tensor // nil: every edge weighs 1
	src, dst []int64
	weight   []float64
	loops    map[float64]*Graph // WithSelfLoops results, made once per fill
	in, out  *CSR               // adjacencies for samplers, made on first use
	inT      *csrTensors        // the incoming adjacency on the device, for Propagate
	memo     map[string]*core.Tensor
}

// memoize returns the tensor cached under key, making it once with make
// (per-graph constants such as GCN's normalisation, which depend on the
// edges only). Failures are not cached.
func (g *Graph) memoize(key string, build func() *core.Tensor) *core.Tensor {
	if t, ok := g.memo[key]; ok {
		return t
	}
	t := build()
	if t.Err() == nil {
		if g.memo == nil {
			g.memo = map[string]*core.Tensor{}
		}
		g.memo[key] = t
	}
	return t
}

// NewGraph checks an edge list (indices in [0, numNodes), one weight per
// edge when weights are given) and puts it on dev (default: the default
// device).
func NewGraph(numNodes int, src, dst []int64, weight []float64, dev ...core.Device) (*Graph, error) {
	if numNodes < 0 {
		return nil, fmt.Errorf("geom: NewGraph: %d nodes", numNodes)
	}
	if len(src) != len(dst) {
		return nil, fmt.Errorf("geom: NewGraph: %d sources but %d destinations", len(src), len(dst))
	}
	if weight != nil && len(weight) != len(src) {
		return nil, fmt.Errorf("geom: NewGraph: %d weights for %d edges", len(weight), len(src))
	}
	for k := range src {
		if src[k] < 0 || src[k] >= int64(numNodes) || dst[k] < 0 || dst[k] >= int64(numNodes) {
			return nil, fmt.Errorf("geom: NewGraph: edge %d (%d -> %d) is outside the %d nodes", k, src[k], dst[k], numNodes)
		}
	}
	g := &Graph{NumNodes: numNodes, src: src, dst: dst, weight: weight}
	e := core.Shape{len(src)}
	g.Src = core.FromSlice(src, e, dev...)
	g.Dst = core.FromSlice(dst, e, dev...)
	if weight != nil {
		// f64 where the device holds it, so f64 models keep full precision;
		// layers cast to the features' dtype.
		wt := core.F32
		if len(dev) == 0 || dev[0].Kind == "cpu" {
			wt = core.F64
		}
		g.Weight = core.FromFloat64s(wt, e, weight, dev...)
	}
	if err := firstErr(g.Src, g.Dst, g.Weight); err != nil {
		return nil, fmt.Errorf("geom: NewGraph: %w", err)
	}
	return g, nil
}

// NewBipartite is a graph whose edges go from a set of numSrc nodes to a
// different set of numDst nodes (one relation of a heterogeneous graph:
// authors to papers, say). Layers that accept it take the two feature
// matrices separately.
func NewBipartite(numSrc, numDst int, src, dst []int64, weight []float64, dev ...core.Device) (*Graph, error) {
	if numSrc < 0 {
		return nil, fmt.Errorf("geom: NewBipartite: %d source nodes", numSrc)
	}
	for k := range src {
		if src[k] < 0 || src[k] >= int64(numSrc) {
			return nil, fmt.Errorf("geom: NewBipartite: edge %d starts at %d, outside the %d source nodes", k, src[k], numSrc)
		}
	}
	// NewGraph checks the destinations (and the source ids against the larger set).
	g, err := NewGraph(max(numSrc, numDst), src, dst, weight, dev...)
	if err != nil {
		return nil, err
	}
	for k := range dst {
		if dst[k] >= int64(numDst) {
			return nil, fmt.Errorf("geom: NewBipartite: edge %d ends at %d, outside the %d destination nodes", k, dst[k], numDst)
		}
	}
	g.NumNodes, g.numSrc, g.bipart = numDst, numSrc, true
	return g, nil
}

// NumSrcNodes is the number of nodes messages come from (NumNodes unless bipartite).
func (g *Graph) NumSrcNodes() int {
	if g.bipart {
		return g.numSrc
	}
	return g.NumNodes
}

// Bipartite reports whether sources and destinations are different node sets.
func (g *Graph) Bipartite() bool { return g.bipart }

// FromEdgeIndex is NewGraph from PyG's layout: edgeIndex is an integer
// tensor [2, E] (row 0 the sources), weight an optional [E] tensor.
func FromEdgeIndex(numNodes int, edgeIndex, weight *core.Tensor, dev ...core.Device) (*Graph, error) {
	if err := firstErr(edgeIndex, weight); err != nil {
		return nil, fmt.Errorf("geom: FromEdgeIndex: %w", err)
	}
	s := edgeIndex.Shape()
	if len(s) != 2 || s[0] != 2 {
		return nil, fmt.Errorf("geom: FromEdgeIndex: edge_index has shape %v, want [2, E]", s)
	}
	idx, err := edgeIndex.Int64s()
	if err != nil {
		return nil, fmt.Errorf("geom: FromEdgeIndex: %w", err)
	}
	countHostWork(edgeIndex, hostFromEdgeIndex)
	var w []float64
	if weight != nil {
		if w, err = weight.Float64s(); err != nil {
			return nil, fmt.Errorf("geom: FromEdgeIndex: %w", err)
		}
	}
	return NewGraph(numNodes, idx[:s[1]], idx[s[1]:], w, dev...)
}

// NumEdges is E.
func (g *Graph) NumEdges() int { return len(g.src) }

// Edges returns the host copies of the endpoints (do not modify them).
func (g *Graph) Edges() (src, dst []int64) { return g.src, g.dst }

// Device is where the edge tensors live.
func (g *Graph) Device() core.Device { return g.Src.Device() }

// WithSelfLoops returns the graph with every existing self loop removed and
// one loop per node appended (weight fill when the graph has weights), as
// PyG's add_remaining_self_loops and GATConv's loops do - except that an
// existing loop's weight is not kept: callers here pass unit weights.
func (g *Graph) WithSelfLoops(fill float64) (*Graph, error) {
	if g.bipart {
		return nil, fmt.Errorf("geom: a bipartite graph (%d -> %d nodes) has no self loops; this layer needs one node set", g.numSrc, g.NumNodes)
	}
	if l, ok := g.loops[fill]; ok {
		return l, nil
	}
	l, err := g.withSelfLoops(fill)
	if err != nil {
		return nil, err
	}
	if g.loops == nil {
		g.loops = map[float64]*Graph{}
	}
	g.loops[fill] = l
	return l, nil
}

func (g *Graph) withSelfLoops(fill float64) (*Graph, error) {
	n := g.NumNodes
	src := make([]int64, 0, len(g.src)+n)
	dst := make([]int64, 0, len(g.dst)+n)
	var w []float64
	if g.weight != nil {
		w = make([]float64, 0, len(g.weight)+n)
	}
	for k := range g.src {
		if g.src[k] == g.dst[k] {
			continue
		}
		src, dst = append(src, g.src[k]), append(dst, g.dst[k])
		if w != nil {
			w = append(w, g.weight[k])
		}
	}
	for i := range n {
		src, dst = append(src, int64(i)), append(dst, int64(i))
		if w != nil {
			w = append(w, fill)
		}
	}
	return NewGraph(n, src, dst, w, g.Device())
}

// InDegree is the number (or total weight) of edges into each node, [N].
func (g *Graph) InDegree(dtype core.DType) *core.Tensor {
	w := g.Weight
	if w == nil {
		w = core.Ones(core.Shape{g.NumEdges()}, dtype, g.Device())
	} else if w.DType() != dtype {
		w = core.Call1("cast", core.Attrs{"dtype": dtype}, w)
	}
	return core.Call1("segment_sum", core.Attrs{"num_segments": g.NumNodes}, w, g.Dst)
}

func firstErr(ts ...*core.Tensor) error {
	for _, t := range ts {
		if t != nil {
			if err := t.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}
