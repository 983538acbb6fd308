package auto

import (
	"fmt"
	"sort"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/nn"
)

// The built-in workloads: small training steps and inference graphs of
// different shapes, for the CLI's `webtensor auto` and the suite the
// targets are measured on. Each run repeats its step enough to last
// milliseconds, so a timer's resolution and one scheduler hiccup do not
// decide a test. Everything is seeded: two processes build the same
// workloads.

// Builtin makes the built-in workload name.
func Builtin(name string) (Workload, error) {
	b, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("auto: no built-in workload %q (have %v)", name, BuiltinNames())
	}
	return b()
}

// BuiltinNames lists the built-in workloads.
func BuiltinNames() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

var builtins = map[string]func() (Workload, error){
	"mlp-infer-tiny":    func() (Workload, error) { return mlpInfer("mlp-infer-tiny", 4, 32, 64, 10, 200) },
	"mlp-infer-wide":    func() (Workload, error) { return mlpInfer("mlp-infer-wide", 128, 512, 1024, 256, 4) },
	"mlp-train-tiny":    func() (Workload, error) { return mlpTrain("mlp-train-tiny", 8, 16, 32, 4, 40) },
	"mlp-train-medium":  func() (Workload, error) { return mlpTrain("mlp-train-medium", 64, 256, 256, 32, 4) },
	"conv-infer-small":  func() (Workload, error) { return convInfer("conv-infer-small", 2, 3, 8, 16, 20) },
	"conv-infer-large":  func() (Workload, error) { return convInfer("conv-infer-large", 4, 16, 32, 64, 2) },
	"encoder-infer":     func() (Workload, error) { return encoderInfer("encoder-infer", 2, 16, 64, 4, 4) },
	"matmul-chain-tiny": func() (Workload, error) { return matmulChain("matmul-chain-tiny", 16, 300) },
	"matmul-chain-big":  func() (Workload, error) { return matmulChain("matmul-chain-big", 384, 2) },
	"graph-ew-small":    func() (Workload, error) { return elementwiseGraph("graph-ew-small", 1024, 100) },
	"graph-ew-large":    func() (Workload, error) { return elementwiseGraph("graph-ew-large", 1<<20, 2) },
	"graph-mlp":         func() (Workload, error) { return mlpGraph("graph-mlp", 32, 128, 128, 20) },
}

func randn(seed int, shape ...int) *core.Tensor {
	return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed})
}

// repeat runs step n times and waits for the last result.
func repeat(n int, step func() (*core.Tensor, error)) error {
	var last *core.Tensor
	for range n {
		t, err := step()
		if err != nil {
			return err
		}
		last = t
	}
	_, err := last.Float32s()
	return err
}

func mlp(in, hidden, out int) (*nn.Sequential, error) {
	core.ManualSeed(7)
	l1, err := nn.NewLinear(in, hidden)
	if err != nil {
		return nil, err
	}
	l2, err := nn.NewLinear(hidden, out)
	if err != nil {
		return nil, err
	}
	return nn.NewSequential(l1, &nn.ReLU{}, l2)
}

func mlpInfer(name string, batch, in, hidden, out, n int) (Workload, error) {
	m, err := mlp(in, hidden, out)
	if err != nil {
		return nil, err
	}
	x := randn(1, batch, in)
	return Timed(name, func() error {
		return repeat(n, func() (*core.Tensor, error) { y := m.Forward(x); return y, y.Err() })
	}), nil
}

func mlpTrain(name string, batch, in, hidden, out, n int) (Workload, error) {
	m, err := mlp(in, hidden, out)
	if err != nil {
		return nil, err
	}
	opt, err := nn.NewSGD(m.Parameters(), nn.SGDConfig{LR: 1e-3, Momentum: 0.9})
	if err != nil {
		return nil, err
	}
	x, target := randn(2, batch, in), randn(3, batch, out)
	return Timed(name, func() error {
		return repeat(n, func() (*core.Tensor, error) {
			opt.ZeroGrad()
			loss := core.Call1("mse_loss", nil, m.Forward(x), target)
			if err := loss.Backward(nil); err != nil {
				return nil, err
			}
			return loss, opt.Step()
		})
	}), nil
}

func convInfer(name string, batch, cin, cout, size, n int) (Workload, error) {
	core.ManualSeed(11)
	c, err := nn.NewConv2d(cin, cout, 3, 3, nn.WithPadding(1))
	if err != nil {
		return nil, err
	}
	x := randn(4, batch, cin, size, size)
	return Timed(name, func() error {
		return repeat(n, func() (*core.Tensor, error) { y := c.Forward(x).ReLU(); return y, y.Err() })
	}), nil
}

