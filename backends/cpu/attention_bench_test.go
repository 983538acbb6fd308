package cpu_test

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// Attention forward at the shapes diffusion UNets and encoders run:
// 1024 latent positions with head dims 8, 16 and 64, and a 128-token
// sequence with head dim 64.
//
//	go test -run '^$' -bench AttentionF32Forward ./backends/cpu/
func BenchmarkAttentionF32Forward(b *testing.B) {
	for _, c := range []struct{ batch, l, e int }{{8, 1024, 8}, {8, 1024, 16}, {8, 4096, 16}, {8, 1024, 32}, {8, 1024, 64}, {32, 128, 64}} {
		b.Run(fmt.Sprintf("bh%d_l%d_e%d", c.batch, c.l, c.e), func(b *testing.B) {
			randn := func(seed int) *core.Tensor {
				return core.Call1("randn", core.Attrs{"shape": []int{c.batch, c.l, c.e}, "seed": seed})
			}
			q, k, v := randn(1), randn(2), randn(3)
			b.ResetTimer()
			for b.Loop() {
				out := core.Call1("scaled_dot_product_attention", nil, q, k, v)
				if err := out.Err(); err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		})
	}
}
