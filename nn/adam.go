package nn

import "math"

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

// validate rejects what torch rejects, in torch's words; kind is "Adam" or
// "AdamW".
func (c AdamConfig) validate(kind string) error {
	return firstError(
		checkHyper(c.LR >= 0, kind, "learning rate", c.LR),
		checkHyper(c.Eps >= 0, kind, "epsilon", c.Eps),
		checkHyper(c.Beta1 >= 0 && c.Beta1 < 1, kind, "beta parameter at index 0", c.Beta1),
		checkHyper(c.Beta2 >= 0 && c.Beta2 < 1, kind, "beta parameter at index 1", c.Beta2),
		checkHyper(c.WeightDecay >= 0, kind, "weight decay", c.WeightDecay))
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
	optimizer
	cfg       AdamConfig
	decoupled bool
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
	o, err := newOptimizer(kind, params, cfg.validate(kind))
	if err != nil {
		return nil, err
	}
	return &Adam{optimizer: o, cfg: cfg, decoupled: decoupled}, nil
}

// Step applies one update.
func (o *Adam) Step() error { return o.step(o.build) }

func (o *Adam) build(s *stepTrees) fx {
	c := o.cfg
	x, wd := s.X, c.WeightDecay
	if o.decoupled {
		x = fMulScalar(x, 1-c.LR*wd)
		wd = 0
	}
	g := s.grad(c.Maximize, wd)
	m := fLerp(s.Prev("exp_avg", fConst(0)), g, 1-c.Beta1)
	v := fOp("add", fMulScalar(s.Prev("exp_avg_sq", fConst(0)), c.Beta2), fMulScalar(fOp("mul", g, g), 1-c.Beta2))
	s.Set("exp_avg", m)
	s.Set("exp_avg_sq", v)
	step := float64(s.Step)
	stepSize := c.LR / (1 - math.Pow(c.Beta1, step))
	bc2Sqrt := math.Sqrt(1 - math.Pow(c.Beta2, step))
	second := v
	if c.AMSGrad {
		second = fOp("maximum", s.Prev("max_exp_avg_sq", fConst(0)), v)
		s.Set("max_exp_avg_sq", second)
	}
	denom := fAddScalar(fOp("div", fOp("sqrt", second), fConst(bc2Sqrt)), c.Eps)
	return fOp("sub", x, fMulScalar(fOp("div", m, denom), stepSize))
}

// Config is the current settings.
func (o *Adam) Config() AdamConfig { return o.cfg }

// SetConfig changes the settings (the state is kept).
func (o *Adam) SetConfig(c AdamConfig) error {
	if err := c.validate(o.kind); err != nil {
		return err
	}
	o.cfg = c
	return nil
}

// LR is the current learning rate.
func (o *Adam) LR() float64 { return o.cfg.LR }

// SetLR changes the learning rate.
func (o *Adam) SetLR(lr float64) { o.cfg.LR = lr }
