package geom

import (
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The benchmarks scripts/bench_geom.py runs against PyTorch Geometric on the
// same graph: WEBTENSOR_GEOM_GRAPH names the .npz it wrote (edge_index, x,
// y, train_idx). Without it they skip (they need the 1M-edge file).

func largeGraph(b *testing.B) *Dataset {
	b.Helper()
	path := os.Getenv("WEBTENSOR_GEOM_GRAPH")
	if path == "" {
		b.Skip("WEBTENSOR_GEOM_GRAPH is not set (scripts/bench_geom.py writes the graph and sets it)")
	}
	d, err := LoadNPZGraph(path)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

type nodeModel interface {
	nn.Module
	Forward(x *core.Tensor, g *Graph) *core.Tensor
}

func largeModels(b *testing.B, d *Dataset) map[string]nodeModel {
	f := d.X.Shape()[1]
	gcn, err := NewGCN(f, 64, d.NumClasses, 0.5, Options{})
	if err != nil {
		b.Fatal(err)
	}
	sage, err := NewGraphSAGE(f, 64, d.NumClasses, "mean", 0.5, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return map[string]nodeModel{"GCN": gcn, "SAGE": sage}
}

func BenchmarkLargeInference(b *testing.B) {
	d := largeGraph(b)
	for name, m := range largeModels(b, d) {
		b.Run(name, func(b *testing.B) {
			m.Train(false)
			core.EnterNoGrad()
			defer func() { _ = core.ExitNoGrad() }()
			if err := m.Forward(d.X, d.Graph).Err(); err != nil { // warm: CSR, normalisation
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := m.Forward(d.X, d.Graph).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLargeTrainEpoch(b *testing.B) {
	d := largeGraph(b)
	y := Gather(d.Y, d.Train)
	for name, m := range largeModels(b, d) {
		b.Run(name, func(b *testing.B) {
			opt, err := nn.NewAdam(m.Parameters(), nn.DefaultAdam())
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				opt.ZeroGrad()
				loss := core.Call1("cross_entropy", nil, Gather(m.Forward(d.X, d.Graph), d.Train), y)
				if err := loss.Backward(); err != nil {
					b.Fatal(err)
				}
				if err := opt.Step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLargeGCNConvMemory reports the bytes one GCNConv forward
// allocates - every Go allocation it makes, output included, released or
// not: an upper bound of the memory it adds - against the dense matrices it
// reads and writes (x, the output and the parameters): alloc/dense. Adding
// x and the parameters, which are resident throughout, gives peak/dense, an
// upper bound of the call's peak against the same matrices.
func BenchmarkLargeGCNConvMemory(b *testing.B) {
	d := largeGraph(b)
	f := d.X.Shape()[1]
	c, err := NewGCNConv(f, f, Options{})
	if err != nil {
		b.Fatal(err)
	}
	core.EnterNoGrad()
	defer func() { _ = core.ExitNoGrad() }()
	_ = c.Forward(d.X, d.Graph) // warm: the CSR and normalisation are made once per graph
	resident := float64((d.X.Numel() + c.LinWeight.Tensor().Numel() + c.Bias.Tensor().Numel()) * 4)
	dense := resident + float64(d.X.Shape()[0]*f*4)
	var before, after runtime.MemStats
	b.ResetTimer()
	for range b.N {
		runtime.ReadMemStats(&before)
		out := c.Forward(d.X, d.Graph)
		runtime.ReadMemStats(&after)
		if out.Err() != nil {
			b.Fatal(out.Err())
		}
		alloc := float64(after.TotalAlloc - before.TotalAlloc)
		b.ReportMetric(alloc/dense, "alloc/dense")
		b.ReportMetric((resident+alloc)/dense, "peak/dense")
	}
}

// BenchmarkLargeNeighborSampling samples fan-outs [15, 10] around batches
// of 1024 training nodes; the metric is sampled edges per second.
func BenchmarkLargeNeighborSampling(b *testing.B) {
	d := largeGraph(b)
	train, err := d.Train.Int64s()
	if err != nil {
		b.Fatal(err)
	}
	d.Graph.In()
	rng := rand.New(rand.NewPCG(1, 2))
	edges := 0
	b.ResetTimer()
	for i := range b.N {
		lo := (i * 1024) % max(1, len(train)-1024)
		sub, err := SampleNeighbors(d.Graph, train[lo:lo+1024], []int{15, 10}, rng)
		if err != nil {
			b.Fatal(err)
		}
		edges += sub.Graph.NumEdges()
	}
	b.ReportMetric(float64(edges)/b.Elapsed().Seconds(), "edges/s")
}
