package geom

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Subgraph is a sampled piece of a larger graph: Nodes are the original ids
// of its nodes (the seeds first, in order), Graph its edges between them in
// local ids, EdgeIDs each local edge's position in the original edge list.
type Subgraph struct {
	Nodes    []int64
	NumSeeds int
	Graph    *Graph
	EdgeIDs  []int64
}

// subgraphBuilder relabels original node ids to local ones as they appear.
type subgraphBuilder struct {
	local    map[int64]int64
	nodes    []int64
	src, dst []int64
	edges    []int64
}

func newBuilder(seeds []int64) (*subgraphBuilder, error) {
	b := &subgraphBuilder{local: make(map[int64]int64, len(seeds)*4)}
	for _, s := range seeds {
		if _, dup := b.local[s]; dup {
			return nil, fmt.Errorf("geom: seed node %d is given twice", s)
		}
		b.add(s)
	}
	return b, nil
}

func (b *subgraphBuilder) add(v int64) (int64, bool) {
	if l, ok := b.local[v]; ok {
		return l, false
	}
	l := int64(len(b.nodes))
	b.local[v] = l
	b.nodes = append(b.nodes, v)
	return l, true
}

func (b *subgraphBuilder) finish(numSeeds int, dev []core.Device) (*Subgraph, error) {
	g, err := NewGraph(len(b.nodes), b.src, b.dst, nil, dev...)
	if err != nil {
		return nil, err
	}
	return &Subgraph{Nodes: b.nodes, NumSeeds: numSeeds, Graph: g, EdgeIDs: b.edges}, nil
}

func checkSeeds(g *Graph, seeds []int64) error {
	if g.Bipartite() {
		return fmt.Errorf("geom: the samplers walk one node set; this graph is bipartite (%d -> %d nodes)", g.NumSrcNodes(), g.NumNodes)
	}
	for _, s := range seeds {
		if s < 0 || s >= int64(g.NumNodes) {
			return fmt.Errorf("geom: seed node %d is outside the %d nodes", s, g.NumNodes)
		}
	}
	return nil
}

// SampleNeighbors is GraphSAGE's (and PyG's NeighborLoader's) sampling:
// starting from the seeds, for each hop l it takes up to fanouts[l]
// incoming neighbours of every node reached at the previous hop, uniformly
// without replacement (all of them when fanouts[l] < 0 or the node has
// fewer), and keeps the sampled edges. Seeded by rng: the same seed gives
// the same subgraph.
func SampleNeighbors(g *Graph, seeds []int64, fanouts []int, rng *rand.Rand, dev ...core.Device) (*Subgraph, error) {
	if err := checkSeeds(g, seeds); err != nil {
		return nil, err
	}
	if len(fanouts) == 0 {
		return nil, fmt.Errorf("geom: SampleNeighbors: no fanouts (one per hop, -1 for all neighbours)")
	}
	b, err := newBuilder(seeds)
	if err != nil {
		return nil, err
	}
	in := g.In()
	frontier := append([]int64(nil), seeds...)
	var pick []int64
	for _, fan := range fanouts {
		var next []int64
		for _, v := range frontier {
			lo, deg := in.Ptr[v], in.Degree(v)
			pick = pick[:0]
			if fan < 0 || int64(fan) >= deg {
				for k := lo; k < lo+deg; k++ {
					pick = append(pick, k)
				}
			} else {
				pick = sampleWithout(rng, lo, deg, fan, pick)
			}
			dv := b.local[v]
			for _, k := range pick {
				u := in.Nbr[k]
				lu, isNew := b.add(u)
				if isNew {
					next = append(next, u)
				}
				b.src, b.dst, b.edges = append(b.src, lu), append(b.dst, dv), append(b.edges, in.Edge[k])
			}
		}
		frontier = next
	}
	return b.finish(len(seeds), dev)
}

