//go:build !js

package webgpu

import (
	"fmt"
	"testing"

	"github.com/webtensor/webtensor/core/oprules"
)

// BenchmarkMatmulLayouts times the transposed layouts of a linear layer
// (d 64, ff 256, 8 x 32 tokens: the transformer benchmark's sizes) and
// 1024^3, for every candidate of the layout and the tuner's choice.
// "regblock" and "tiled" were the only choices before the NT and TN kernels.
//
//	go test ./backends/webgpu/ -run '^$' -bench MatmulLayouts -benchtime 20x
func BenchmarkMatmulLayouts(b *testing.B) {
	gb := gpuBackend(b)
	cases := []struct {
		name string
		c    layoutCase
	}{
		{"NT/x@WT/256x64x256", layoutCase{layout: layoutNT, m: 256, k: 64, n: 256}},
		{"NT/x@WT/8x32x64x256", layoutCase{layout: layoutNT, batchA: []int{8}, m: 32, k: 64, n: 256}},
		{"TN/xT@g/64x256x256", layoutCase{layout: layoutTN, m: 64, k: 256, n: 256}},
		{"TN/xT@g/8x64x32x256", layoutCase{layout: layoutTN, batchA: []int{8}, batchB: []int{8}, m: 64, k: 32, n: 256}},
		{"NT/1024", layoutCase{layout: layoutNT, m: 1024, k: 1024, n: 1024}},
		{"TN/1024", layoutCase{layout: layoutTN, m: 1024, k: 1024, n: 1024}},
	}
	for _, c := range cases {
		x, y := c.c.operands(testGPU)
		d, err := oprules.PlanMatmul(x.Shape(), y.Shape())
		if err != nil {
			b.Fatal(err)
		}
		flops := 2 * float64(d.Batch.Numel()*d.M*d.K*d.N)
		for _, v := range append([]string{""}, vecCandidates[c.c.layout].variants...) {
			name := v
			if v == "" {
				name = "tuned"
			}
			b.Run(fmt.Sprintf("%s/%s", c.name, name), func(b *testing.B) {
				step := func() {
					out, err := matmulWith(gb, x, y, v, nil)
					if err == nil {
						err = gb.Sync()
					}
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
				step() // compile and tune outside the timing
				b.ResetTimer()
				for range b.N {
					step()
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
