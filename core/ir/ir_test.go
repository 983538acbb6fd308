package ir

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

func c1(op string, a core.Attrs, in ...*core.Tensor) *core.Tensor { return core.Call1(op, a, in...) }

func randn(seed int, shape ...int) *core.Tensor {
	return c1("randn", core.Attrs{"shape": shape, "seed": seed, "dtype": core.F64})
}

func values(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// requireClose fails unless got has want's outputs, every element within
// tol of want's relative to 1 + |want|.
func requireClose(t *testing.T, want, got []*core.Tensor, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		wv, gv := values(t, want[i]), values(t, got[i])
		require.Len(t, gv, len(wv), "output %d", i)
		for j := range wv {
			require.LessOrEqual(t, math.Abs(gv[j]-wv[j]), tol*(1+math.Abs(wv[j])), "output %d element %d", i, j)
		}
	}
}

// fallbacksDuring runs fn and returns how many fused nodes ran as their
// original ops meanwhile.
func fallbacksDuring(fn func()) int64 {
	_, before := FusionCounts()
	fn()
	_, after := FusionCounts()
	return after - before
}

func TestTraceAnMLPAndRunItOnNewInputs(t *testing.T) {
	w1, b1, w2 := randn(1, 4, 8), randn(2, 8), randn(3, 8, 2)
	mlp := func(in []*core.Tensor) ([]*core.Tensor, error) {
		h := c1("relu", nil, c1("add", nil, c1("matmul", nil, in[0], w1), b1))
		return []*core.Tensor{c1("matmul", nil, h, w2)}, nil
	}
	g, err := Trace(mlp, randn(4, 5, 4))
	require.NoError(t, err)
	assert.Equal(t, Stats{Nodes: 4, Consts: 3, Inputs: 1, Outputs: 1}, g.Stats())
	assert.Contains(t, g.String(), "= matmul(%in0, const")
	x := randn(5, 5, 4)
	got, err := g.Run(x)
	require.NoError(t, err)
	want, _ := mlp([]*core.Tensor{x})
	assert.Equal(t, values(t, want[0]), values(t, got[0]))

	_, err = g.Run(randn(6, 3, 4))
	assert.ErrorContains(t, err, "input 0 is f64[3 4], the graph was captured with f64[5 4] (trace again for new shapes)")
	_, err = g.Run()
	assert.ErrorContains(t, err, "0 inputs, the graph takes 1")
}

func TestPassesFoldMergeAndDropDeadCode(t *testing.T) {
	w := randn(1, 3)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		scaled := c1("mul", nil, w, core.Scalar(2, core.F64))   // constant: folded
		a := c1("exp", nil, in[0])                              // computed twice: merged
		b := c1("exp", nil, in[0])                              //
		_ = c1("sin", nil, in[0])                               // unused: dead
		d1 := c1("dropout", core.Attrs{"p": 0.5}, in[0])        // random: never merged
		d2 := c1("dropout", core.Attrs{"p": 0.5}, in[0])        //
		sum := c1("add", nil, c1("add", nil, a, b), scaled)     //
		return []*core.Tensor{sum, c1("sub", nil, d1, d2)}, nil //
	}
	g, err := Trace(fn, randn(2, 3))
	require.NoError(t, err)
	before := g.Stats().Nodes
	folded, merged, dead, err := g.Optimize()
	require.NoError(t, err)
	assert.Equal(t, 1, folded, "w * 2")
	assert.Equal(t, 1, merged, "exp(x) twice")
	assert.Equal(t, 1, dead, "sin(x)")
	assert.Equal(t, before-3, g.Stats().Nodes)
	assert.Equal(t, 2, strings.Count(g.String(), "dropout("), "random ops stay apart")
	x := randn(7, 3)
	got, err := g.Run(x)
	require.NoError(t, err)
	want, _ := fn([]*core.Tensor{x})
	assert.Equal(t, values(t, want[0]), values(t, got[0]))
}

