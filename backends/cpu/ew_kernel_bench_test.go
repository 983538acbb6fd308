package cpu

import (
	"math/rand/v2"
	"testing"
)

// The elementwise kernels alone, into a preallocated output, split over
// the pool as the ops split them: the ops' benchmarks
// (elementwise_bench_test.go) less dispatch and the output's allocation.

func benchKernelInputs(n int) (a, b, dst []float32) {
	rng := rand.New(rand.NewPCG(1, 1))
	a, b, dst = make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	return a, b, dst
}

func BenchmarkKernelAddF32(b *testing.B) {
	x, y, dst := benchKernelInputs(ewBenchN)
	b.SetBytes(12 * ewBenchN)
	for range b.N {
		parallelFor(ewBenchN, 1, func(lo, hi int) { binF32(binAdd, dst[lo:hi], x[lo:hi], y[lo:hi]) })
	}
}

func BenchmarkKernelExpF32(b *testing.B)     { benchKernelUnary(b, unExp) }
func BenchmarkKernelTanhF32(b *testing.B)    { benchKernelUnary(b, unTanh) }
func BenchmarkKernelSigmoidF32(b *testing.B) { benchKernelUnary(b, unSigmoid) }
func BenchmarkKernelGeluF32(b *testing.B)    { benchKernelUnary(b, unGelu) }

func benchKernelUnary(b *testing.B, op ewUn) {
	x, _, dst := benchKernelInputs(ewBenchN)
	b.SetBytes(8 * ewBenchN)
	for range b.N {
		parallelFor(ewBenchN, 8, func(lo, hi int) { unF32(op, dst[lo:hi], x[lo:hi]) })
	}
}

const ewBenchN = 4 << 20
