package ir

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// webgpuOrSkip is the WebGPU device; it skips t only where the machine has
// no adapter (webgputest.Need).
func webgpuOrSkip(t testing.TB) core.Device {
	t.Helper()
	webgputest.Need(t)
	return webgputest.Device
}

func randnOn(dev core.Device, seed int, shape ...int) *core.Tensor {
	return c1("randn", core.Attrs{"shape": shape, "seed": seed, "device": dev.String()})
}

// Random elementwise programs over broadcast operands, fused on WebGPU,
// against the same graph run op by op.
func TestFusedKernelsEqualTheOpsTheyReplace(t *testing.T) {
	dev := webgpuOrSkip(t)
	unary := []string{"exp", "tanh", "sin", "neg", "square", "relu", "sigmoid", "abs", "erf", "gelu", "silu", "sign"}
	binary := []string{"add", "sub", "mul", "maximum", "minimum"}
	fusedAny := 0
	backwardOps := map[string]int{}
	for seed := range 30 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		bias := randnOn(dev, 200+seed, 8)
		steps := make([][3]int, 4+rng.IntN(10))
		for i := range steps {
			steps[i] = [3]int{rng.IntN(4), rng.IntN(32), rng.IntN(32)}
		}
		compare := []string{"gt", "ge", "lt", "le", "eq", "ne"}
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			pool := []*core.Tensor{in[0], in[1], bias}
			for _, s := range steps {
				a, b := pool[s[1]%len(pool)], pool[s[2]%len(pool)]
				switch {
				case s[0] == 0:
					pool = append(pool, c1(unary[s[1]%len(unary)], nil, a))
				case s[0] == 1:
					pool = append(pool, c1(binary[s[2]%len(binary)], nil, a, b))
				case s[1]%3 == 0:
					// The ops backward passes are made of: relu's gradient is a
					// where over a comparison, gelu's its own op.
					approx := []string{"none", "tanh"}[s[2]%2]
					g, x := c1("add", nil, a, b), c1("sub", nil, a, b) // one shape, as it needs
					pool = append(pool, c1("_gelu_backward", core.Attrs{"approximate": approx}, g, x))
				default:
					cond := c1(compare[s[2]%len(compare)], nil, a, b)
					pool = append(pool, c1("where", nil, cond, b, c1("neg", nil, a)))
				}
			}
			return []*core.Tensor{pool[len(pool)-1]}, nil
		}
		x, y := randnOn(dev, 1, 4, 8), randnOn(dev, 2, 4, 1)
		g, err := Trace(program, x, y)
		require.NoError(t, err)
		_, _, _, err = g.Optimize()
		require.NoError(t, err)
		plain, err := g.Run(x, y)
		require.NoError(t, err)
		n, err := g.FuseElementwise(dev)
		require.NoError(t, err)
		fusedAny += n
		for _, op := range []string{"where(", "_gelu_backward("} {
			if strings.Contains(g.String(), "fused["+op) || strings.Contains(g.String(), ", "+op) || strings.Contains(g.String(), "("+op) {
				backwardOps[op]++
			}
		}
		fused, err := g.Run(x, y)
		require.NoError(t, err)
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		for i := range a {
			if !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
				require.InDelta(t, a[i], b[i], 1e-5+1e-5*math.Abs(a[i]), "seed %d element %d\n%s", seed, i, g)
			}
		}
	}
	assert.Greater(t, fusedAny, 30, "the programs had chains to fuse")
	assert.Positive(t, backwardOps["where("], "a where over a comparison was fused")
	assert.Positive(t, backwardOps["_gelu_backward("], "gelu's gradient was fused")
}

func TestFusionKeepsGradients(t *testing.T) {
	dev := webgpuOrSkip(t)
	w := randnOn(dev, 3, 8)
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("sum", nil, c1("tanh", nil, c1("mul", nil, c1("add", nil, in[0], w), in[0])))}, nil
	}
	x := randnOn(dev, 4, 4, 8)
	g, err := Trace(fn, x)
	require.NoError(t, err)
	n, err := g.FuseElementwise(dev)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Contains(t, g.String(), "fused[tanh(mul(add($0, $1), $0))]")
	xs := x.Detach().SetRequiresGrad(true)
	out, err := g.Run(xs)
	require.NoError(t, err)
	require.NoError(t, out[0].Backward())
	got, _ := xs.Grad().Float64s()
	xe := x.Detach().SetRequiresGrad(true)
	want, _ := fn([]*core.Tensor{xe})
	require.NoError(t, want[0].Backward())
	exp, _ := xe.Grad().Float64s()
	assert.InDeltaSlice(t, exp, got, 1e-6)
	// The CPU cannot fuse: the graph stays as it is.
	wc := randn(5, 8)
	cg, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("tanh", nil, c1("add", nil, in[0], wc))}, nil
	}, randn(1, 4, 8))
	require.NoError(t, err)
	n, err = cg.FuseElementwise(core.CPU)
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	assert.False(t, strings.Contains(cg.String(), "fused"))
}