func TestTraceRefusesWhatItCannotCapture(t *testing.T) {
	x, outside := randn(1, 2), randn(2, 2)
	_, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{outside}, nil }, x)
	assert.ErrorContains(t, err, "output 0 was not computed by the traced code")
	_, err = Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("matmul", nil, in[0], randn(3, 3))}, nil
	}, x)
	assert.ErrorContains(t, err, "matmul")
	g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{in[0]}, nil }, x)
	require.NoError(t, err, "an input may be returned as it is")
	assert.Equal(t, 0, g.Stats().Nodes)
}

// programStep is one op of a random program on operands a and b, picked
// from the pool by i and j (which it may use to choose further).
type programStep func(a, b *core.Tensor, i, j int) (*core.Tensor, error)

// randomProgram is a seeded random straight-line program over two inputs
// and a constant [3 4] tensor: minSteps plus up to extraSteps steps, each
// one of steps on operands from the inputs and the earlier results. It
// returns the sum of the last result and the one before it.
func randomProgram(seed int, stream uint64, minSteps, extraSteps int, steps []programStep) func([]*core.Tensor) ([]*core.Tensor, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	konst := randn(100+seed, 3, 4)
	picks := make([][3]int, minSteps+rng.IntN(extraSteps))
	for i := range picks {
		picks[i] = [3]int{rng.IntN(len(steps)), rng.IntN(16), rng.IntN(16)}
	}
	return func(in []*core.Tensor) ([]*core.Tensor, error) {
		pool := []*core.Tensor{in[0], in[1], konst}
		for _, p := range picks {
			r, err := steps[p[0]](pool[p[1]%len(pool)], pool[p[2]%len(pool)], p[1], p[2])
			if err != nil {
				return nil, err
			}
			pool = append(pool, r)
		}
		return []*core.Tensor{c1("sum", nil, pool[len(pool)-1]), pool[len(pool)-2]}, nil
	}
}

// Differential test: random programs of elementwise ops, broadcasts and
// reductions, traced, optimised and run on new inputs, must equal the eager
// program exactly (the same kernels run), gradients included.
func TestRandomGraphsEqualEagerAfterPasses(t *testing.T) {
	unary := []string{"exp", "tanh", "sin", "neg", "square", "relu", "sigmoid"}
	binary := []string{"add", "sub", "mul", "maximum"}
	unaryStep := func(a, _ *core.Tensor, i, _ int) (*core.Tensor, error) { return c1(unary[i%len(unary)], nil, a), nil }
	binaryStep := func(a, b *core.Tensor, _, j int) (*core.Tensor, error) {
		return c1(binary[j%len(binary)], nil, a, b), nil
	}
	for seed := range 40 {
		program := randomProgram(seed, 7, 6, 10, []programStep{
			unaryStep, binaryStep, binaryStep,
			func(a, _ *core.Tensor, _, _ int) (*core.Tensor, error) {
				return c1("sum", core.Attrs{"axes": []int{1}, "keepdim": true}, a), nil // broadcasts back on use
			},
		})
		g, err := Trace(program, randn(1, 3, 4), randn(2, 3, 4))
		require.NoError(t, err, "seed %d", seed)
		_, _, _, err = g.Optimize()
		require.NoError(t, err)
		x := randn(3, 3, 4).Detach().SetRequiresGrad(true)
		y := randn(4, 3, 4)
		got, err := g.Run(x, y)
		require.NoError(t, err)
		want, _ := program([]*core.Tensor{x, y})
		for i := range want {
			assert.Equal(t, values(t, want[i]), values(t, got[i]), "seed %d output %d\n%s", seed, i, g)
		}
		if want[0].RequiresGrad() {
			require.NoError(t, want[0].Backward())
			eager := values(t, x.Grad())
			x.ZeroGrad()
			require.NoError(t, got[0].Backward())
			assert.Equal(t, eager, values(t, x.Grad()), "seed %d: gradient through the graph", seed)
		}
	}
}
