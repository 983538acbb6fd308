package geom

import (
	"testing"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// BenchmarkGCNTrainStep is one full-batch training step of the demo's GCN
// (2000 nodes, about 19k edges) on the CPU.
func BenchmarkGCNTrainStep(b *testing.B) {
	d, err := SBM(SBMConfig{Blocks: 4, BlockSize: 500, PIn: 8.0 / 500, POut: 0.4 / 500, Features: 16, Noise: 2, Seed: 0, TrainFraction: 0.3})
	if err != nil {
		b.Fatal(err)
	}
	m, _ := NewGCN(16, 64, 4, 0.5, Options{})
	opt, _ := nn.NewAdam(m.Parameters(), nn.DefaultAdam())
	y := Gather(d.Y, d.Train)
	b.ResetTimer()
	for range b.N {
		opt.ZeroGrad()
		loss := core.Call1("cross_entropy", nil, Gather(m.Forward(d.X, d.Graph), d.Train), y)
		if err := loss.Backward(); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
	}
}
