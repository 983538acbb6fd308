package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// Elementwise ops through the registry (dispatch and output allocation
// included, as a user sees them), in GB/s of bytes read and written so
// they read against PyTorch's rates in issue 27. Run with
//
//	go test ./backends/cpu -run '^$' -bench 'Elementwise' -benchtime 20x
//
// and WEBTENSOR_NUM_THREADS (or -cpu) to vary the threads.

const ewBenchN = 4 << 20 // 4M elements, PyTorch's comparison size

func ewBenchInput(n int, d core.DType, shape ...int) *core.Tensor {
	return ewBenchInputSeed(n, 3, d, shape...)
}

func ewBenchInputSeed(n int, seed uint64, d core.DType, shape ...int) *core.Tensor {
	rng := rand.New(rand.NewPCG(uint64(n), seed))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	if len(shape) == 0 {
		shape = []int{n}
	}
	t := core.FromSlice(v, core.Shape(shape))
	if d != core.F32 {
		t = core.Call1("cast", core.Attrs{"dtype": d}, t)
	}
	return t
}

func ewBench(b *testing.B, bytes int64, op string, attrs core.Attrs, in ...*core.Tensor) {
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out := core.Call1(op, attrs, in...)
		if err := out.Err(); err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
}

func benchUnary(b *testing.B, op string, attrs core.Attrs, d core.DType) {
	x := ewBenchInput(ewBenchN, d)
	ewBench(b, int64(2*ewBenchN*d.Size()), op, attrs, x)
}

func BenchmarkElementwiseAddF32(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.F32), ewBenchInputSeed(ewBenchN, 4, core.F32)
	ewBench(b, 3*4*ewBenchN, "add", nil, x, y)
}

func BenchmarkElementwiseMulF32(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.F32), ewBenchInputSeed(ewBenchN, 4, core.F32)
	ewBench(b, 3*4*ewBenchN, "mul", nil, x, y)
}

func BenchmarkElementwiseAddF16(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.F16), ewBenchInputSeed(ewBenchN, 4, core.F16)
	ewBench(b, 3*2*ewBenchN, "add", nil, x, y)
}

func BenchmarkElementwiseAddBF16(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.BF16), ewBenchInputSeed(ewBenchN, 4, core.BF16)
	ewBench(b, 3*2*ewBenchN, "add", nil, x, y)
}

func BenchmarkElementwiseAddI32(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.I32), ewBenchInputSeed(ewBenchN, 4, core.I32)
	ewBench(b, 3*4*ewBenchN, "add", nil, x, y)
}

// A bias added to every row: [4096, 1024] + [1024].
func BenchmarkElementwiseAddRowBroadcastF32(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.F32, 4096, 1024), ewBenchInput(1024, core.F32)
	ewBench(b, 2*4*ewBenchN, "add", nil, x, y)
}

// A scalar operand: x * 0.5.
func BenchmarkElementwiseMulScalarF32(b *testing.B) {
	x := ewBenchInput(ewBenchN, core.F32)
	ewBench(b, 2*4*ewBenchN, "mul", nil, x, core.Scalar(0.5, core.F32))
}

func BenchmarkElementwiseExpF32(b *testing.B)     { benchUnary(b, "exp", nil, core.F32) }
func BenchmarkElementwiseLogF32(b *testing.B)     { benchUnary(b, "log", nil, core.F32) }
func BenchmarkElementwiseTanhF32(b *testing.B)    { benchUnary(b, "tanh", nil, core.F32) }
func BenchmarkElementwiseSigmoidF32(b *testing.B) { benchUnary(b, "sigmoid", nil, core.F32) }
func BenchmarkElementwiseGeluF32(b *testing.B)    { benchUnary(b, "gelu", nil, core.F32) }
func BenchmarkElementwiseGeluTanhF32(b *testing.B) {
	benchUnary(b, "gelu", core.Attrs{"approximate": "tanh"}, core.F32)
}
func BenchmarkElementwiseErfF32(b *testing.B)  { benchUnary(b, "erf", nil, core.F32) }
func BenchmarkElementwiseSinF32(b *testing.B)  { benchUnary(b, "sin", nil, core.F32) }
func BenchmarkElementwiseReluF32(b *testing.B) { benchUnary(b, "relu", nil, core.F32) }
func BenchmarkElementwiseExpF16(b *testing.B)  { benchUnary(b, "exp", nil, core.F16) }

// Comparisons write one byte per element.
func BenchmarkElementwiseGtF32(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.F32), ewBenchInputSeed(ewBenchN, 4, core.F32)
	ewBench(b, 9*ewBenchN, "gt", nil, x, y)
}

func BenchmarkElementwiseWhereF32(b *testing.B) {
	x, y := ewBenchInput(ewBenchN, core.F32), ewBenchInputSeed(ewBenchN, 4, core.F32)
	c := core.Call1("gt", nil, x, y)
	ewBench(b, 13*ewBenchN, "where", nil, c, x, y)
}

func BenchmarkElementwiseCastF32ToF16(b *testing.B) {
	benchCast(b, core.F32, core.F16)
}

func BenchmarkElementwiseCastF16ToF32(b *testing.B) {
	benchCast(b, core.F16, core.F32)
}

func BenchmarkElementwiseCastF32ToBF16(b *testing.B) {
	benchCast(b, core.F32, core.BF16)
}

func BenchmarkElementwiseCastF32ToI32(b *testing.B) {
	benchCast(b, core.F32, core.I32)
}

func benchCast(b *testing.B, from, to core.DType) {
	x := ewBenchInput(ewBenchN, from)
	ewBench(b, int64(ewBenchN*(from.Size()+to.Size())), "cast", core.Attrs{"dtype": to}, x)
}
