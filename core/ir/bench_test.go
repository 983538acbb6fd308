package ir

import (
	"testing"

	"github.com/webtensor/webtensor/core"
)

// tanh-GELU written out as 9 elementwise ops (as a model without a gelu op
// would compute it), over 1M f32 on WebGPU: eager (9 kernels, 8
// intermediate tensors) against the graph with the chain fused (1 kernel).
func geluByHand(x, k0, k1, half, one *core.Tensor) *core.Tensor {
	cube := c1("mul", nil, c1("mul", nil, x, x), x)
	inner := c1("mul", nil, k0, c1("add", nil, x, c1("mul", nil, k1, cube)))
	return c1("mul", nil, c1("mul", nil, half, x), c1("add", nil, one, c1("tanh", nil, inner)))
}

func benchGELU(b *testing.B, fuse bool) {
	dev := webgpuOrSkip(b)
	k := func(v float64) *core.Tensor { return core.Scalar(v, core.F32, dev) }
	k0, k1, half, one := k(0.7978845608), k(0.044715), k(0.5), k(1)
	x := c1("randn", core.Attrs{"shape": []int{1 << 20}, "device": dev.String()})
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{geluByHand(in[0], k0, k1, half, one)}, nil
	}
	g, err := Trace(fn, x)
	if err != nil {
		b.Fatal(err)
	}
	if fuse {
		if _, err := g.FuseElementwise(dev); err != nil {
			b.Fatal(err)
		}
	}
	run := func() {
		var out *core.Tensor
		if fuse {
			outs, err := g.Run(x)
			if err != nil {
				b.Fatal(err)
			}
			out = outs[0]
		} else {
			out = geluByHand(x, k0, k1, half, one)
		}
		if _, err := c1("sum", nil, out).Item(); err != nil { // wait for the GPU
			b.Fatal(err)
		}
	}
	run()
	b.ResetTimer()
	for range b.N {
		run()
	}
}

func BenchmarkGELUByHandEager(b *testing.B) { benchGELU(b, false) }
func BenchmarkGELUByHandFused(b *testing.B) { benchGELU(b, true) }
