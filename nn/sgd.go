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
	tunable[SGDConfig]
}

// NewSGD makes an SGD optimiser over params.
func NewSGD(params []*Parameter, cfg SGDConfig) (*SGD, error) {
	return newTunable[SGD]("SGD", params, cfg, func(c *SGDConfig) *float64 { return &c.LR })
}

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
