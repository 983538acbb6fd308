package cpu_test

import (
	"fmt"
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

// Transformer-shaped products (m tokens x k features times k x n weights):
// ViT-B/16 at batch 1 (197 tokens) and 4, and TimeSformer's 393 tokens of
// 384, at one thread and at every thread, so that the ratio of the two says
// how well the split across cores holds up when m is a few row blocks;
// and MiniLM's at the ONNX benchmark's 8 x 128 tokens.
func BenchmarkMatmulTokens(b *testing.B) {
	shapes := []struct{ m, k, n int }{
		{197, 768, 768}, {197, 768, 3072}, {197, 3072, 768},
		{788, 768, 768}, {393, 384, 1536}, {393, 1536, 384},
		{1024, 384, 384}, {1024, 384, 1536}, {1024, 1536, 384},
	}
	for _, s := range shapes {
		for _, threads := range []int{1, 0} {
			name := fmt.Sprintf("m%d_k%d_n%d/threads%d", s.m, s.k, s.n, threads)
			if threads == 0 {
				name = fmt.Sprintf("m%d_k%d_n%d/threadsAll", s.m, s.k, s.n)
			}
			b.Run(name, func(b *testing.B) {
				if threads > 0 {
					defer cpu.SetNumThreadsForTest(threads)()
				}
				rng := rand.New(rand.NewPCG(uint64(s.m), 7))
				x, w := rlRandF32(rng, s.m, s.k), rlRandF32(rng, s.k, s.n)
				for b.Loop() {
					out := core.Call1("matmul", nil, x, w)
					if err := out.Err(); err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
				b.ReportMetric(2*float64(s.m*s.k*s.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
