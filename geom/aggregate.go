package geom

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Gather picks the rows of x [N, ...] at index [E]: the per-edge view of
// node features (x_j for index = Src, x_i for index = Dst).
func Gather(x, index *core.Tensor) *core.Tensor {
	return core.Call1("index_select", core.Attrs{"axis": 0}, x, index)
}

// Aggregate reduces messages [E, ...] into their destination nodes index
// [E], giving [n, ...]: "sum", "mean", "max" or "min" (PyG's aggr names).
// A node that receives nothing gets 0, as in PyG.
func Aggregate(msg, index *core.Tensor, n int, how string) *core.Tensor {
	a := core.Attrs{"num_segments": n}
	switch how {
	case "sum", "add":
		return core.Call1("segment_sum", a, msg, index)
	case "mean":
		return core.Call1("segment_mean", a, msg, index)
	case "max":
		return core.Call1("segment_max", a, msg, index)
	case "min":
		neg := core.Call1("neg", nil, msg)
		return core.Call1("neg", nil, core.Call1("segment_max", a, neg, index))
	}
	return core.ErrTensor(fmt.Errorf("geom: Aggregate: unknown aggregation %q (sum, mean, max, min)", how))
}

// SegmentSoftmax is the softmax of scores [E, ...] over the edges that share
// a destination (PyG's torch_geometric.utils.softmax): for each node i,
// exp(s_e - max_i) / sum over its edges. The max is a constant for the
// gradient (the result does not depend on it).
func SegmentSoftmax(scores, index *core.Tensor, n int) *core.Tensor {
	a := core.Attrs{"num_segments": n}
	peak := core.Call1("segment_max", a, scores.Detach(), index)
	e := core.Call1("exp", nil, core.Call1("sub", nil, scores, Gather(peak, index)))
	total := core.Call1("segment_sum", a, e, index)
	return core.Call1("div", nil, e, Gather(total, index))
}

// Pool reduces node features x [N, F] per graph of a mini-batch: batch [N]
// says which graph each node belongs to, numGraphs how many there are.
// how: "add" (global_add_pool), "mean" or "max".
func Pool(x, batch *core.Tensor, numGraphs int, how string) *core.Tensor {
	switch how {
	case "add", "sum", "mean", "max":
		return Aggregate(x, batch, numGraphs, how)
	}
	return core.ErrTensor(fmt.Errorf("geom: Pool: unknown pooling %q (add, mean, max)", how))
}

func checkNodes(x *core.Tensor, g *Graph, layer string) error {
	if err := firstErr(x); err != nil {
		return err
	}
	if g.Bipartite() {
		return fmt.Errorf("geom: %s needs one node set; for a bipartite relation use SAGEConv.ForwardBipartite (or HeteroConv)", layer)
	}
	if s := x.Shape(); len(s) < 1 || s[0] != g.NumNodes {
		return fmt.Errorf("geom: %s: features of shape %v for a graph of %d nodes", layer, s, g.NumNodes)
	}
	return nil
}
