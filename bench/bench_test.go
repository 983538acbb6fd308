package bench

import (
	"fmt"
	"testing"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

func randn(b *testing.B, shape ...int) *core.Tensor {
	t := core.Call1("randn", core.Attrs{"shape": shape, "seed": 1})
	if err := t.Err(); err != nil {
		b.Fatal(err)
	}
	return t
}

// run times fn and reports its rate; work is flops (or bytes) per call.
// Each output is released before the next call, as the peers' are (a
// Python tensor is freed when its last reference goes): an output left to
// the garbage collector is fresh memory for every call, and its page
// faults would be timed as the op's.
func run(b *testing.B, work float64, unit string, fn func() *core.Tensor) {
	b.Helper()
	if out := fn(); out.Err() != nil {
		b.Fatal(out.Err())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := fn()
		if out.Err() != nil {
			b.Fatal(out.Err())
		}
		out.Release()
	}
	b.ReportMetric(work*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}

func BenchmarkMatmul(b *testing.B) {
	for _, n := range []int{256, 512, 1024, 2048} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x, y := randn(b, n, n), randn(b, n, n)
			run(b, 2*float64(n*n*n), "GFLOP/s", func() *core.Tensor { return core.Call1("matmul", nil, x, y) })
		})
	}
}

func BenchmarkConv2d(b *testing.B) {
	// ResNet-style 3x3 layer: batch 8, 64 -> 64 channels, 32x32, padding 1.
	x, w := randn(b, 8, 64, 32, 32), randn(b, 64, 64, 3, 3)
	flops := 2.0 * 8 * 64 * 32 * 32 * 64 * 9
	run(b, flops, "GFLOP/s", func() *core.Tensor {
		return core.Call1("conv2d", core.Attrs{"padding": []int{1, 1}}, x, w)
	})
}

func BenchmarkSoftmax(b *testing.B) {
	x := randn(b, 4096, 1024)
	bytes := 2.0 * 4 * 4096 * 1024 // read and write once
	run(b, bytes, "GB/s", func() *core.Tensor { return core.Call1("softmax", core.Attrs{"axis": -1}, x) })
}

func BenchmarkLayerNorm(b *testing.B) {
	x := randn(b, 4096, 1024)
	bytes := 2.0 * 4 * 4096 * 1024
	run(b, bytes, "GB/s", func() *core.Tensor {
		return core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{1024}}, x)
	})
}

// BenchmarkTrainStep is one step of an MLP (784-512-512-10, batch 128):
// forward, cross-entropy, backward and an Adam update.
func BenchmarkTrainStep(b *testing.B) {
	step, flops := trainStep(b, core.CPU)
	run(b, flops, "GFLOP/s", step)
}

// BenchmarkSum reduces the last axis of a 4096x1024 tensor (GB/s read).
func BenchmarkSum(b *testing.B) {
	x := randn(b, 4096, 1024)
	run(b, 4.0*4096*1024, "GB/s", func() *core.Tensor { return core.Call1("sum", core.Attrs{"axes": []int{-1}}, x) })
}

// trainStep builds the MLP on dev and returns one training step and its
// flops (forward plus the two backward matmuls per layer).
func trainStep(b *testing.B, dev core.Device) (func() *core.Tensor, float64) {
	core.ManualSeed(1)
	if err := core.SetDefaultDevice(dev); err != nil {
		b.Skip(err)
	}
	defer func() { _ = core.SetDefaultDevice(core.CPU) }()
	l1, err := nn.NewLinear(784, 512)
	if err != nil {
		b.Fatal(err)
	}
	l2, _ := nn.NewLinear(512, 512)
	l3, _ := nn.NewLinear(512, 10)
	model, err := nn.NewSequential(l1, &nn.ReLU{}, l2, &nn.ReLU{}, l3)
	if err != nil {
		b.Fatal(err)
	}
	opt, err := nn.NewAdam(model.Parameters(), nn.DefaultAdam())
	if err != nil {
		b.Fatal(err)
	}
	x := randn(b, 128, 784).To(dev)
	y := core.Call1("randint", core.Attrs{"shape": []int{128}, "low": 0, "high": 10, "seed": 2}).To(dev)
	flops := 3 * 2.0 * 128 * (784*512 + 512*512 + 512*10)
	return func() *core.Tensor {
		opt.ZeroGrad()
		loss := core.Call1("cross_entropy", nil, model.Forward(x), y)
		if err := loss.Backward(); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		return loss
	}, flops
}
