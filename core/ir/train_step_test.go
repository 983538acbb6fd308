package ir

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// trainStep is a training step as a function of the input and the
// parameters: a transformer layer's forward, a sum loss and the gradient
// of every parameter, returned after the loss.
func trainStep(l *nn.TransformerEncoderLayer, nParams int) func(in []*core.Tensor) ([]*core.Tensor, error) {
	return func(in []*core.Tensor) ([]*core.Tensor, error) {
		loss := c1("sum", nil, c1("square", nil, l.Forward(in[0])))
		grads, err := core.Gradients(loss, in[1:1+nParams])
		return append([]*core.Tensor{loss}, grads...), err
	}
}

// A whole training step traces into one graph: the backward pass is ops
// like any other, so the passes and fusion reach it. The gradient seed
// (ones_like of the loss) is a constant, the three slice gradients of the
// fused q/k/v projection become one concat, and the graph run on new
// parameter values equals eager - on the CPU in f64, and fused on WebGPU.
func TestTracedTrainingStepEqualsEager(t *testing.T) {
	devs := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devs = append(devs, webgputest.Device)
	}
	for _, dev := range devs {
		t.Run(dev.Kind, func(t *testing.T) {
			dtype, tol := core.F64, 1e-9
			if dev.Kind == "webgpu" {
				dtype, tol = core.F32, 2e-3
			}
			core.ManualSeed(3)
			l, err := nn.NewTransformerEncoderLayer(16, 2, 32, nn.WithDevice(dev), nn.WithDType(dtype), nn.WithBatchFirst(), nn.WithActivation("gelu"))
			require.NoError(t, err)
			l.Train(false)
			params := tensorsOf(l.Parameters())
			x := c1("randn", core.Attrs{"shape": []int{2, 5, 16}, "dtype": dtype, "device": dev.String()})
			step := trainStep(l, len(params))
			g, err := Trace(step, append([]*core.Tensor{x}, params...)...)
			require.NoError(t, err)
			_, err = g.OptimizeStats()
			require.NoError(t, err)
			if dev.Kind == "webgpu" {
				rep, err := g.Fuse(dev)
				require.NoError(t, err)
				// q/k/v, output projection and both feed-forward layers.
				require.Equal(t, 4, rep.ColumnSums, "bias gradients summed by their weight gradient:\n%s", g)
				require.Equal(t, 1, rep.Attention, "attention writing its heads transposed:\n%s", g)
			}
			text := g.String()
			require.Contains(t, text, "concat(", "the q/k/v slice gradients were not combined:\n%s", text)
			require.NotContains(t, text, "_slice_grad", text)
			require.NotContains(t, text, "ones_like", text)

			// New values for the input and every parameter: nothing about them
			// may have been captured.
			x2 := c1("randn", core.Attrs{"shape": []int{2, 5, 16}, "dtype": dtype, "device": dev.String(), "seed": 9})
			for i, p := range l.Parameters() { // as an optimizer step replaces them
				require.NoError(t, p.Set(c1("mul", nil, p.Tensor().Detach(), core.Scalar(1.5+0.1*float64(i), dtype, dev))))
			}
			ins := append([]*core.Tensor{x2}, tensorsOf(l.Parameters())...)
			var got []*core.Tensor
			require.Zero(t, fallbacksDuring(func() { got = replay(t, g, ins...) }), "a fused node ran as its original ops")
			want, err := step(ins)
			require.NoError(t, err)
			requireClose(t, want, got, tol)
		})
	}
}

// Slice gradients that overlap or leave a gap are summed as before.
func TestCombineSliceGradsNeedsAnExactTiling(t *testing.T) {
	for _, c := range []struct {
		name   string
		ranges [][2]int
		concat bool
	}{
		{"tiling out of order", [][2]int{{4, 6}, {0, 4}}, true},
		{"three parts", [][2]int{{0, 2}, {2, 3}, {3, 6}}, true},
		{"gap", [][2]int{{0, 2}, {3, 6}}, false},
		{"overlap", [][2]int{{0, 4}, {3, 6}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := randn(1, 3, 6).SetRequiresGrad(true)
			fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
				var loss *core.Tensor
				for k, r := range c.ranges {
					s := c1("slice", core.Attrs{"axis": 1, "start": r[0], "stop": r[1]}, in[0])
					term := c1("sum", nil, c1("mul", nil, c1("sin", nil, s), core.Scalar(float64(k+1), core.F64)))
					if loss == nil {
						loss = term
					} else {
						loss = c1("add", nil, loss, term)
					}
				}
				return core.Gradients(loss, in)
			}
			g, err := Trace(fn, w)
			require.NoError(t, err)
			s, err := g.OptimizeStats()
			require.NoError(t, err)
			require.Equal(t, c.concat, s.Slices == 1, g.String())
			require.Equal(t, c.concat, strings.Contains(g.String(), "concat("), g.String())
			got := replay(t, g, w)
			want, err := fn([]*core.Tensor{w})
			require.NoError(t, err)
			require.InDeltaSlice(t, values(t, want[0]), values(t, got[0]), 1e-12)
		})
	}
}

