//go:build linux && cgo

package cuda_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/nn"
)

// Every optimiser's fused step (one kernel per parameter, fusion.MultiMapFuser)
// gives the CPU's bits, with every option, over three steps.
func TestFusedOptimisersMatchCPUBitForBit(t *testing.T) {
	needEmulator(t)
	configs := map[string]func([]*nn.Parameter) (nn.Optimizer, error){
		"adam":  func(p []*nn.Parameter) (nn.Optimizer, error) { return nn.NewAdam(p, nn.DefaultAdam()) },
		"adamw": func(p []*nn.Parameter) (nn.Optimizer, error) { return nn.NewAdamW(p, nn.DefaultAdamW()) },
		"wd_amsgrad": func(p []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdam(p, nn.AdamConfig{LR: 0.01, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1, AMSGrad: true})
		},
		"maximize_lr1": func(p []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdamW(p, nn.AdamConfig{LR: 1, Beta1: 0.3, Beta2: 0.5, Eps: 1e-3, Maximize: true})
		},
		"sgd_nesterov": func(p []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewSGD(p, nn.SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01})
		},
		"rmsprop_centered": func(p []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewRMSprop(p, nn.RMSpropConfig{LR: 0.01, Alpha: 0.9, Eps: 1e-8, WeightDecay: 0.1, Momentum: 0.9, Centered: true})
		},
		"adagrad": func(p []*nn.Parameter) (nn.Optimizer, error) {
			return nn.NewAdagrad(p, nn.AdagradConfig{LR: 0.1, LRDecay: 0.1, InitialAccumulatorValue: 0.5, Eps: 1e-10})
		},
	}
	for name, newOpt := range configs {
		t.Run(name, func(t *testing.T) {
			var results [2][]float32
			for d, dev := range []core.Device{core.CPU, emuDevice} {
				w := core.Call1("randn", core.Attrs{"shape": []int{7, 5}, "seed": 11}).To(dev)
				p, err := nn.NewParameter(w)
				require.NoError(t, err)
				opt, err := newOpt([]*nn.Parameter{p})
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

// FuseMaps is one kernel with an output per tree.
func TestFuseMapsWritesEveryTree(t *testing.T) {
	b := needEmulator(t)
	x := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}).To(emuDevice)
	y := core.FromSlice([]float32{4, 5, 6}, core.Shape{3}).To(emuDevice)
	leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
	sum := &fusion.Expr{Op: "add", Args: []*fusion.Expr{leaf(0), leaf(1)}}
	prod := &fusion.Expr{Op: "mul", Args: []*fusion.Expr{sum, leaf(1)}}
	outs, err := b.FuseMaps([]*fusion.Expr{sum, prod, leaf(0)}, []*core.Tensor{x, y}, core.Shape{3}, core.F32)
	require.NoError(t, err)
	for i, want := range [][]float32{{5, 7, 9}, {20, 35, 54}, {1, 2, 3}} {
		got, err := outs[i].Float32s()
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}
