package ir

import (
	"testing"

	"github.com/webtensor/webtensor/core"
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
	g, err := Trace(fwd, x)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, _, err := g.Optimize(); err != nil {
		b.Fatal(err)
	}
	if _, _, err := g.Fuse(dev); err != nil {
		b.Fatal(err)
	}
	run := func() {
		var out *core.Tensor
		if compiled {
			outs, err := g.Run(x)
			if err != nil {
				b.Fatal(err)
			}
			out = outs[0]
		} else {
			out = l.Forward(x)
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
	b.ReportMetric(float64(len(g.Nodes)), "graph-nodes")
}

func BenchmarkTransformerLayerEager(b *testing.B)    { benchTransformer(b, false) }
func BenchmarkTransformerLayerCompiled(b *testing.B) { benchTransformer(b, true) }
