package nn

// RMSpropConfig holds torch.optim.RMSprop's settings; start from
// DefaultRMSprop.
type RMSpropConfig struct {
	LR          float64
	Alpha       float64
	Eps         float64
	WeightDecay float64
	Momentum    float64
	Centered    bool
	Maximize    bool
}

// DefaultRMSprop is torch's RMSprop default: lr 1e-2, alpha 0.99, eps 1e-8.
func DefaultRMSprop() RMSpropConfig { return RMSpropConfig{LR: 1e-2, Alpha: 0.99, Eps: 1e-8} }

// Validate rejects what torch rejects, in torch's words.
func (c RMSpropConfig) Validate() error {
	return firstError(
		checkHyper(c.LR >= 0, "RMSprop", "learning rate", c.LR),
		checkHyper(c.Eps >= 0, "RMSprop", "epsilon", c.Eps),
		checkHyper(c.Momentum >= 0, "RMSprop", "momentum", c.Momentum),
		checkHyper(c.WeightDecay >= 0, "RMSprop", "weight decay", c.WeightDecay),
		checkHyper(c.Alpha >= 0, "RMSprop", "alpha", c.Alpha))
}

// RMSprop is torch.optim.RMSprop, torch's single-tensor equations:
//
//	g = grad + wd·p
//	v = α·v + (1-α)·g²
//	avg = √(v - ḡ²) with ḡ = lerp(ḡ, g, 1-α) when centered, else √v ; avg += eps
//	buf = momentum·buf + g/avg ; p = p - lr·buf     (momentum > 0)
//	p = p - lr·g/avg                                (otherwise)
type RMSprop struct {
	optimizer
	cfg RMSpropConfig
}

// NewRMSprop makes an RMSprop optimiser over params.
func NewRMSprop(params []*Parameter, cfg RMSpropConfig) (*RMSprop, error) {
	o, err := newOptimizer("RMSprop", params, cfg.Validate())
	if err != nil {
		return nil, err
	}
	return &RMSprop{optimizer: o, cfg: cfg}, nil
}

// Step applies one update.
func (o *RMSprop) Step() error { return o.step(o.cfg.build) }

func (c RMSpropConfig) build(s *stepTrees) fx {
	g := s.grad(c.Maximize, c.WeightDecay)
	v := fOp("add", fMulScalar(s.Prev("square_avg", fConst(0)), c.Alpha), fMulScalar(fOp("mul", g, g), 1-c.Alpha))
	s.Set("square_avg", v)
	var avg fx
	if c.Centered {
		ga := fLerp(s.Prev("grad_avg", fConst(0)), g, 1-c.Alpha)
		s.Set("grad_avg", ga)
		avg = fOp("sqrt", fOp("sub", v, fOp("mul", ga, ga)))
	} else {
		avg = fOp("sqrt", v)
	}
	avg = fAddScalar(avg, c.Eps)
	if c.Momentum > 0 {
		buf := fOp("add", fMulScalar(s.Prev("momentum_buffer", fConst(0)), c.Momentum), fOp("div", g, avg))
		s.Set("momentum_buffer", buf)
		return fOp("sub", s.X, fMulScalar(buf, c.LR))
	}
	return fOp("sub", s.X, fMulScalar(fOp("div", g, avg), c.LR))
}

// Config is the current settings.
func (o *RMSprop) Config() RMSpropConfig { return o.cfg }

// SetConfig changes the settings (the state is kept).
func (o *RMSprop) SetConfig(c RMSpropConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	o.cfg = c
	return nil
}

// LR is the current learning rate.
func (o *RMSprop) LR() float64 { return o.cfg.LR }

// SetLR changes the learning rate.
func (o *RMSprop) SetLR(lr float64) { o.cfg.LR = lr }