// A concat of reshapes that merge the same trailing dims is done before
// them: concat reads the (permuted) parts through their strides and the
// reshape of its output is a view. Parts whose trailing dims differ, or
// a reshape read elsewhere too, are left alone.
func TestConcatMovesAboveMergingReshapes(t *testing.T) {
	heads := func(x *core.Tensor) *core.Tensor { // [2, 4, 3, 5] -> [2, 3, 20]
		return c1("reshape", core.Attrs{"shape": []int{2, 3, x.Shape()[1] * 5}}, c1("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, x))
	}
	cases := []struct {
		name  string
		fn    func(in []*core.Tensor) []*core.Tensor
		moved int
	}{
		{"attention heads", func(in []*core.Tensor) []*core.Tensor {
			return []*core.Tensor{c1("concat", core.Attrs{"axis": -1}, heads(in[0]), heads(in[1]), heads(in[0]))}
		}, 1},
		{"different trailing dims", func(in []*core.Tensor) []*core.Tensor {
			other := c1("reshape", core.Attrs{"shape": []int{2, 3, 20}}, c1("reshape", core.Attrs{"shape": []int{2, 3, 2, 10}}, c1("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, in[1])))
			return []*core.Tensor{c1("concat", core.Attrs{"axis": -1}, heads(in[0]), other)}
		}, 0},
		{"a part read twice", func(in []*core.Tensor) []*core.Tensor {
			h := heads(in[0])
			return []*core.Tensor{c1("concat", core.Attrs{"axis": -1}, h, heads(in[1])), h}
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fn := func(in []*core.Tensor) ([]*core.Tensor, error) { return c.fn(in), nil }
			a, b := randn(1, 2, 4, 3, 5), randn(2, 2, 4, 3, 5)
			g, err := Trace(fn, a, b)
			require.NoError(t, err)
			require.Equal(t, c.moved, g.ConcatBeforeReshape(), g.String())
			got, err := g.Run(a, b)
			require.NoError(t, err)
			want := c.fn([]*core.Tensor{a, b})
			for i := range want {
				require.Equal(t, want[i].Shape(), got[i].Shape())
				require.Equal(t, values(t, want[i]), values(t, got[i]))
			}
		})
	}
}

// A step written with Backward and Grad (as the SDKs' compile traces it)
// captures the gradients as computed values: the detached copy Backward
// stores in a leaf's Grad is the same value, not a constant from the trace.
// Replayed on new inputs, the graph's gradients are the new ones.
func TestTracedBackwardReturnsComputedGrads(t *testing.T) {
	w := randn(1, 3, 2).SetRequiresGrad(true)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		w.ZeroGrad()
		loss := c1("sum", nil, c1("tanh", nil, c1("matmul", nil, in[0], w)))
		if err := loss.Backward(); err != nil {
			return nil, err
		}
		// A second loss accumulates into the same Grad.
		if err := c1("sum", nil, c1("mul", nil, w, w)).Backward(); err != nil {
			return nil, err
		}
		return []*core.Tensor{loss, w.Grad()}, nil
	}
	x := randn(2, 4, 3)
	g, err := Trace(fn, x)
	require.NoError(t, err)
	require.Nil(t, g.Outputs[1].Const, "the gradient was captured as a constant:\n%s", g)
	x2 := randn(3, 4, 3)
	got := replay(t, g, x2)
	want, err := fn([]*core.Tensor{x2})
	require.NoError(t, err)
	require.InDeltaSlice(t, values(t, want[1]), values(t, got[1]), 1e-12)
	require.NotEqual(t, values(t, got[1]), values(t, must(fn([]*core.Tensor{x}))[1]), "new input, new gradient")
}

func must(ts []*core.Tensor, err error) []*core.Tensor {
	if err != nil {
		panic(err)
	}
	return ts
}

// replay runs g with autograd off, as a compiled step runs: the graph
// holds its own backward pass.
func replay(t *testing.T, g *Graph, ins ...*core.Tensor) []*core.Tensor {
	t.Helper()
	core.EnterNoGrad()
	got, err := g.Run(ins...)
	require.NoError(t, core.ExitNoGrad())
	require.NoError(t, err)
	return got
}
