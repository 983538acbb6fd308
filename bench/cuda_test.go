package bench

import (
	"testing"

	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The CUDA backend's cases, timed like PyTorch's in scripts/bench_cuda.py
// (issue targets: ratio = PyTorch time / webtensor time). Work is queued
// b.N times and the time runs until the device has finished all of it, so
// launch overhead counts as it does for a Python user, and no per-call
// synchronisation is added.

var cudaDev = core.Device{Kind: "cuda"}

func cudaBackend(b *testing.B) *cuda.Backend {
	be, err := core.BackendFor(cudaDev)
	if err != nil {
		b.Skipf("no CUDA device: %v", err)
	}
	return be.(*cuda.Backend)
}

// runQueued times b.N calls of fn on a queued device, releasing outputs.
func runQueued(b *testing.B, g *cuda.Backend, work float64, unit string, fn func() *core.Tensor) {
	b.Helper()
	for range 3 {
		out := fn()
		if err := out.Err(); err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	if err := g.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := fn()
		if err := out.Err(); err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	if err := g.Sync(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(work*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}

func cudaRandn(b *testing.B, dtype core.DType, shape ...int) *core.Tensor {
	t := core.Call1("randn", core.Attrs{"shape": shape, "seed": 1, "device": "cuda", "dtype": dtype})
	if err := t.Err(); err != nil {
		b.Fatal(err)
	}
	return t
}

func BenchmarkCUDAMatmul(b *testing.B) {
	g := cudaBackend(b)
	const n = 4096
	for _, dt := range []core.DType{core.F32, core.BF16} {
		b.Run(dt.String(), func(b *testing.B) {
			x, y := cudaRandn(b, dt, n, n), cudaRandn(b, dt, n, n)
			runQueued(b, g, 2*float64(n)*n*n/1e3, "TFLOP/s", func() *core.Tensor { return core.Call1("matmul", nil, x, y) })
		})
	}
}

func BenchmarkCUDAElementwise(b *testing.B) {
	g := cudaBackend(b)
	const n = 64 << 20
	x, y := cudaRandn(b, core.F32, n), cudaRandn(b, core.F32, n)
	b.Run("add", func(b *testing.B) {
		runQueued(b, g, 3*4*n, "GB/s", func() *core.Tensor { return core.Call1("add", nil, x, y) })
	})
	b.Run("gelu", func(b *testing.B) {
		runQueued(b, g, 2*4*n, "GB/s", func() *core.Tensor { return core.Call1("gelu", nil, x) })
	})
}

func BenchmarkCUDARows(b *testing.B) {
	g := cudaBackend(b)
	x := cudaRandn(b, core.F32, 8192, 4096)
	bytes := 2.0 * 4 * 8192 * 4096
	b.Run("softmax", func(b *testing.B) {
		runQueued(b, g, bytes, "GB/s", func() *core.Tensor { return core.Call1("softmax", core.Attrs{"axis": -1}, x) })
	})
	b.Run("layer_norm", func(b *testing.B) {
		runQueued(b, g, bytes, "GB/s", func() *core.Tensor {
			return core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{4096}}, x)
		})
	})
}

// BenchmarkCUDATrainStep is docs/perf.md's MLP step (784-512-512-10, batch
// 128, cross-entropy, Adam) on CUDA.
func BenchmarkCUDATrainStep(b *testing.B) {
	g := cudaBackend(b)
	step, flops := trainStep(b, cudaDev)
	runQueued(b, g, flops, "GFLOP/s", step)
}

// BenchmarkCUDATransformerStep is the transformer layer of docs/perf.md's
// Graph IR rows (d 64, 4 heads, GELU MLP 256, batch 8 x 32 tokens): the
// forward pass, sum and backward pass, in eval mode (no dropout).
func BenchmarkCUDATransformerStep(b *testing.B) {
	g := cudaBackend(b)
	core.ManualSeed(1)
	l, err := nn.NewTransformerEncoderLayer(64, 4, 256, nn.WithDevice(cudaDev), nn.WithBatchFirst(), nn.WithActivation("gelu"))
	if err != nil {
		b.Fatal(err)
	}
	l.Train(false)
	x := cudaRandn(b, core.F32, 8, 32, 64)
	params := l.Parameters()
	// Forward: 4 projections of 64x64 and two MLP products per token, and
	// the attention products; backward twice that.
	tokens := 8.0 * 32
	flops := 3 * 2 * (tokens*(4*64*64+2*64*256) + 2*8*32*32*64)
	runQueued(b, g, flops, "GFLOP/s", func() *core.Tensor {
		for _, p := range params {
			p.ZeroGrad()
		}
		loss := core.Call1("sum", nil, l.Forward(x))
		if err := loss.Backward(); err != nil {
			b.Fatal(err)
		}
		return loss
	})
}
