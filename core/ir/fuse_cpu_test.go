package ir

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The CPU fuses elementwise trees too (cpu.Backend is a fusion.MapFuser),
// with the functions of the ops' own kernels: random programs over
// broadcast operands, with attributes and ops described only by their
// arithmetic, give exactly the bits of the same graph run op by op.
func TestCPUFusedTreesEqualTheOpsBitForBit(t *testing.T) {
	unary := []string{"exp", "tanh", "sin", "neg", "square", "relu", "sigmoid", "abs", "erf", "silu", "sign",
		"log1p", "atan", "asinh", "softplus", "leaky_relu", "gelu"}
	binary := []string{"add", "sub", "mul", "div", "maximum", "minimum", "hypot", "logaddexp", "atan2"}
	fusedAny := 0
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		bias := randnOn(core.CPU, 300+seed, 8)
		steps := make([][3]int, 3+rng.IntN(10))
		for i := range steps {
			steps[i] = [3]int{rng.IntN(3), rng.IntN(64), rng.IntN(64)}
		}
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			pool := []*core.Tensor{in[0], in[1], bias}
			for _, s := range steps {
				a, b := pool[s[1]%len(pool)], pool[s[2]%len(pool)]
				switch s[0] {
				case 0:
					op := unary[s[1]%len(unary)]
					var attrs core.Attrs
					if op == "gelu" && s[2]%2 == 0 {
						attrs = core.Attrs{"approximate": "tanh"}
					}
					pool = append(pool, c1(op, attrs, a))
				case 1:
					pool = append(pool, c1(binary[s[2]%len(binary)], nil, a, b))
				default:
					pool = append(pool, c1("mul", nil, a, c1("add", nil, b, core.Scalar(0.5, core.F32, core.CPU))))
				}
			}
			return []*core.Tensor{pool[len(pool)-1]}, nil
		}
		// A size over several blocks, and operands broadcast both ways.
		x, y := randnOn(core.CPU, 1, 600, 8), randnOn(core.CPU, 2, 600, 1)
		g, err := Trace(program, x, y)
		require.NoError(t, err)
		plain, err := g.Run(x, y)
		require.NoError(t, err)
		n, err := g.FuseElementwise(core.CPU)
		require.NoError(t, err)
		fusedAny += n
		fused, err := g.Run(x, y)
		require.NoError(t, err)
		a, _ := plain[0].Float64s()
		b, _ := fused[0].Float64s()
		require.Len(t, b, len(a))
		for i := range a {
			same := math.Float32bits(float32(a[i])) == math.Float32bits(float32(b[i])) || math.IsNaN(a[i]) && math.IsNaN(b[i])
			require.True(t, same, "seed %d element %d: %v fused, %v op by op\n%s", seed, i, b[i], a[i], g)
		}
	}
	assert.Greater(t, fusedAny, 40, "the programs had chains to fuse")
}

// gelu(x·w + b) over 4M f32 on the CPU, op by op and fused: the fused loop
// reads x and w once and writes once instead of three times each.
func BenchmarkCPUFusedChain(b *testing.B) {
	x, w := randnOn(core.CPU, 1, 2048, 2048), randnOn(core.CPU, 2, 2048, 2048)
	bias := randnOn(core.CPU, 3, 2048)
	chain := func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("gelu", nil, c1("add", nil, c1("mul", nil, in[0], in[1]), in[2]))}, nil
	}
	for _, fuse := range []bool{false, true} {
		name := map[bool]string{false: "ops", true: "fused"}[fuse]
		b.Run(name, func(b *testing.B) {
			g, err := Trace(chain, x, w, bias)
			require.NoError(b, err)
			if fuse {
				n, err := g.FuseElementwise(core.CPU)
				require.NoError(b, err)
				require.Equal(b, 3, n, "three ops in one fused node")
			}
			b.SetBytes(int64(3 * 4 * x.Numel())) // x and w read, the result written
			for b.Loop() {
				out, err := g.Run(x, w, bias)
				require.NoError(b, err)
				out[0].Release()
			}
		})
	}
}