// sampleWithout appends k distinct positions of [lo, lo+n) to out in
// increasing order: Floyd's algorithm, O(k) draws whatever n is.
func sampleWithout(rng *rand.Rand, lo, n int64, k int, out []int64) []int64 {
	chosen := make(map[int64]bool, k)
	for j := n - int64(k); j < n; j++ {
		t := rng.Int64N(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
	}
	start := len(out)
	for t := range chosen {
		out = append(out, lo+t)
	}
	slices.Sort(out[start:]) // map order is random: sorted, the draw alone decides
	return out
}

// KHopSubgraph is PyG's k_hop_subgraph: every node from which a seed can be
// reached in at most k hops (following edges forward), and the edges among
// them. Nodes come seeds first, then by hop.
func KHopSubgraph(g *Graph, seeds []int64, k int, dev ...core.Device) (*Subgraph, error) {
	if k < 0 {
		return nil, fmt.Errorf("geom: KHopSubgraph: k = %d", k)
	}
	if err := checkSeeds(g, seeds); err != nil {
		return nil, err
	}
	b, err := newBuilder(seeds)
	if err != nil {
		return nil, err
	}
	in := g.In()
	frontier := append([]int64(nil), seeds...)
	for range k {
		var next []int64
		for _, v := range frontier {
			for p := in.Ptr[v]; p < in.Ptr[v+1]; p++ {
				if _, isNew := b.add(in.Nbr[p]); isNew {
					next = append(next, in.Nbr[p])
				}
			}
		}
		frontier = next
	}
	for e := range g.src {
		ls, okS := b.local[g.src[e]]
		ld, okD := b.local[g.dst[e]]
		if okS && okD {
			b.src, b.dst, b.edges = append(b.src, ls), append(b.dst, ld), append(b.edges, int64(e))
		}
	}
	return b.finish(len(seeds), dev)
}

// RandomWalks walks length steps from each start along outgoing edges,
// choosing uniformly; a node with no outgoing edge keeps the walk where it
// is (as torch_cluster's random_walk). The result is [len(starts)][length+1].
func RandomWalks(g *Graph, starts []int64, length int, rng *rand.Rand) ([][]int64, error) {
	if length < 0 {
		return nil, fmt.Errorf("geom: RandomWalks: length %d", length)
	}
	if err := checkSeeds(g, starts); err != nil {
		return nil, err
	}
	out := g.Out()
	walks := make([][]int64, len(starts))
	for i, v := range starts {
		w := make([]int64, length+1)
		w[0] = v
		for s := 1; s <= length; s++ {
			if d := out.Degree(v); d > 0 {
				v = out.Nbr[out.Ptr[v]+rng.Int64N(d)]
			}
			w[s] = v
		}
		walks[i] = w
	}
	return walks, nil
}

// NeighborLoader iterates over mini-batches of seed nodes (shuffled each
// epoch when Shuffle), sampling each batch's neighbourhood with Fanouts:
// training on a graph larger than one batch, as PyG's NeighborLoader.
type NeighborLoader struct {
	Graph     *Graph
	Seeds     []int64
	Fanouts   []int
	BatchSize int
	Shuffle   bool
	Device    []core.Device
	rng       *rand.Rand
	order     []int64
	at        int
}

// NewNeighborLoader makes a loader over seeds, seeded by seed.
func NewNeighborLoader(g *Graph, seeds []int64, fanouts []int, batchSize int, shuffle bool, seed uint64, dev ...core.Device) (*NeighborLoader, error) {
	if batchSize < 1 {
		return nil, fmt.Errorf("geom: NeighborLoader: batch size %d", batchSize)
	}
	if err := checkSeeds(g, seeds); err != nil {
		return nil, err
	}
	l := &NeighborLoader{Graph: g, Seeds: seeds, Fanouts: fanouts, BatchSize: batchSize, Shuffle: shuffle, Device: dev,
		rng: rand.New(rand.NewPCG(seed, 0x10ad))}
	l.Reset()
	return l, nil
}

// Reset starts a new epoch (a new order when shuffling).
func (l *NeighborLoader) Reset() {
	l.order = append(l.order[:0], l.Seeds...)
	if l.Shuffle {
		l.rng.Shuffle(len(l.order), func(i, j int) { l.order[i], l.order[j] = l.order[j], l.order[i] })
	}
	l.at = 0
}

// Len is the number of batches per epoch.
func (l *NeighborLoader) Len() int { return (len(l.Seeds) + l.BatchSize - 1) / l.BatchSize }

// Next samples the next batch; ok is false at the end of the epoch.
func (l *NeighborLoader) Next() (sub *Subgraph, ok bool, err error) {
	if l.at >= len(l.order) {
		return nil, false, nil
	}
	end := min(l.at+l.BatchSize, len(l.order))
	seeds := l.order[l.at:end]
	l.at = end
	sub, err = SampleNeighbors(l.Graph, seeds, l.Fanouts, l.rng, l.Device...)
	return sub, err == nil, err
}

// Gather picks the subgraph's rows of a node tensor of the full graph
// (features, labels), on the tensor's device.
func (s *Subgraph) Gather(x *core.Tensor) *core.Tensor {
	idx := core.FromSlice(s.Nodes, core.Shape{len(s.Nodes)}, x.Device())
	return Gather(x, idx)
}
