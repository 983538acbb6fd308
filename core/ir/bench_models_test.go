package ir

import (
	"slices"
	"testing"
	"time"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/geom"
	"github.com/webtensor/webtensor/nn"
)

// The IR issue's step-time target, measured on WebGPU for two models, eager
// against the traced graph after the passes and fusion (Graph.Fuse):
//   - one transformer encoder layer (layer_norm, attention, GELU MLP,
//     residuals; d=64, 4 heads, ff 256, batch 8 x 32 tokens);
//   - a two-layer GCN (GCNConv with symmetric normalisation -> ReLU ->
//     GCNConv) over a stochastic block model graph of 4000 nodes and about
//     112k directed edges (116k stored entries with self loops), 64 features.
//
// Each is timed as inference (forward, no gradient) and as a training step
// (forward, a sum loss and backward to every parameter). Every step ends in
// a read of a result so the GPU work counts.

type benchModel struct {
	params  []*core.Tensor
	x       *core.Tensor
	forward func(*core.Tensor) *core.Tensor
}

func transformerModel(b *testing.B, dev core.Device) benchModel {
	core.ManualSeed(1)
	l, err := nn.NewTransformerEncoderLayer(64, 4, 256, nn.WithDevice(dev), nn.WithBatchFirst(), nn.WithActivation("gelu"))
	if err != nil {
		b.Fatal(err)
	}
	l.Train(false)
	x := c1("randn", core.Attrs{"shape": []int{8, 32, 64}, "device": dev.String()})
	return benchModel{params: tensorsOf(l.Parameters()), x: x, forward: l.Forward}
}

func gcnModel(b *testing.B, dev core.Device) benchModel {
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
	return benchModel{params: tensorsOf(m.Parameters()), x: data.X,
		forward: func(x *core.Tensor) *core.Tensor { return m.Forward(x, data.Graph) }}
}

func tensorsOf(ps []*nn.Parameter) []*core.Tensor {
	out := make([]*core.Tensor, len(ps))
	for i, p := range ps {
		out[i] = p.Tensor()
	}
	return out
}

// benchStep times one model eager and compiled, inference or training,
// alternating the two step by step so a machine's load falls on both alike;
// it reports each one's median step time and how much lower compiled is.
//
// Inference traces the forward pass with the parameters captured as
// constants. A training step traces the whole step - forward, the loss and
// the backward pass to every parameter (core.Gradients) - with the
// parameters as inputs, as an optimizer that replaces them needs; it
// returns the loss and the gradients, and eager runs the same function.
func benchStep(b *testing.B, model func(*testing.B, core.Device) benchModel, train bool) {
	dev := webgpuOrSkip(b)
	m := model(b, dev)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{m.forward(in[0])}, nil }
	ins := []*core.Tensor{m.x}
	if train {
		ins = append(ins, m.params...)
		fn = func(in []*core.Tensor) ([]*core.Tensor, error) {
			loss := c1("sum", nil, m.forward(in[0]))
			grads, err := core.Gradients(loss, in[1:])
			return append([]*core.Tensor{loss}, grads...), err
		}
	} else {
		core.EnterNoGrad()
		defer func() { _ = core.ExitNoGrad() }()
	}
	g, err := Trace(fn, ins...)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, _, err := g.Optimize(); err != nil {
		b.Fatal(err)
	}
	if _, err := g.Fuse(dev); err != nil {
		b.Fatal(err)
	}
	step := func(compiled bool) time.Duration {
		start := time.Now()
		var outs []*core.Tensor
		var err error
		if compiled {
			// The graph holds the backward pass itself: nothing to record.
			core.EnterNoGrad()
			outs, err = g.Run(ins...)
			_ = core.ExitNoGrad()
		} else {
			outs, err = fn(ins)
		}
		if err != nil {
			b.Fatal(err)
		}
		// One read at the end makes the step's GPU work count; with
		// gradients it is of the first parameter's.
		if _, err := c1("sum", nil, outs[btoi(train)]).Item(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	step(false)
	step(true)
	b.ResetTimer()
	eager, compiled := make([]time.Duration, b.N), make([]time.Duration, b.N)
	for i := range b.N {
		eager[i] = step(false)
		compiled[i] = step(true)
	}
	// Medians: on a shared machine a step now and then takes several times
	// its usual time, which moves a mean more than the difference measured.
	e, c := median(eager), median(compiled)
	b.ReportMetric(e.Seconds()*1e3, "eager-ms")
	b.ReportMetric(c.Seconds()*1e3, "compiled-ms")
	b.ReportMetric(100*(1-c.Seconds()/e.Seconds()), "%lower")
	b.ReportMetric(float64(len(g.Nodes)), "graph-nodes")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func BenchmarkTransformerLayer(b *testing.B) { benchStep(b, transformerModel, false) }
func BenchmarkTransformerTrain(b *testing.B) { benchStep(b, transformerModel, true) }
func BenchmarkGCN(b *testing.B)              { benchStep(b, gcnModel, false) }
func BenchmarkGCNTrain(b *testing.B)         { benchStep(b, gcnModel, true) }
