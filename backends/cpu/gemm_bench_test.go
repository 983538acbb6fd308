package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// f32 matmul through the registry (dispatch and output allocation included),
// reported in GFLOP/s so it reads against the anchors in DESIGN.md.
func benchmarkMatmul(b *testing.B, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	x, y := rlRandF32(rng, n, n), rlRandF32(rng, n, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := core.Call1("matmul", nil, x, y)
		if err := out.Err(); err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkMatmul256(b *testing.B)  { benchmarkMatmul(b, 256) }
func BenchmarkMatmul512(b *testing.B)  { benchmarkMatmul(b, 512) }
func BenchmarkMatmul1024(b *testing.B) { benchmarkMatmul(b, 1024) }

// One thread: the micro-kernel's speed without the split across cores.
func BenchmarkMatmulOneThread(b *testing.B) {
	defer cpu.SetNumThreadsForTest(1)()
	benchmarkMatmul(b, 1024)
}
