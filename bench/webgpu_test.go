package bench

import (
	"flag"
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

var gpuDev = webgputest.Device

// gpuBackend skips the WebGPU benchmarks when no adapter exists, and fails
// them when one exists but the backend does not open.
func gpuBackend(b *testing.B) *webgpu.Backend {
	b.Helper()
	return webgputest.Need(b)
}

// runGPU is run with a device sync per call, so the time is the GPU's, not
// the time to queue the work.
func runGPU(b *testing.B, g *webgpu.Backend, work float64, unit string, fn func() (*core.Tensor, error)) {
	b.Helper()
	step := func() {
		out, err := fn()
		if err == nil {
			err = out.Err()
		}
		if err == nil {
			err = g.Sync()
		}
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	step()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.ReportMetric(work*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}

// matmul4096 times only the tuned 4096 product (the GPU device check's
// comparison with the CUDA backend; far too slow for a software driver).
var matmul4096 = flag.Bool("matmul4096", false, "BenchmarkWebGPUMatmul: only the tuned 4096 x 4096 product")

func BenchmarkWebGPUMatmul(b *testing.B) {
	g := gpuBackend(b)
	sizes := []int{256, 512, 1024, 2048}
	if *matmul4096 {
		sizes = []int{4096}
	}
	for _, n := range sizes {
		x, y := randn(b, n, n).To(gpuDev), randn(b, n, n).To(gpuDev)
		for _, v := range []string{"tuned", "regblock16", "regblock4", "regblock", "tiled"} {
			if (n == 2048 && v != "tuned" && v != "regblock16") || (n == 4096 && v != "tuned") {
				continue // the slow variants take minutes at 2048 on a software driver
			}
			b.Run(fmt.Sprintf("%s/%d", v, n), func(b *testing.B) {
				runGPU(b, g, 2*float64(n*n*n), "GFLOP/s", func() (*core.Tensor, error) {
					if v == "tuned" {
						return core.Call1("matmul", nil, x, y), nil
					}
					return g.MatmulVariant(x, y, v)
				})
			})
		}
	}
}

func BenchmarkWebGPUSoftmax(b *testing.B) {
	g := gpuBackend(b)
	x := randn(b, 4096, 1024).To(gpuDev)
	runGPU(b, g, 2.0*4*4096*1024, "GB/s", func() (*core.Tensor, error) {
		return core.Call1("softmax", core.Attrs{"axis": -1}, x), nil
	})
}

func BenchmarkWebGPULayerNorm(b *testing.B) {
	g := gpuBackend(b)
	x := randn(b, 4096, 1024).To(gpuDev)
	runGPU(b, g, 2.0*4*4096*1024, "GB/s", func() (*core.Tensor, error) {
		return core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{1024}}, x), nil
	})
}

func BenchmarkWebGPUAdd(b *testing.B) {
	g := gpuBackend(b)
	x, y := randn(b, 1<<22).To(gpuDev), randn(b, 1<<22).To(gpuDev)
	runGPU(b, g, 3.0*4*(1<<22), "GB/s", func() (*core.Tensor, error) { return x.Add(y), nil })
}

func BenchmarkWebGPUConv2d(b *testing.B) {
	g := gpuBackend(b)
	x, w := randn(b, 8, 64, 32, 32).To(gpuDev), randn(b, 64, 64, 3, 3).To(gpuDev)
	flops := 2.0 * 8 * 64 * 32 * 32 * 64 * 9
	runGPU(b, g, flops, "GFLOP/s", func() (*core.Tensor, error) {
		return core.Call1("conv2d", core.Attrs{"padding": []int{1, 1}}, x, w), nil
	})
}

func BenchmarkWebGPUSum(b *testing.B) {
	g := gpuBackend(b)
	x := randn(b, 4096, 1024).To(gpuDev)
	runGPU(b, g, 4.0*4096*1024, "GB/s", func() (*core.Tensor, error) {
		return core.Call1("sum", core.Attrs{"axes": []int{-1}}, x), nil
	})
}

func BenchmarkWebGPUTrainStep(b *testing.B) {
	g := gpuBackend(b)
	step, flops := trainStep(b, gpuDev)
	runGPU(b, g, flops, "GFLOP/s", func() (*core.Tensor, error) { return step(), nil })
}
