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
	return nonNegative("RMSprop", hyper{"learning rate", c.LR}, hyper{"epsilon", c.Eps}, hyper{"momentum", c.Momentum},
		hyper{"weight decay", c.WeightDecay}, hyper{"alpha", c.Alpha})
}

// RMSprop is torch.optim.RMSprop, torch's single-tensor equations:
//
//	g = grad + wd·p
//	v = α·v + (1-α)·g²
//	avg = √(v - ḡ²) with ḡ = lerp(ḡ, g, 1-α) when centered, else √v ; avg += eps
//	buf = momentum·buf + g/avg ; p = p - lr·buf     (momentum > 0)
//	p = p - lr·g/avg                                (otherwise)
type RMSprop struct {
	tunable[RMSpropConfig]
}

// NewRMSprop makes an RMSprop optimiser over params.
func NewRMSprop(params []*Parameter, cfg RMSpropConfig) (*RMSprop, error) {
	return newTunable[RMSprop]("RMSprop", params, cfg, func(c *RMSpropConfig) *float64 { return &c.LR })
}

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
