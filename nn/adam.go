package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// AdamConfig holds torch.optim.Adam's and AdamW's settings. Start from
// DefaultAdam or DefaultAdamW: a zero beta is a legitimate setting, so zero
// fields do not mean "default".
type AdamConfig struct {
	LR           float64
	Beta1, Beta2 float64
	Eps          float64
	WeightDecay  float64
	AMSGrad      bool
	Maximize     bool
}

// DefaultAdam is torch's Adam default: lr 1e-3, betas (0.9, 0.999), eps 1e-8,
// no weight decay.
func DefaultAdam() AdamConfig {
	return AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// DefaultAdamW is torch's AdamW default: Adam's plus weight decay 1e-2.
func DefaultAdamW() AdamConfig {
	c := DefaultAdam()
	c.WeightDecay = 1e-2
	return c
}

// Adam is torch.optim.Adam (decoupled=false) or torch.optim.AdamW
// (decoupled=true), with the same update equations as torch's single-tensor
// implementation:
//
//	g = grad (+ wd·p for Adam) ; p = p·(1 - lr·wd) for AdamW
//	m = lerp(m, g, 1-β1) ; v = β2·v + (1-β2)·g²
//	v̂ = max(v̂, v) with AMSGrad, else v
//	p = p - lr/(1-β1ᵗ) · m / (√v̂/√(1-β2ᵗ) + eps)
type Adam struct {
	kind      string
	cfg       AdamConfig
	decoupled bool
	params    paramSet
	states    []adamState
}

type adamState struct {
	step        int
	expAvg      *core.Tensor
	expAvgSq    *core.Tensor
	maxExpAvgSq *core.Tensor // AMSGrad only
}

// NewAdam makes an Adam optimiser over params.
func NewAdam(params []*Parameter, cfg AdamConfig) (*Adam, error) {
	return newAdam("Adam", params, cfg, false)
}

// NewAdamW makes an AdamW optimiser (decoupled weight decay) over params.
func NewAdamW(params []*Parameter, cfg AdamConfig) (*Adam, error) {
	return newAdam("AdamW", params, cfg, true)
}

func newAdam(kind string, params []*Parameter, cfg AdamConfig, decoupled bool) (*Adam, error) {
	switch {
	case cfg.LR < 0:
		return nil, fmt.Errorf("nn: %s: invalid learning rate %g", kind, cfg.LR)
	case cfg.Eps < 0:
		return nil, fmt.Errorf("nn: %s: invalid epsilon %g", kind, cfg.Eps)
	case cfg.Beta1 < 0 || cfg.Beta1 >= 1:
		return nil, fmt.Errorf("nn: %s: invalid beta1 %g (want 0 <= beta1 < 1)", kind, cfg.Beta1)
	case cfg.Beta2 < 0 || cfg.Beta2 >= 1:
		return nil, fmt.Errorf("nn: %s: invalid beta2 %g (want 0 <= beta2 < 1)", kind, cfg.Beta2)
	case cfg.WeightDecay < 0:
		return nil, fmt.Errorf("nn: %s: invalid weight decay %g", kind, cfg.WeightDecay)
	}
	ps, err := newParamSet(kind, params)
	if err != nil {
		return nil, err
	}
	return &Adam{kind: kind, cfg: cfg, decoupled: decoupled, params: ps, states: make([]adamState, len(ps))}, nil
}

// Step applies one update.
func (o *Adam) Step() error {
	var updates []update
	core.NoGrad(func() {
		for i, p := range o.params {
			if p.Grad() == nil {
				continue
			}
			if u, ok := o.fusedUpdate(i, p); ok {
				updates = append(updates, u)
				continue
			}
			updates = append(updates, o.update(i, p))
		}
	})
	return commit(o.kind, o.params, updates, func(u update) {
		s := &o.states[u.index]
		s.step++
		s.expAvg, s.expAvgSq = u.state[0], u.state[1]
		if o.cfg.AMSGrad {
			s.maxExpAvgSq = u.state[2]
		}
	})
}

func (o *Adam) update(i int, p *Parameter) update {
	c, s := o.cfg, o.states[i]
	x := p.Tensor()
	wd := c.WeightDecay
	if o.decoupled {
		x = mulScalar(x, 1-c.LR*wd)
		wd = 0
	}
	g := effectiveGrad(p, c.Maximize, wd)
	m, v, vmax := s.expAvg, s.expAvgSq, s.maxExpAvgSq
	if m == nil {
		m, v = core.ZerosLike(x), core.ZerosLike(x)
		if c.AMSGrad {
			vmax = core.ZerosLike(x)
		}
	}
	m = lerp(m, g, 1-c.Beta1)
	v = add(mulScalar(v, c.Beta2), mulScalar(mul(g, g), 1-c.Beta2))
	step := float64(s.step + 1)
	stepSize := c.LR / (1 - math.Pow(c.Beta1, step))
	bc2Sqrt := math.Sqrt(1 - math.Pow(c.Beta2, step))
	second := v
	state := []*core.Tensor{m, v}
	if c.AMSGrad {
		vmax = op("maximum", nil, vmax, v)
		second = vmax
		state = append(state, vmax)
	}
	denom := addScalar(div(op("sqrt", nil, second), scalarLike(second, bc2Sqrt)), c.Eps)
	x = sub(x, mulScalar(div(m, denom), stepSize))
	return update{index: i, value: x, state: state}
}

// lerp is torch's lerp: start + w·(end-start), computed from the nearer end
// as torch's kernel does so that the rounding matches.
func lerp(start, end *core.Tensor, w float64) *core.Tensor {
	if w < 0.5 {
		return add(start, mulScalar(sub(end, start), w))
	}
	return sub(end, mulScalar(sub(end, start), 1-w))
}

// ZeroGrad drops every parameter's gradient.
func (o *Adam) ZeroGrad() { o.params.ZeroGrad() }

// LR is the current learning rate.
func (o *Adam) LR() float64 { return o.cfg.LR }

// SetLR changes the learning rate.
func (o *Adam) SetLR(lr float64) { o.cfg.LR = lr }
