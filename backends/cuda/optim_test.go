//go:build linux && cgo

package cuda_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Adam's fused step (one kernel per output on a backend that fuses
// exactly) gives the CPU's op chain's bits, for Adam and AdamW with every
// option, over three steps.
func TestFusedAdamMatchesCPUBitForBit(t *testing.T) {
	needEmulator(t)
	configs := map[string]struct {
		cfg       nn.AdamConfig
		decoupled bool
	}{
		"adam":         {nn.DefaultAdam(), false},
		"adamw":        {nn.DefaultAdamW(), true},
		"wd_amsgrad":   {nn.AdamConfig{LR: 0.01, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1, AMSGrad: true}, false},
		"maximize_lr1": {nn.AdamConfig{LR: 1, Beta1: 0.3, Beta2: 0.5, Eps: 1e-3, Maximize: true}, true},
	}
	for name, c := range configs {
		t.Run(name, func(t *testing.T) {
			var results [2][]float32
			for d, dev := range []core.Device{core.CPU, emuDevice} {
				w := core.Call1("randn", core.Attrs{"shape": []int{7, 5}, "seed": 11}).To(dev)
				p, err := nn.NewParameter(w)
				require.NoError(t, err)
				newOpt := nn.NewAdam
				if c.decoupled {
					newOpt = nn.NewAdamW
				}
				opt, err := newOpt([]*nn.Parameter{p}, c.cfg)
				require.NoError(t, err)
				for step := range 3 {
					g := core.Call1("randn", core.Attrs{"shape": []int{7, 5}, "seed": 20 + step}).To(dev)
					p.SetGrad(g)
					require.NoError(t, opt.Step())
				}
				results[d], err = p.Tensor().Float32s()
				require.NoError(t, err)
			}
			require.Equal(t, results[0], results[1])
		})
	}
}
