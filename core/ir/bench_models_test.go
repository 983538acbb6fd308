package ir

import (
	"testing"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/geom"
	"github.com/webtensor/webtensor/nn"
)

// The IR issue's step-time target, measured: one transformer encoder layer
// (layer_norm, attention, GELU MLP, residuals; d=64, 4 heads, ff 256,
// batch 8 x 32 tokens) forward on WebGPU, eager against its traced graph
// after the passes and fusion. Inference (no gradient): fusion only applies
// where none is recorded.
func benchTransformer(b *testing.B, compiled bool) {
	dev := core.Device{Kind: "webgpu"}
	if _, err := core.BackendFor(dev); err != nil {
		b.Skipf("no WebGPU adapter: %v", err)
	}
	core.ManualSeed(1)
	l, err := nn.NewTransformerEncoderLayer(64, 4, 256, nn.WithDevice(dev), nn.WithBatchFirst())
	if err != nil {
		b.Fatal(err)
	}
	l.Train(false)
	x := c1("randn", core.Attrs{"shape": []int{8, 32, 64}, "device": dev.String()})
	core.EnterNoGrad()
	defer func() { _ = core.ExitNoGrad() }()
	fwd := func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{l.Forward(in[0])}, nil }
	g := compileForBench(b, fwd, dev, x)
	benchLoop(b, g, compiled, x, func() *core.Tensor { return l.Forward(x) })
}

// compileForBench traces fn on x and runs the passes and fusion for dev.
func compileForBench(b *testing.B, fn func([]*core.Tensor) ([]*core.Tensor, error), dev core.Device, x *core.Tensor) *Graph {
	g, err := Trace(fn, x)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, _, err := g.Optimize(); err != nil {
		b.Fatal(err)
	}
	if _, err := g.Fuse(dev); err != nil {
		b.Fatal(err)
	}
	return g
}

// benchLoop times eager (the model's own call) or the compiled graph,
// each step ending in a read of the result's sum so the GPU work counts.
func benchLoop(b *testing.B, g *Graph, compiled bool, x *core.Tensor, eager func() *core.Tensor) {
	run := func() {
		var out *core.Tensor
		if compiled {
			outs, err := g.Run(x)
			if err != nil {
				b.Fatal(err)
			}
			out = outs[0]
		} else {
			out = eager()
		}
		if _, err := c1("sum", nil, out).Item(); err != nil {
			b.Fatal(err)
		}
	}
	run()
	b.ResetTimer()
	for range b.N {
		run()
	}
	if compiled {
		b.ReportMetric(float64(len(g.Nodes)), "graph-nodes")
	}
}

func BenchmarkTransformerLayerEager(b *testing.B)    { benchTransformer(b, false) }
func BenchmarkTransformerLayerCompiled(b *testing.B) { benchTransformer(b, true) }

// The same comparison for a two-layer GCN (GCNConv with symmetric
// normalisation -> ReLU -> GCNConv) over a stochastic block model graph of
// 4000 nodes and about 80k edges, 64 features.
func benchGCN(b *testing.B, compiled bool) {
	dev := core.Device{Kind: "webgpu"}
	if _, err := core.BackendFor(dev); err != nil {
		b.Skipf("no WebGPU adapter: %v", err)
	}
	data, err := geom.SBM(geom.SBMConfig{Blocks: 4, BlockSize: 1000, PIn: 0.016, POut: 0.004, Features: 64,
		Noise: 1, Seed: 1, TrainFraction: 0.5}, dev)
	if err != nil {
		b.Fatal(err)
	}
	core.ManualSeed(1)
	m, err := geom.NewGCN(64, 64, 4, 0, geom.Options{Device: dev})
	if err != nil {
		b.Fatal(err)
	}
	m.Train(false)
	core.EnterNoGrad()
	defer func() { _ = core.ExitNoGrad() }()
	fwd := func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{m.Forward(in[0], data.Graph)}, nil
	}
	g := compileForBench(b, fwd, dev, data.X)
	benchLoop(b, g, compiled, data.X, func() *core.Tensor { return m.Forward(data.X, data.Graph) })
}

func BenchmarkGCNEager(b *testing.B)    { benchGCN(b, false) }
func BenchmarkGCNCompiled(b *testing.B) { benchGCN(b, true) }
