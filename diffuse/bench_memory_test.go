package diffuse

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// benchVAEConfig is a decoder of Stable Diffusion's shape at a quarter of
// its width: four levels (an 8x upsampling), 32-64 channels, the mid
// block's attention over the whole latent.
const benchVAEConfig = `{"_class_name": "AutoencoderKL", "act_fn": "silu", "block_out_channels": [32, 64, 64, 64],
 "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D", "DownEncoderBlock2D"],
 "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D", "UpDecoderBlock2D"],
 "in_channels": 3, "out_channels": 3, "latent_channels": 4, "layers_per_block": 1, "norm_num_groups": 8,
 "sample_size": 512, "scaling_factor": 0.18215, "mid_block_add_attention": true}`

// BenchmarkVAEDecode decodes a 64x64 latent into a 512x512 image, whole
// and in tiles of 32 latent pixels overlapping by 8, on the CPU, and
// reports beside the time the most bytes of storage the decode held at
// once beyond the weights, from the CPU backend's PeakInUse over one
// decode after a collection: live-peak-MB with a collection after every op
// (what the decode keeps alive), peak-MB as it runs (the decoder releases
// its intermediates at their last use; anything it misses waits for the
// allocator's own collections).
// Issue 21 asks for the tiled decode's peak memory against the untiled.
func BenchmarkVAEDecode(b *testing.B) {
	cfg, err := ParseAutoencoderKLConfig([]byte(benchVAEConfig))
	if err != nil {
		b.Fatal(err)
	}
	m := drawnModel(b, core.CPU, func(w *weights) *AutoencoderKL { return buildAutoencoderKL(cfg, w) })
	m.dev, m.dtype = core.CPU, core.F32
	lat := core.Randn(core.Attrs{"shape": []int{1, 4, 64, 64}, "dtype": core.F32, "seed": int64(5)})
	for _, tile := range []int{0, 32} {
		name := "whole"
		if tile > 0 {
			name = fmt.Sprintf("tiled%d", tile)
		}
		b.Run(name, func(b *testing.B) {
			decode := func() {
				var img *core.Tensor
				var err error
				if tile == 0 {
					img, err = m.Decode(lat)
				} else {
					img, err = m.DecodeTiled(lat, tile, 8)
				}
				if err == nil {
					_, err = img.Float32s()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			// The first measured decode collects after every op, so that its
			// peak is what the decode keeps alive, not how much garbage
			// waited for the allocator's next collection (which lets the
			// bytes handed out reach those in use: up to about twice).
			live := storagePeak(func() {
				prev := core.SetCallObserver(func(e *core.CallEvent) {
					if e.Depth == 0 {
						runtime.GC()
					}
				})
				defer func() { core.SetCallObserver(prev) }()
				decode()
			})
			paced := storagePeak(decode)
			b.ResetTimer()
			for b.Loop() {
				decode()
			}
			b.ReportMetric(float64(live)/(1<<20), "live-peak-MB")
			b.ReportMetric(float64(paced)/(1<<20), "peak-MB")
		})
	}
}

// storagePeak is the most bytes of CPU storage held at once while run ran,
// beyond what was live (after a collection) when it began.
func storagePeak(run func()) int64 {
	var be *cpu.Backend
	runtime.GC()
	base := be.MemoryStats().InUse
	be.ResetPeak()
	run()
	return be.MemoryStats().PeakInUse - base
}
