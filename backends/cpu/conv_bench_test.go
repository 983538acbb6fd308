package cpu_test

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// A ResNet-style 3x3 layer: N=8, 64 -> 64 channels, 32x32, padding 1.
const cpBatch, cpChannels, cpSize, cpKernel = 8, 64, 32, 3

// cpConvFlops counts multiply-adds twice, as GEMM benchmarks do.
const cpConvFlops = 2.0 * cpBatch * cpChannels * cpSize * cpSize * cpChannels * cpKernel * cpKernel

func cpReportGFlops(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkConv2d(b *testing.B) {
	x := cpRand(core.F32, cpBatch, cpChannels, cpSize, cpSize)
	w := cpRand(core.F32, cpChannels, cpChannels, cpKernel, cpKernel)
	a := core.Attrs{"padding": 1}
	b.ResetTimer()
	for b.Loop() {
		if y := core.Call1("conv2d", a, x, w); y.Err() != nil {
			b.Fatal(y.Err())
		}
	}
	cpReportGFlops(b, cpConvFlops)
}

// BenchmarkConv2dPaths times the 3x3 layers of a UNet's levels on the
// Winograd path and on the direct one (packed unfolding), the comparison
// that sets winogradFits' thresholds (the 8x8 level is below them: both
// of its cases run the direct path).
func BenchmarkConv2dPaths(b *testing.B) {
	for _, s := range [][4]int{{8, 64, 32, 32}, {1, 64, 64, 64}, {1, 128, 32, 32}, {1, 128, 16, 16}, {1, 128, 8, 8}} {
		for _, path := range []string{"winograd", "direct"} {
			b.Run(fmt.Sprintf("%s/%dx%dx%dx%d", path, s[0], s[1], s[2], s[3]), func(b *testing.B) {
				defer cpu.SetWinogradForTest(path == "winograd")()
				x, w := cpRand(core.F32, s[:]...), cpRand(core.F32, s[1], s[1], 3, 3)
				a := core.Attrs{"padding": 1}
				for b.Loop() {
					if y := core.Call1("conv2d", a, x, w); y.Err() != nil {
						b.Fatal(y.Err())
					}
				}
				cpReportGFlops(b, 2.0*float64(s[0]*s[1]*s[2]*s[3]*s[1]*9))
			})
		}
	}
}

// BenchmarkConv2dBackward times both gradients of the layer: the input's
// (conv_transpose2d) and the weight's (_conv2d_weight_grad).
func BenchmarkConv2dBackward(b *testing.B) {
	x := cpRand(core.F32, cpBatch, cpChannels, cpSize, cpSize)
	w := cpRand(core.F32, cpChannels, cpChannels, cpKernel, cpKernel)
	gy := cpRand(core.F32, cpBatch, cpChannels, cpSize, cpSize)
	b.ResetTimer()
	for b.Loop() {
		dx := core.Call1("conv_transpose2d", core.Attrs{"padding": 1}, gy, w)
		dw := core.Call1("_conv2d_weight_grad", core.Attrs{"padding": 1, "kernel_size": cpKernel}, x, gy)
		if dx.Err() != nil || dw.Err() != nil {
			b.Fatal(dx.Err(), dw.Err())
		}
	}
	cpReportGFlops(b, 2*cpConvFlops)
}

// BenchmarkConv2dForwardBackward is one training step of the layer: the
// forward and both gradient products, the work PyTorch's conv2d forward
// plus backward does for an input and a weight that require grad.
func BenchmarkConv2dForwardBackward(b *testing.B) {
	x := cpRand(core.F32, cpBatch, cpChannels, cpSize, cpSize)
	w := cpRand(core.F32, cpChannels, cpChannels, cpKernel, cpKernel)
	gy := cpRand(core.F32, cpBatch, cpChannels, cpSize, cpSize)
	b.ResetTimer()
	for b.Loop() {
		y := core.Call1("conv2d", core.Attrs{"padding": 1}, x, w)
		dx := core.Call1("conv_transpose2d", core.Attrs{"padding": 1}, gy, w)
		dw := core.Call1("_conv2d_weight_grad", core.Attrs{"padding": 1, "kernel_size": cpKernel}, x, gy)
		if y.Err() != nil || dx.Err() != nil || dw.Err() != nil {
			b.Fatal(y.Err(), dx.Err(), dw.Err())
		}
	}
	cpReportGFlops(b, 3*cpConvFlops)
}

// BenchmarkMaxPool2d is a 2x2, stride 2 max pooling of the layer's output.
func BenchmarkMaxPool2d(b *testing.B) {
	x := cpRand(core.F32, cpBatch, cpChannels, cpSize, cpSize)
	b.ResetTimer()
	for b.Loop() {
		if y := core.Call1("max_pool2d", core.Attrs{"kernel_size": 2}, x); y.Err() != nil {
			b.Fatal(y.Err())
		}
	}
	b.ReportMetric(4*cpBatch*cpChannels*cpSize*cpSize*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
