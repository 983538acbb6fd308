package ir

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Random elementwise programs ending in a weighted sum, with gradients
// recorded: the compiled graph runs its fused trees as one kernel forward
// and generated gradient kernels backward (no fallback to the original
// ops), and its gradients equal eager autograd's for the inputs and for a
// captured parameter.
func TestGradientsThroughFusedKernelsEqualEager(t *testing.T) {
	dev := webgpuOrSkip(t)
	one := core.Call1("ones", core.Attrs{"shape": []int{1}, "device": dev.String()})
	pos := func(a *core.Tensor) *core.Tensor { return c1("add", nil, c1("abs", nil, a), one) }
	unary := map[int]func(a *core.Tensor) *core.Tensor{}
	for i, op := range []string{"exp", "tanh", "sin", "cos", "sigmoid", "erf", "square", "neg", "abs", "relu", "expm1", "silu"} {
		unary[i] = func(a *core.Tensor) *core.Tensor { return c1(op, nil, c1("mul", nil, a, c1("mul", nil, one, one))) }
	}
	for i, op := range []string{"log", "sqrt", "rsqrt", "reciprocal", "log1p"} {
		unary[100+i] = func(a *core.Tensor) *core.Tensor { return c1(op, nil, pos(a)) }
	}
	unary[200] = func(a *core.Tensor) *core.Tensor {
		return c1("gelu", core.Attrs{"approximate": "none"}, c1("mul", nil, a, c1("mul", nil, one, one)))
	}
	unary[201] = func(a *core.Tensor) *core.Tensor { return c1("gelu", nil, c1("mul", nil, a, c1("mul", nil, one, one))) }
	keys := make([]int, 0, len(unary))
	for k := range unary {
		keys = append(keys, k)
	}
	binary := []func(a, b *core.Tensor) *core.Tensor{
		func(a, b *core.Tensor) *core.Tensor { return c1("add", nil, a, b) },
		func(a, b *core.Tensor) *core.Tensor { return c1("sub", nil, a, b) },
		func(a, b *core.Tensor) *core.Tensor { return c1("mul", nil, a, b) },
		func(a, b *core.Tensor) *core.Tensor { return c1("div", nil, a, pos(b)) },
		func(a, b *core.Tensor) *core.Tensor { return c1("maximum", nil, a, b) },
		func(a, b *core.Tensor) *core.Tensor { return c1("minimum", nil, a, b) },
	}
	before, fellBefore := FusionCounts()
	for seed := range 30 {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		param := randnOn(dev, 100+seed, 8).Detach().SetRequiresGrad(true)
		weights := randnOn(dev, 200+seed, 4, 8)
		steps := make([][3]int, 3+rng.IntN(6))
		for i := range steps {
			steps[i] = [3]int{rng.IntN(2), rng.IntN(1000), rng.IntN(1000)}
		}
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			pool := []*core.Tensor{in[0], in[1], param}
			for _, s := range steps {
				a, b := pool[s[1]%len(pool)], pool[s[2]%len(pool)]
				if s[0] == 0 {
					pool = append(pool, unary[keys[s[1]%len(keys)]](a))
				} else {
					pool = append(pool, binary[s[2]%len(binary)](a, b))
				}
			}
			out := c1("mul", nil, pool[len(pool)-1], weights)
			return []*core.Tensor{c1("sum", nil, out)}, nil
		}
		x, y := randnOn(dev, 1, 4, 8), randnOn(dev, 2, 4, 1)
		g, err := Trace(program, x, y)
		require.NoError(t, err)
		_, _, _, err = g.Optimize()
		require.NoError(t, err)
		_, err = g.Fuse(dev)
		require.NoError(t, err)

		grads := func(run func([]*core.Tensor) ([]*core.Tensor, error)) [][]float64 {
			xs, ys := x.Detach().SetRequiresGrad(true), y.Detach().SetRequiresGrad(true)
			param.ZeroGrad()
			out, err := run([]*core.Tensor{xs, ys})
			require.NoError(t, err)
			require.NoError(t, out[0].Backward())
			var res [][]float64
			for _, v := range []*core.Tensor{xs, ys, param} {
				if v.Grad() == nil {
					res = append(res, nil)
					continue
				}
				f, err := v.Grad().Float64s()
				require.NoError(t, err)
				res = append(res, f)
			}
			return res
		}
		want := grads(program)
		got := grads(func(in []*core.Tensor) ([]*core.Tensor, error) { return g.Run(in...) })
		for k := range want {
			require.Equal(t, want[k] == nil, got[k] == nil, "seed %d input %d\n%s", seed, k, g)
			for i := range want[k] {
				w, v := want[k][i], got[k][i]
				if math.IsNaN(w) || math.IsInf(w, 0) {
					continue
				}
				require.InDelta(t, w, v, 1e-4+1e-4*math.Abs(w), "seed %d input %d element %d\n%s", seed, k, i, g)
			}
		}
	}
	after, fellAfter := FusionCounts()
	assert.Equal(t, fellBefore, fellAfter, "no fused node fell back to its original ops")
	assert.Greater(t, after-before, int64(20), "fused kernels ran")
}

// A captured weight that requires a gradient, read through a layout op the
// passes fold into a dense constant (x @ w^T), still gets its gradient: the
// folded constant keeps its autograd path to the weight. (Replacing a
// folded output by its dense copy once cut that path, when autograd nodes
// shared the slices they were given.)
func TestGradientsReachWeightsThroughFoldedConstants(t *testing.T) {
	w := randn(1, 3, 4).Detach().SetRequiresGrad(true)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		wt := c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, w)
		return []*core.Tensor{c1("sum", nil, c1("tanh", nil, c1("matmul", nil, in[0], wt)))}, nil
	}
	x := randn(2, 5, 4)
	g, err := Trace(fn, x)
	require.NoError(t, err)
	folded, _, _, err := g.Optimize()
	require.NoError(t, err)
	require.Equal(t, 1, folded)
	w.ZeroGrad()
	out, err := g.Run(x)
	require.NoError(t, err)
	require.NoError(t, out[0].Backward())
	require.NotNil(t, w.Grad(), "the weight got no gradient through the folded constant")
	got := values(t, w.Grad())
	w.ZeroGrad()
	want, err := fn([]*core.Tensor{x})
	require.NoError(t, err)
	require.NoError(t, want[0].Backward())
	assert.InDeltaSlice(t, values(t, w.Grad()), got, 1e-12)
}
