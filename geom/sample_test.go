package geom

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

func sbmGraph(t *testing.T, seed uint64) *Dataset {
	t.Helper()
	d, err := SBM(SBMConfig{Blocks: 4, BlockSize: 100, PIn: 0.08, POut: 0.004, Features: 16, Noise: 2, Seed: seed, TrainFraction: 0.3})
	require.NoError(t, err)
	return d
}

func edgeSet(g *Graph, nodes []int64) map[[2]int64]bool {
	src, dst := g.Edges()
	m := map[[2]int64]bool{}
	for k := range src {
		if nodes != nil {
			m[[2]int64{nodes[src[k]], nodes[dst[k]]}] = true
		} else {
			m[[2]int64{src[k], dst[k]}] = true
		}
	}
	return m
}

func TestSampleNeighborsRespectsFanoutsAndIsReproducible(t *testing.T) {
	g := sbmGraph(t, 1).Graph
	full := edgeSet(g, nil)
	seeds := []int64{5, 77, 301}
	a, err := SampleNeighbors(g, seeds, []int{4, 3}, rand.New(rand.NewPCG(9, 9)))
	require.NoError(t, err)
	b, err := SampleNeighbors(g, seeds, []int{4, 3}, rand.New(rand.NewPCG(9, 9)))
	require.NoError(t, err)
	assert.Equal(t, a.Nodes, b.Nodes, "same seed, same sample")
	assert.Equal(t, seeds, a.Nodes[:3], "seeds first")
	inDeg := map[int64]int{}
	for e := range edgeSet(a.Graph, a.Nodes) {
		assert.True(t, full[e], "sampled edge %v exists", e)
		inDeg[e[1]]++
	}
	for _, s := range seeds {
		assert.LessOrEqual(t, inDeg[s], 4)
		assert.Equal(t, min(4, int(g.In().Degree(s))), inDeg[s], "a seed gets min(fanout, degree) neighbours")
	}
	for v, d := range inDeg {
		assert.LessOrEqual(t, d, 4+3, "node %d", v)
	}
	// All neighbours at every hop is the k-hop neighbourhood.
	all, err := SampleNeighbors(g, seeds, []int{-1, -1}, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	hop, err := KHopSubgraph(g, seeds, 2)
	require.NoError(t, err)
	assert.ElementsMatch(t, hop.Nodes, all.Nodes)
	_, err = SampleNeighbors(g, []int64{1, 1}, []int{2}, rand.New(rand.NewPCG(1, 1)))
	assert.ErrorContains(t, err, "seed node 1 is given twice")
	_, err = SampleNeighbors(g, []int64{4000}, []int{2}, rand.New(rand.NewPCG(1, 1)))
	assert.ErrorContains(t, err, "seed node 4000 is outside the 400 nodes")
}

func TestKHopSubgraphMatchesPyGSemantics(t *testing.T) {
	// 0 -> 1 -> 2 -> 3, 4 -> 2, 5 isolated; k_hop_subgraph([2], 2) = {0, 1, 2, 4}
	g, err := NewGraph(6, []int64{0, 1, 2, 4}, []int64{1, 2, 3, 2}, nil)
	require.NoError(t, err)
	s, err := KHopSubgraph(g, []int64{2}, 2)
	require.NoError(t, err)
	got := append([]int64(nil), s.Nodes...)
	slices.Sort(got)
	assert.Equal(t, []int64{0, 1, 2, 4}, got)
	assert.Equal(t, map[[2]int64]bool{{0, 1}: true, {1, 2}: true, {4, 2}: true}, edgeSet(s.Graph, s.Nodes))
	assert.ElementsMatch(t, []int64{0, 1, 3}, s.EdgeIDs)
}

func TestRandomWalksFollowEdges(t *testing.T) {
	g, err := NewGraph(4, []int64{0, 0, 1, 2}, []int64{1, 2, 2, 0}, nil) // 3 is a dead end
	require.NoError(t, err)
	w, err := RandomWalks(g, []int64{0, 3, 1}, 6, rand.New(rand.NewPCG(2, 2)))
	require.NoError(t, err)
	edges := edgeSet(g, nil)
	for _, walk := range w[0:1] {
		for s := 1; s < len(walk); s++ {
			assert.True(t, edges[[2]int64{walk[s-1], walk[s]}], "step %d of %v", s, walk)
		}
	}
	assert.Equal(t, []int64{3, 3, 3, 3, 3, 3, 3}, w[1], "a dead end keeps the walk")
	again, _ := RandomWalks(g, []int64{0, 3, 1}, 6, rand.New(rand.NewPCG(2, 2)))
	assert.Equal(t, w, again)
}

// Mini-batch training on a graph larger than one batch: GraphSAGE over
// NeighborLoader batches of 32 seeds with fan-outs [10, 5].
func TestGraphSAGETrainsOnSampledMiniBatches(t *testing.T) {
	d := sbmGraph(t, 4)
	train, err := d.Train.Int64s()
	require.NoError(t, err)
	core.ManualSeed(2)
	m, err := NewGraphSAGE(16, 32, 4, "mean", 0, Options{})
	require.NoError(t, err)
	cfg := nn.DefaultAdam()
	cfg.LR = 0.01
	opt, err := nn.NewAdam(m.Parameters(), cfg)
	require.NoError(t, err)
	loader, err := NewNeighborLoader(d.Graph, train, []int{10, 5}, 32, true, 7)
	require.NoError(t, err)
	assert.Equal(t, 4, loader.Len())
	for range 5 {
		loader.Reset()
		for {
			sub, ok, err := loader.Next()
			require.NoError(t, err)
			if !ok {
				break
			}
			opt.ZeroGrad()
			scores := m.Forward(sub.Gather(d.X), sub.Graph)
			seeds := core.Call1("arange", core.Attrs{"stop": float64(sub.NumSeeds), "dtype": core.I64})
			loss := core.Call1("cross_entropy", nil, Gather(scores, seeds), Gather(sub.Gather(d.Y), seeds))
			require.NoError(t, loss.Backward())
			require.NoError(t, opt.Step())
		}
	}
	m.Train(false)
	acc, err := Accuracy(m.Forward(d.X, d.Graph), d.Y, d.Test)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.9, "full-graph test accuracy after sampled training")
}
