package nn

import (
	"fmt"
	"math"
)

// SGDConfig holds torch.optim.SGD's settings; start from DefaultSGD (the
// zero value is plain SGD with learning rate 0).
type SGDConfig struct {
	LR          float64
	Momentum    float64
	Dampening   float64
	Nesterov    bool
	WeightDecay float64
	Maximize    bool
}

// DefaultSGD is torch's SGD default: lr 1e-3, no momentum, dampening or
// weight decay.
func DefaultSGD() SGDConfig { return SGDConfig{LR: 1e-3} }

// Validate rejects what torch rejects, in torch's words.
func (c SGDConfig) Validate() error {
	err := firstError(
		checkHyper(c.LR >= 0, "SGD", "learning rate", c.LR),
		checkHyper(c.Momentum >= 0, "SGD", "momentum", c.Momentum),
		checkHyper(!math.IsNaN(c.Dampening) && !math.IsInf(c.Dampening, 0), "SGD", "dampening", c.Dampening),
		checkHyper(c.WeightDecay >= 0, "SGD", "weight decay", c.WeightDecay))
	if err == nil && c.Nesterov && (c.Momentum <= 0 || c.Dampening != 0) {
		return fmt.Errorf("SGD: Nesterov momentum requires a momentum and zero dampening (got momentum %v, dampening %v)", c.Momentum, c.Dampening)
	}
	return err
}

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and weight decay, following torch.optim.SGD exactly:
//
//	g = grad + wd·p
//	buf = g (first step) or momentum·buf + (1-dampening)·g
//	g = g + momentum·buf (Nesterov) or buf
//	p = p - lr·g
type SGD struct {
	optimizer
	cfg SGDConfig
}

// NewSGD makes an SGD optimiser over params.
func NewSGD(params []*Parameter, cfg SGDConfig) (*SGD, error) {
	o, err := newOptimizer("SGD", params, cfg.Validate())
	if err != nil {
		return nil, err
	}
	return &SGD{optimizer: o, cfg: cfg}, nil
}

// Step applies one SGD update.
func (o *SGD) Step() error { return o.step(o.cfg.build) }

func (c SGDConfig) build(s *stepTrees) fx {
	g := s.grad(c.Maximize, c.WeightDecay)
	if c.Momentum != 0 {
		buf := g
		if prev, ok := s.prev["momentum_buffer"]; ok {
			buf = fOp("add", fMulScalar(prev, c.Momentum), fMulScalar(g, 1-c.Dampening))
		}
		s.Set("momentum_buffer", buf)
		if c.Nesterov {
			g = fOp("add", g, fMulScalar(buf, c.Momentum))
		} else {
			g = buf
		}
	}
	return fOp("sub", s.X, fMulScalar(g, c.LR))
}

// Config is the current settings.
func (o *SGD) Config() SGDConfig { return o.cfg }

// SetConfig changes the settings (the state is kept).
func (o *SGD) SetConfig(c SGDConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	o.cfg = c
	return nil
}

// LR is the current learning rate.
func (o *SGD) LR() float64 { return o.cfg.LR }

// SetLR changes the learning rate.
func (o *SGD) SetLR(lr float64) { o.cfg.LR = lr }
