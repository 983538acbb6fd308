package ir

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Random elementwise trees over broadcast operands, reduced by sum or mean
// over random axes (with and without keepdim), fused into the reduction on
// WebGPU, against the same graph run op by op.
func TestFusedReductionsEqualTheOpsTheyReplace(t *testing.T) {
	dev := webgpuOrSkip(t)
	unary := []string{"exp", "tanh", "square", "relu", "neg", "sigmoid"}
	binary := []string{"add", "sub", "mul", "maximum"}
	folded := 0
	for seed := range 24 {
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		w := randnOn(dev, 50+seed, 1, 6)
		steps := 1 + rng.IntN(5)
		ops := make([][2]int, steps)
		for i := range ops {
			ops[i] = [2]int{rng.IntN(2), rng.IntN(100)}
		}
		axesChoices := [][]int{nil, {0}, {1}, {-1, 0}, {2}}
		attrs := core.Attrs{"keepdim": rng.IntN(2) == 0}
		if a := axesChoices[rng.IntN(len(axesChoices))]; a != nil {
			attrs["axes"] = a
		}
		red := []string{"sum", "mean"}[seed%2]
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			y := c1("mul", nil, in[0], in[1])
			for _, s := range ops {
				if s[0] == 0 {
					y = c1(unary[s[1]%len(unary)], nil, y)
				} else {
					y = c1(binary[s[1]%len(binary)], nil, y, w)
				}
			}
			return []*core.Tensor{c1(red, attrs, y)}, nil
		}
		x, y := randnOn(dev, 1, 3, 5, 6), randnOn(dev, 2, 5, 1)
		g, err := Trace(program, x, y)
		require.NoError(t, err)
		plain, err := g.Run(x, y)
		require.NoError(t, err)
		rep, err := g.Fuse(dev)
		require.NoError(t, err)
		folded += rep.Reductions
		require.Contains(t, g.String(), "fused_reduce_"+red+"[", "seed %d", seed)
		_, before := FusionCounts()
		fused, err := g.Run(x, y)
		require.NoError(t, err)
		_, after := FusionCounts()
		require.Equal(t, before, after, "every fused node ran as one kernel\n%s", g)
		require.Equal(t, plain[0].Shape(), fused[0].Shape())
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		for i := range a {
			if !math.IsInf(a[i], 0) {
				require.InDelta(t, a[i], b[i], 1e-4+1e-5*math.Abs(a[i]), "seed %d element %d\n%s", seed, i, g)
			}
		}
	}
	assert.Equal(t, 24, folded)
}

// A tree whose result is also returned is not folded (it must be written).
func TestReductionFusionKeepsValuesThatAreUsedElsewhere(t *testing.T) {
	dev := webgpuOrSkip(t)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		y := c1("tanh", nil, c1("mul", nil, in[0], in[0]))
		return []*core.Tensor{y, c1("sum", nil, y)}, nil
	}
	g, err := Trace(fn, randnOn(dev, 1, 4, 4))
	require.NoError(t, err)
	rep, err := g.Fuse(dev)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Reductions)
}
