package geom

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/webtensor/webtensor/core"
)

// SBMConfig describes a stochastic block model: Blocks communities of
// BlockSize nodes; each pair of nodes in one block is linked with
// probability PIn, across blocks with POut (undirected: both directions are
// stored). Features are the block's mean vector (drawn once per block) plus
// Gaussian noise of std Noise, so both the structure and the features carry
// the label. Everything is drawn from Seed.
type SBMConfig struct {
	Blocks, BlockSize int
	PIn, POut         float64
	Features          int
	Noise             float64
	Seed              uint64
	// TrainFraction of the nodes (at random) is the training set, the rest
	// the test set.
	TrainFraction float64
}

// Dataset is a node-classification problem on one graph.
type Dataset struct {
	Graph       *Graph
	X           *core.Tensor // [N, Features] f32
	Y           *core.Tensor // [N] i64 labels
	Train, Test *core.Tensor // i64 node indices
	NumClasses  int
}

// SBM generates a dataset on dev. The edge count per block pair is drawn
// from its binomial (normal approximation when large) and the endpoints
// uniformly, duplicates dropped, so a graph of millions of edges takes a
// fraction of a second rather than N^2 coin flips.
func SBM(c SBMConfig, dev ...core.Device) (*Dataset, error) {
	if c.Blocks < 1 || c.BlockSize < 1 || c.Features < 1 || !(c.PIn >= 0 && c.PIn <= 1) || !(c.POut >= 0 && c.POut <= 1) ||
		!(c.TrainFraction > 0 && c.TrainFraction < 1) || c.Noise < 0 {
		return nil, fmt.Errorf("geom: SBM: bad config %+v (blocks, sizes and features >= 1, probabilities in [0, 1], train fraction in (0, 1))", c)
	}
	n := c.Blocks * c.BlockSize
	if n > 1<<31 {
		return nil, fmt.Errorf("geom: SBM: %d nodes is too many", n)
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x5b3d))
	seen := map[[2]int64]bool{}
	var src, dst []int64
	link := func(a, b int64) {
		if a == b || seen[[2]int64{a, b}] {
			return
		}
		seen[[2]int64{a, b}], seen[[2]int64{b, a}] = true, true
		src, dst = append(src, a, b), append(dst, b, a)
	}
	bs := int64(c.BlockSize)
	for a := range c.Blocks {
		for b := a; b < c.Blocks; b++ {
			p, pairs := c.POut, float64(bs*bs)
			if a == b {
				p, pairs = c.PIn, float64(bs*(bs-1)/2)
			}
			for range binomial(rng, pairs, p) {
				u := int64(a)*bs + rng.Int64N(bs)
				v := int64(b)*bs + rng.Int64N(bs)
				link(u, v)
			}
		}
	}
	g, err := NewGraph(n, src, dst, nil, dev...)
	if err != nil {
		return nil, err
	}
	means := make([]float64, c.Blocks*c.Features)
	for i := range means {
		means[i] = rng.NormFloat64()
	}
	x := make([]float64, n*c.Features)
	y := make([]int64, n)
	for i := range n {
		blk := i / c.BlockSize
		y[i] = int64(blk)
		for f := range c.Features {
			x[i*c.Features+f] = means[blk*c.Features+f] + c.Noise*rng.NormFloat64()
		}
	}
	perm := rng.Perm(n)
	cut := int(math.Round(c.TrainFraction * float64(n)))
	train, test := make([]int64, cut), make([]int64, n-cut)
	for i, p := range perm {
		if i < cut {
			train[i] = int64(p)
		} else {
			test[i-cut] = int64(p)
		}
	}
	d := &Dataset{Graph: g, NumClasses: c.Blocks,
		X:     core.FromFloat64s(core.F32, core.Shape{n, c.Features}, x, dev...),
		Y:     core.FromSlice(y, core.Shape{n}, dev...),
		Train: core.FromSlice(train, core.Shape{len(train)}, dev...),
		Test:  core.FromSlice(test, core.Shape{len(test)}, dev...)}
	if err := firstErr(d.X, d.Y, d.Train, d.Test); err != nil {
		return nil, fmt.Errorf("geom: SBM: %w", err)
	}
	return d, nil
}

// binomial draws Binomial(n, p): exactly for small n, by the normal
// approximation (rounded, clamped) when n*p*(1-p) is large.
func binomial(rng *rand.Rand, n, p float64) int {
	if p == 0 || n == 0 {
		return 0
	}
	if v := n * p * (1 - p); v > 100 {
		k := math.Round(n*p + math.Sqrt(v)*rng.NormFloat64())
		return int(max(0, min(n, k)))
	}
	k := 0
	for range int(n) {
		if rng.Float64() < p {
			k++
		}
	}
	return k
}
