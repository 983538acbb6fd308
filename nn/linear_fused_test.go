package nn_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/nn"
)

// TestLinearInferenceEqualsMatmulAdd: without a gradient to record, a
// linear layer on the CPU adds its bias in the product's store (the
// matmul epilogue); the bits are those of matmul then add, for small
// products and packed ones, a batch of tokens and a single row.
func TestLinearInferenceEqualsMatmulAdd(t *testing.T) {
	for _, c := range []struct{ in, out int }{{3, 5}, {384, 1536}, {300, 70}} {
		for _, shape := range []core.Shape{{7, c.in}, {2, 65, c.in}, {1, c.in}} {
			lin := must(nn.NewLinear(c.in, c.out))(t)
			x := core.Call1("randn", core.Attrs{"shape": []int(shape), "seed": 5})
			want := core.Call1("add", nil, core.Call1("matmul", nil, x, core.Call1("transpose", nil, lin.Weight.Tensor())), lin.Bias.Tensor())
			core.EnterNoGrad()
			got := lin.Forward(x)
			require.NoError(t, core.ExitNoGrad())
			w, g := values(t, want), values(t, got)
			require.Equal(t, want.Shape(), got.Shape())
			for i := range w {
				require.Equal(t, math.Float32bits(float32(w[i])), math.Float32bits(float32(g[i])), "%v x %d->%d, element %d", shape, c.in, c.out, i)
			}
		}
	}
}

// TestLinearTracedUnderNoGradRecordsItsOps: a tracer sees the matmul and
// the add (the fused store would be invisible to it, and the traced graph
// would hold the first input's result as a constant).
func TestLinearTracedUnderNoGradRecordsItsOps(t *testing.T) {
	lin := must(nn.NewLinear(4, 3))(t)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{lin.Forward(in[0])}, nil }
	x, y := core.Call1("randn", core.Attrs{"shape": []int{2, 4}, "seed": 1}), core.Call1("randn", core.Attrs{"shape": []int{2, 4}, "seed": 2})
	core.EnterNoGrad()
	defer func() { require.NoError(t, core.ExitNoGrad()) }()
	g, err := ir.Trace(fn, x)
	require.NoError(t, err)
	require.Contains(t, g.String(), "matmul(")
	out, err := g.Run(y)
	require.NoError(t, err)
	require.Equal(t, values(t, lin.Forward(y)), values(t, out[0]))
}

// TestLinearForwardAddEqualsForwardThenAdd: ForwardAdd adds the residual in
// the product's store on the CPU with the bits of Forward then Add (a batch
// of sequences, a small product and a packed one); with a gradient to
// record it runs the ops, and the gradient reaches both operands.
func TestLinearForwardAddEqualsForwardThenAdd(t *testing.T) {
	for _, c := range []struct{ in, out int }{{48, 72}, {384, 1536}} {
		lin := must(nn.NewLinear(c.in, c.out))(t)
		x := core.Call1("randn", core.Attrs{"shape": []int{2, 33, c.in}, "seed": 6})
		res := core.Call1("randn", core.Attrs{"shape": []int{2, 33, c.out}, "seed": 7})
		core.EnterNoGrad()
		want := lin.Forward(x).Add(res)
		got := lin.ForwardAdd(x, res)
		require.NoError(t, core.ExitNoGrad())
		w, g := values(t, want), values(t, got)
		require.Len(t, g, len(w))
		for i := range w {
			require.Equal(t, math.Float32bits(float32(w[i])), math.Float32bits(float32(g[i])), "%d->%d, element %d", c.in, c.out, i)
		}
	}
	lin := must(nn.NewLinear(4, 3))(t)
	x := core.Call1("randn", core.Attrs{"shape": []int{5, 4}, "seed": 8}).SetRequiresGrad(true)
	res := core.Call1("randn", core.Attrs{"shape": []int{5, 3}, "seed": 9}).SetRequiresGrad(true)
	y := lin.ForwardAdd(x, res)
	require.True(t, y.RequiresGrad(), "with a gradient to record the ops run")
	require.NoError(t, y.Sum(core.Attrs{}).Backward())
	require.NotNil(t, x.Grad())
	require.NotNil(t, res.Grad())
}
