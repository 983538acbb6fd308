package bench

import (
	"testing"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The CPU cases of issue 27 beside bench_test.go's: elementwise ops, a full
// sum, forward+backward of softmax, layer_norm and conv2d, and a transformer
// encoder layer's training step. scripts/bench.py times the same work in
// NumPy and PyTorch with the thread count these report (BenchmarkCPUThreads)
// and counts work the same way (its WORK table).

const ewN = 4 << 20 // 4M f32 elements

// runFree times b.N calls of fn after one warm-up call. fn does the work and
// releases what it made, so the caching allocator reuses the storage as
// PyTorch's does when a result's last reference goes.
func runFree(b *testing.B, work float64, unit string, fn func() error) {
	b.Helper()
	if err := fn(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := fn(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(work*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}

// callFree runs one op and releases its output.
func callFree(op string, attrs core.Attrs, in ...*core.Tensor) func() error {
	return func() error {
		out := core.Call1(op, attrs, in...)
		if err := out.Err(); err != nil {
			return err
		}
		out.Release()
		return nil
	}
}

// backwardFree runs forward, then its backward with the upstream gradient
// g, and releases the output and the leaves' gradients (so none
// accumulates: PyTorch's side sets .grad to None).
func backwardFree(forward func() *core.Tensor, g *core.Tensor, leaves ...*core.Tensor) func() error {
	return func() error {
		out := forward()
		if err := out.Err(); err != nil {
			return err
		}
		if err := out.Backward(g); err != nil {
			return err
		}
		out.Release()
		for _, l := range leaves {
			l.Grad().Release()
			l.ZeroGrad()
		}
		return nil
	}
}

// BenchmarkCPUThreads reports the number of threads the CPU backend's
// kernels use in this binary (cpu.NumThreads), for the report to match.
func BenchmarkCPUThreads(b *testing.B) {
	for range b.N {
		_ = cpu.NumThreads()
	}
	b.ReportMetric(float64(cpu.NumThreads()), "threads")
}

// BenchmarkElementwise: 4M f32 elements; GB/s counts every operand read
// and the output written once.
func BenchmarkElementwise(b *testing.B) {
	x, y := randn(b, ewN), core.Call1("randn", core.Attrs{"shape": []int{ewN}, "seed": 2})
	for _, op := range []string{"add", "mul"} {
		b.Run(op, func(b *testing.B) { runFree(b, 3*4*ewN, "GB/s", callFree(op, nil, x, y)) })
	}
	for _, op := range []string{"exp", "tanh", "gelu"} {
		b.Run(op, func(b *testing.B) { runFree(b, 2*4*ewN, "GB/s", callFree(op, nil, x)) })
	}
}

// BenchmarkSumAll reduces every element of a 4096x1024 tensor (GB/s read).
func BenchmarkSumAll(b *testing.B) {
	x := randn(b, 4096, 1024)
	runFree(b, 4.0*4096*1024, "GB/s", callFree("sum", nil, x))
}

// rowsFwdBwd times op over the last axis of a 4096x1024 tensor, forward and
// backward with a random upstream gradient. GB/s counts five passes over
// the tensor: the forward reads x and writes y, the backward reads two
// (y or x, and dy) and writes dx.
func rowsFwdBwd(b *testing.B, op string, attrs core.Attrs) {
	x := randn(b, 4096, 1024).SetRequiresGrad(true)
	g := core.Call1("randn", core.Attrs{"shape": []int{4096, 1024}, "seed": 2})
	runFree(b, 5.0*4*4096*1024, "GB/s", backwardFree(func() *core.Tensor { return core.Call1(op, attrs, x) }, g, x))
}

func BenchmarkSoftmaxFwdBwd(b *testing.B) { rowsFwdBwd(b, "softmax", core.Attrs{"axis": -1}) }

func BenchmarkLayerNormFwdBwd(b *testing.B) {
	rowsFwdBwd(b, "layer_norm", core.Attrs{"normalized_shape": []int{1024}})
}

// BenchmarkConv2dFwdBwd is BenchmarkConv2d's layer forward, then the
// gradients of both the input and the filters: three times the forward's
// flops.
func BenchmarkConv2dFwdBwd(b *testing.B) {
	x := randn(b, 8, 64, 32, 32).SetRequiresGrad(true)
	w := core.Call1("randn", core.Attrs{"shape": []int{64, 64, 3, 3}, "seed": 2}).SetRequiresGrad(true)
	g := core.Call1("randn", core.Attrs{"shape": []int{8, 64, 32, 32}, "seed": 3})
	flops := 3 * 2.0 * 8 * 64 * 32 * 32 * 64 * 9
	runFree(b, flops, "GFLOP/s", backwardFree(func() *core.Tensor {
		return core.Call1("conv2d", core.Attrs{"padding": []int{1, 1}}, x, w)
	}, g, x, w))
}

// Transformer encoder layer of the training-step case: d_model 256, 4
// heads, feed-forward 1024 (ReLU, post-norm: torch's defaults), batch 8 x
// sequence 128, batch first, dropout 0 (so no random masks on either side).
const (
	tfD, tfHeads, tfFF, tfBatch, tfSeq = 256, 4, 1024, 8, 128
)

// transformerFlops is one training step's flops: the forward's products
// (q, k, v and output projections and the two feed-forward layers per
// token, q·kᵀ and the weighted sum of v per head) times three for the
// backward's two products per forward one. Elementwise work, softmax,
// layer norms and Adam are not counted (scripts/bench.py uses the same).
func transformerFlops() float64 {
	tokens := float64(tfBatch * tfSeq)
	forward := 2*tokens*(4*tfD*tfD+2*tfD*tfFF) + 2*2*float64(tfBatch*tfSeq*tfSeq*tfD)
	return 3 * forward
}

// BenchmarkTransformerStep is one training step of the encoder layer:
// forward, mean squared error against a fixed target, backward and Adam.
func BenchmarkTransformerStep(b *testing.B) {
	core.ManualSeed(1)
	l, err := nn.NewTransformerEncoderLayer(tfD, tfHeads, tfFF, nn.WithBatchFirst(), nn.WithDropout(0))
	if err != nil {
		b.Fatal(err)
	}
	opt, err := nn.NewAdam(l.Parameters(), nn.DefaultAdam())
	if err != nil {
		b.Fatal(err)
	}
	x := randn(b, tfBatch, tfSeq, tfD)
	target := core.Call1("randn", core.Attrs{"shape": []int{tfBatch, tfSeq, tfD}, "seed": 2})
	run(b, transformerFlops(), "GFLOP/s", func() *core.Tensor {
		opt.ZeroGrad()
		loss := core.Call1("mse_loss", nil, l.Forward(x), target)
		if err := loss.Backward(); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		return loss
	})
}
