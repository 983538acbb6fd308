package geom

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// EdgeConv is PyG's EdgeConv (DGCNN, Wang et al. 2019): x'_i =
// aggr_{j -> i} h([x_i, x_j - x_i]) with h a layer (an MLP) mapping 2F
// features to the output, aggregation "max" by default. State: h's, under
// "nn." (a PyG state dict loads).
type EdgeConv struct {
	nn.Base
	NN   nn.Layer
	Aggr string
}

// NewEdgeConv wraps h; aggr is "max" (PyG's default, also for ""), "mean",
// "add"/"sum" or "min".
func NewEdgeConv(h nn.Layer, aggr string) (*EdgeConv, error) {
	aggr, err := edgeAggr("EdgeConv", aggr)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("geom: EdgeConv: nil layer")
	}
	c := &EdgeConv{NN: h, Aggr: aggr}
	return c, c.RegisterModule("nn", h)
}

func edgeAggr(layer, aggr string) (string, error) {
	switch aggr {
	case "":
		return "max", nil
	case "max", "mean", "add", "sum", "min":
		return aggr, nil
	}
	return "", fmt.Errorf("geom: %s: unknown aggregation %q (max, mean, add, min)", layer, aggr)
}

// Forward maps node features [N, F] over g to [N, Out]; a node without
// incoming edges gets 0, as in PyG.
func (c *EdgeConv) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	if g == nil {
		return core.ErrTensor(fmt.Errorf("geom: EdgeConv: nil graph"))
	}
	if err := checkNodes(x, g, "EdgeConv"); err != nil {
		return core.ErrTensor(err)
	}
	if err := matrixFeatures("EdgeConv", x); err != nil {
		return core.ErrTensor(err)
	}
	return edgeConv(c.NN, c.Aggr, x, g)
}

func edgeConv(h nn.Layer, aggr string, x *core.Tensor, g *Graph) *core.Tensor {
	xi, xj := Gather(x, g.Dst), Gather(x, g.Src)
	pair := op("concat", core.Attrs{"axis": 1}, xi, op("sub", nil, xj, xi))
	return Aggregate(h.Forward(pair), g.Dst, g.NumNodes, aggr)
}

// matrixFeatures insists on [N, F]: the edge features concatenate along F.
func matrixFeatures(layer string, x *core.Tensor) error {
	if s := x.Shape(); len(s) != 2 {
		return fmt.Errorf("geom: %s: features of shape %v, want [N, F]", layer, s)
	}
	return nil
}

// DynamicEdgeConv is PyG's DynamicEdgeConv: EdgeConv over the k-NN graph
// of the current features, rebuilt every forward (in feature space, so the
// second layer of a DGCNN links semantically close points). As in PyG (its
// knn(x, x, k)), each point counts among its own k nearest. The graph
// itself carries no gradient. State: h's, under "nn.".
type DynamicEdgeConv struct {
	nn.Base
	NN     nn.Layer
	K      int
	Aggr   string
	Search Searcher // how neighbours are found (zero value: Auto)
}

// NewDynamicEdgeConv wraps h with k neighbours; aggr as NewEdgeConv's.
func NewDynamicEdgeConv(h nn.Layer, k int, aggr string) (*DynamicEdgeConv, error) {
	if k <= 0 {
		return nil, fmt.Errorf("geom: DynamicEdgeConv: k = %d, want k >= 1", k)
	}
	aggr, err := edgeAggr("DynamicEdgeConv", aggr)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("geom: DynamicEdgeConv: nil layer")
	}
	c := &DynamicEdgeConv{NN: h, K: k, Aggr: aggr}
	return c, c.RegisterModule("nn", h)
}

// Forward maps point features [N, F] to [N, Out]; batch [N] (nil: one
// cloud) keeps neighbourhoods inside clouds.
func (c *DynamicEdgeConv) Forward(x, batch *core.Tensor) *core.Tensor {
	g, err := c.Graph(x, batch)
	if err != nil {
		return core.ErrTensor(err)
	}
	return edgeConv(c.NN, c.Aggr, x, g)
}

// Graph is the k-NN graph Forward would use for x.
func (c *DynamicEdgeConv) Graph(x, batch *core.Tensor) (*Graph, error) {
	if x == nil {
		return nil, fmt.Errorf("geom: DynamicEdgeConv: nil features")
	}
	if err := x.Err(); err != nil {
		return nil, err
	}
	if err := matrixFeatures("DynamicEdgeConv", x); err != nil {
		return nil, err
	}
	if c.K <= 0 {
		return nil, fmt.Errorf("geom: DynamicEdgeConv: k = %d, want k >= 1", c.K)
	}
	h, err := c.Search.search("DynamicEdgeConv", x, nil, batch, nil, query{k: c.K, same: true, loop: true})
	if err != nil {
		return nil, err
	}
	return h.graph("DynamicEdgeConv", x)
}