func encoderInfer(name string, batch, seq, dModel, heads, n int) (Workload, error) {
	core.ManualSeed(13)
	e, err := nn.NewTransformerEncoderLayer(dModel, heads, 2*dModel, nn.WithDropout(0), nn.WithBatchFirst())
	if err != nil {
		return nil, err
	}
	e.Train(false)
	x := randn(5, batch, seq, dModel)
	return Timed(name, func() error {
		return repeat(n, func() (*core.Tensor, error) { y := e.Forward(x); return y, y.Err() })
	}), nil
}

func matmulChain(name string, size, n int) (Workload, error) {
	a, b := randn(6, size, size), core.Call1("mul", nil, randn(7, size, size), core.Scalar(1/float64(size), core.F32))
	return Timed(name, func() error {
		return repeat(n, func() (*core.Tensor, error) { y := a.Matmul(b).Matmul(b); return y, y.Err() })
	}), nil
}

// graphWorkload runs a traced graph, plain (passes, no fusion) or fused,
// as its own setting graph.<name>.fuse says: whether fusion pays depends
// on the shapes and the device, so it is a decision to measure.
type graphWorkload struct {
	name         string
	plain, fused *ir.Graph
	inputs       []*core.Tensor
	n            int
	fuse         bool
}

func newGraphWorkload(name string, n int, fn func([]*core.Tensor) ([]*core.Tensor, error), inputs ...*core.Tensor) (Workload, error) {
	g := &graphWorkload{name: name, inputs: inputs, n: n}
	for _, fused := range []bool{false, true} {
		graph, err := ir.Trace(fn, inputs...)
		if err != nil {
			return nil, fmt.Errorf("auto: tracing %s: %w", name, err)
		}
		if _, _, _, err := graph.Optimize(); err != nil {
			return nil, fmt.Errorf("auto: optimising %s: %w", name, err)
		}
		if fused {
			if _, err := graph.Fuse(core.CPU); err != nil {
				return nil, fmt.Errorf("auto: fusing %s: %w", name, err)
			}
			g.fused = graph
		} else {
			g.plain = graph
		}
	}
	return g, nil
}

func (g *graphWorkload) Name() string { return g.name }

func (g *graphWorkload) Run() (float64, error) {
	graph := g.plain
	if g.fuse {
		graph = g.fused
	}
	return Timed(g.name, func() error {
		return repeat(g.n, func() (*core.Tensor, error) {
			outs, err := graph.Run(g.inputs...)
			if err != nil {
				return nil, err
			}
			return outs[0], nil
		})
	}).Run()
}

// OwnSettings is the graph's fusion switch.
func (g *graphWorkload) OwnSettings() []Setting {
	return []Setting{{Name: "graph." + g.name + ".fuse", Doc: "run " + g.name + " as fused kernels (ir.Graph.Fuse)", Choices: []string{"off", "on"},
		Get: func() string {
			if g.fuse {
				return "on"
			}
			return "off"
		},
		Set: func(v string) error {
			if v != "on" && v != "off" {
				return fmt.Errorf("want on or off, got %q", v)
			}
			g.fuse = v == "on"
			return nil
		}}}
}

func elementwiseGraph(name string, size, n int) (Workload, error) {
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := in[0]
		y := core.Call1("add", nil, core.Call1("mul", nil, x, core.Scalar(1.5, core.F32)), core.Scalar(0.25, core.F32))
		y = core.Call1("mul", nil, core.Call1("sigmoid", nil, y), y)
		y = core.Call1("sub", nil, core.Call1("tanh", nil, y), core.Call1("mul", nil, x, core.Scalar(0.5, core.F32)))
		return []*core.Tensor{y}, y.Err()
	}
	return newGraphWorkload(name, n, fn, randn(8, size))
}

func mlpGraph(name string, batch, in, hidden, n int) (Workload, error) {
	w1, w2 := randn(9, in, hidden), randn(10, hidden, hidden)
	b1, b2 := randn(11, hidden), randn(12, hidden)
	fn := func(ins []*core.Tensor) ([]*core.Tensor, error) {
		h := core.Call1("gelu", nil, core.Call1("add", nil, ins[0].Matmul(w1), b1))
		y := core.Call1("sigmoid", nil, core.Call1("add", nil, h.Matmul(w2), b2))
		return []*core.Tensor{y}, y.Err()
	}
	return newGraphWorkload(name, n, fn, randn(13, batch, in))
}
