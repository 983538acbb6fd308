package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// Reductions and row kernels through the registry, in GB/s of the bytes
// the op must read and write, beside PyTorch's rates in issue 27. Run with
//
//	go test ./backends/cpu -run '^$' -bench 'Reduce|Rows' -benchtime 20x
//
// and WEBTENSOR_NUM_THREADS to vary the threads.

const (
	rdRows = 4096
	rdCols = 1024
	rdN    = rdRows * rdCols
)

// rdBench calls op and releases every output, each iteration.
func rdBench(b *testing.B, bytes int64, op string, attrs core.Attrs, in ...*core.Tensor) {
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		outs, err := core.Call(op, in, attrs)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if o != nil {
				o.Release()
			}
		}
	}
}

func rdMatrix(d core.DType) *core.Tensor { return ewBenchInput(rdN, d, rdRows, rdCols) }

func benchReduceLast(b *testing.B, op string, d core.DType) {
	x := rdMatrix(d)
	rdBench(b, int64(rdN*d.Size()), op, core.Attrs{"axes": []int{-1}}, x)
}

func BenchmarkReduceSumLastF32(b *testing.B) { benchReduceLast(b, "sum", core.F32) }
func BenchmarkReduceSumLastF16(b *testing.B) { benchReduceLast(b, "sum", core.F16) }
func BenchmarkReduceSumLastF64(b *testing.B) { benchReduceLast(b, "sum", core.F64) }
func BenchmarkReduceSumLastI32(b *testing.B) { benchReduceLast(b, "sum", core.I32) }
func BenchmarkReduceMeanLastF32(b *testing.B) {
	benchReduceLast(b, "mean", core.F32)
}
func BenchmarkReduceVarLastF32(b *testing.B)    { benchReduceLast(b, "var", core.F32) }
func BenchmarkReduceMaxLastF32(b *testing.B)    { benchReduceLast(b, "max", core.F32) }
func BenchmarkReduceLogsumexpF32(b *testing.B)  { benchReduceLast(b, "logsumexp", core.F32) }
func BenchmarkReduceNormLastF32(b *testing.B)   { benchReduceLast(b, "norm", core.F32) }
func BenchmarkReduceProdLastF32(b *testing.B)   { benchReduceLast(b, "prod", core.F32) }
func BenchmarkReduceAnyLastF32(b *testing.B)    { benchReduceLast(b, "any", core.F32) }
func BenchmarkReduceArgmaxLastF32(b *testing.B) { benchArg(b, -1) }

func BenchmarkReduceSumAxis0F32(b *testing.B) {
	x := rdMatrix(core.F32)
	rdBench(b, 4*rdN, "sum", core.Attrs{"axes": []int{0}}, x)
}

func BenchmarkReduceVarAxis0F32(b *testing.B) {
	x := rdMatrix(core.F32)
	rdBench(b, 4*rdN, "var", core.Attrs{"axes": []int{0}}, x)
}

func BenchmarkReduceSumAllF32(b *testing.B) {
	x := rdMatrix(core.F32)
	rdBench(b, 4*rdN, "sum", nil, x)
}

// The middle axis of [64, 64, 1024].
func BenchmarkReduceSumMiddleF32(b *testing.B) {
	x := ewBenchInput(rdN, core.F32, 64, 64, 1024)
	rdBench(b, 4*rdN, "sum", core.Attrs{"axes": []int{1}}, x)
}

func BenchmarkReduceArgmaxAxis0F32(b *testing.B) { benchArg(b, 0) }

func benchArg(b *testing.B, axis int) {
	x := rdMatrix(core.F32)
	rdBench(b, 4*rdN, "argmax", core.Attrs{"axis": axis}, x)
}

func BenchmarkRowsSoftmaxF32(b *testing.B) {
	x := rdMatrix(core.F32)
	rdBench(b, 8*rdN, "softmax", core.Attrs{"axis": -1}, x)
}

func BenchmarkRowsLogSoftmaxF32(b *testing.B) {
	x := rdMatrix(core.F32)
	rdBench(b, 8*rdN, "log_softmax", core.Attrs{"axis": -1}, x)
}

func BenchmarkRowsSoftmaxBackwardF32(b *testing.B) {
	x := rdMatrix(core.F32)
	y, g := core.Call1("softmax", core.Attrs{"axis": -1}, x), ewBenchInputSeed(rdN, 5, core.F32, rdRows, rdCols)
	rdBench(b, 12*rdN, "_softmax_backward", core.Attrs{"axis": -1}, y, g)
}

func BenchmarkRowsLayerNormF32(b *testing.B) {
	x, w, bias := rdMatrix(core.F32), ewBenchInput(rdCols, core.F32), ewBenchInputSeed(rdCols, 6, core.F32)
	rdBench(b, 8*rdN, "layer_norm", core.Attrs{"normalized_shape": []int{rdCols}}, x, w, bias)
}

func BenchmarkRowsLayerNormBackwardF32(b *testing.B) {
	x, w := rdMatrix(core.F32), ewBenchInput(rdCols, core.F32)
	g := ewBenchInputSeed(rdN, 5, core.F32, rdRows, rdCols)
	rdBench(b, 12*rdN, "_layer_norm_backward", core.Attrs{"normalized_shape": []int{rdCols}}, x, g, w)
}

func BenchmarkRowsRMSNormF32(b *testing.B) {
	x, w := rdMatrix(core.F32), ewBenchInput(rdCols, core.F32)
	rdBench(b, 8*rdN, "rms_norm", core.Attrs{"normalized_shape": []int{rdCols}}, x, w)
}

// batch_norm in training over [32, 64, 32, 32].
func BenchmarkRowsBatchNormF32(b *testing.B) {
	x := ewBenchInput(rdN/2, core.F32, 32, 64, 32, 32)
	w, bias := ewBenchInput(64, core.F32), ewBenchInputSeed(64, 6, core.F32)
	rdBench(b, 4*rdN, "batch_norm", core.Attrs{"training": true}, x, nil, nil, w, bias)
}

func BenchmarkRowsGroupNormF32(b *testing.B) {
	x := ewBenchInput(rdN/2, core.F32, 32, 64, 32, 32)
	w, bias := ewBenchInput(64, core.F32), ewBenchInputSeed(64, 6, core.F32)
	rdBench(b, 4*rdN, "group_norm", core.Attrs{"num_groups": 8}, x, w, bias)
}

func ceInputs(n, c int) (x, y *core.Tensor) {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	labels := make([]int64, n)
	for i := range labels {
		labels[i] = int64(rng.IntN(c))
	}
	return ewBenchInput(n*c, core.F32, n, c), core.FromSlice(labels, core.Shape{n})
}

func benchCE(b *testing.B, n, c int, backward bool) {
	x, y := ceInputs(n, c)
	if !backward {
		rdBench(b, int64(4*n*c), "cross_entropy", nil, x, y)
		return
	}
	rdBench(b, int64(8*n*c), "_cross_entropy_backward", nil, x, y, core.Scalar(1, core.F32), nil)
}

func BenchmarkRowsCrossEntropy128x10F32(b *testing.B)    { benchCE(b, 128, 10, false) }
func BenchmarkRowsCrossEntropy4096x1000F32(b *testing.B) { benchCE(b, 4096, 1000, false) }
func BenchmarkRowsCrossEntropyBackward128x10F32(b *testing.B) {
	benchCE(b, 128, 10, true)
}
func BenchmarkRowsCrossEntropyBackward4096x1000F32(b *testing.B) {
	benchCE(b, 4096, 1000, true)
}
