package nn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// optimisers builds every optimiser with options that exercise each branch
// of its trees (momentum, Nesterov, AMSGrad, centering, decay, maximize).
var optimisers = map[string]func([]*Parameter) (Optimizer, error){
	"sgd": func(p []*Parameter) (Optimizer, error) { return NewSGD(p, SGDConfig{LR: 0.1}) },
	"sgd_nesterov": func(p []*Parameter) (Optimizer, error) {
		return NewSGD(p, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01})
	},
	"sgd_damp_max": func(p []*Parameter) (Optimizer, error) {
		return NewSGD(p, SGDConfig{LR: 0.05, Momentum: 0.5, Dampening: 0.1, Maximize: true})
	},
	"adam": func(p []*Parameter) (Optimizer, error) { return NewAdam(p, DefaultAdam()) },
	"adam_ams_wd": func(p []*Parameter) (Optimizer, error) {
		return NewAdam(p, AdamConfig{LR: 0.01, Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, WeightDecay: 0.1, AMSGrad: true})
	},
	"adamw_max": func(p []*Parameter) (Optimizer, error) {
		return NewAdamW(p, AdamConfig{LR: 1, Beta1: 0.3, Beta2: 0.5, Eps: 1e-3, WeightDecay: 0.1, Maximize: true})
	},
	"rmsprop": func(p []*Parameter) (Optimizer, error) { return NewRMSprop(p, DefaultRMSprop()) },
	"rmsprop_centered": func(p []*Parameter) (Optimizer, error) {
		return NewRMSprop(p, RMSpropConfig{LR: 0.01, Alpha: 0.9, Eps: 1e-8, WeightDecay: 0.1, Momentum: 0.9, Centered: true})
	},
	"adagrad": func(p []*Parameter) (Optimizer, error) {
		return NewAdagrad(p, AdagradConfig{LR: 0.1, LRDecay: 0.1, WeightDecay: 0.05, InitialAccumulatorValue: 0.5, Eps: 1e-10})
	},
}

// trainBits runs four steps (the last over special values) of opt on a (33, 17) parameter of dtype d
// (more than one block of the CPU's fused loop) and returns its final bits
// and those of its state.
func trainBits(t *testing.T, name string, d core.DType) []float64 {
	w := core.Call1("randn", core.Attrs{"shape": []int{33, 17}, "seed": 5, "dtype": d})
	p, err := NewParameter(w)
	require.NoError(t, err)
	opt, err := optimisers[name]([]*Parameter{p})
	require.NoError(t, err)
	for step := range 3 {
		p.SetGrad(core.Call1("randn", core.Attrs{"shape": []int{33, 17}, "seed": 20 + step, "dtype": d}))
		require.NoError(t, opt.Step())
	}
	// A step over NaN, infinities and signed zeros: the paths must agree there too.
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 1e-30}
	g := make([]float64, 33*17)
	for i := range g {
		g[i] = special[i%len(special)]
	}
	p.SetGrad(core.FromFloat64s(d, core.Shape{33, 17}, g))
	require.NoError(t, opt.Step())
	out, err := p.Tensor().Float64s()
	require.NoError(t, err)
	for _, k := range []string{"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "square_avg", "grad_avg", "sum"} {
		if s := opt.State()[0].Tensors[k]; s != nil {
			v, err := s.Float64s()
			require.NoError(t, err)
			out = append(out, v...)
		}
	}
	return out
}

// The CPU's fused loop gives the op chain's bits for every optimiser, in
// f32 and f64.
func TestFusedStepMatchesOpChainBitForBit(t *testing.T) {
	var fused int
	fuse = func(trees []fx, ins []*core.Tensor, like *core.Tensor) ([]*core.Tensor, bool) {
		outs, ok := fuseTrees(trees, ins, like)
		if ok {
			fused++
		}
		return outs, ok
	}
	defer func() { fuse = fuseTrees }()
	for name := range optimisers {
		for _, d := range []core.DType{core.F32, core.F64} {
			fused = 0
			got := trainBits(t, name, d)
			require.Equal(t, 4, fused, "%s %s: every step one fused loop", name, d)
			fuse = func([]fx, []*core.Tensor, *core.Tensor) ([]*core.Tensor, bool) { return nil, false }
			want := trainBits(t, name, d)
			fuse = func(trees []fx, ins []*core.Tensor, like *core.Tensor) ([]*core.Tensor, bool) {
				outs, ok := fuseTrees(trees, ins, like)
				if ok {
					fused++
				}
				return outs, ok
			}
			require.Equal(t, len(want), len(got))
			for i := range want {
				if math.Float64bits(want[i]) != math.Float64bits(got[i]) && !(math.IsNaN(want[i]) && math.IsNaN(got[i])) {
					t.Fatalf("%s %s: element %d: fused %v, chain %v", name, d, i, got[i], want[i])
				}
			}
		}
	}
}
