package nn

// AdagradConfig holds torch.optim.Adagrad's settings; start from
// DefaultAdagrad.
type AdagradConfig struct {
	LR                      float64
	LRDecay                 float64
	WeightDecay             float64
	InitialAccumulatorValue float64
	Eps                     float64
	Maximize                bool
}

// DefaultAdagrad is torch's Adagrad default: lr 1e-2, eps 1e-10, no decay,
// an accumulator starting at 0.
func DefaultAdagrad() AdagradConfig { return AdagradConfig{LR: 1e-2, Eps: 1e-10} }

// Validate rejects what torch rejects, in torch's words.
func (c AdagradConfig) Validate() error {
	return nonNegative("Adagrad", hyper{"learning rate", c.LR}, hyper{"lr decay", c.LRDecay}, hyper{"weight decay", c.WeightDecay},
		hyper{"initial accumulator value", c.InitialAccumulatorValue}, hyper{"epsilon", c.Eps})
}

// Adagrad is torch.optim.Adagrad, torch's single-tensor equations:
//
//	g = grad + wd·p
//	clr = lr / (1 + (t-1)·lr_decay)
//	sum = sum + g²          (sum starts at initial_accumulator_value)
//	p = p - clr · g / (√sum + eps)
type Adagrad struct {
	tunable[AdagradConfig]
}

// NewAdagrad makes an Adagrad optimiser over params.
func NewAdagrad(params []*Parameter, cfg AdagradConfig) (*Adagrad, error) {
	return newTunable[Adagrad]("Adagrad", params, cfg, func(c *AdagradConfig) *float64 { return &c.LR })
}

func (c AdagradConfig) build(s *stepTrees) fx {
	g := s.grad(c.Maximize, c.WeightDecay)
	sum := fOp("add", s.Prev("sum", fConst(c.InitialAccumulatorValue)), fOp("mul", g, g))
	s.Set("sum", sum)
	clr := c.LR / (1 + float64(s.Step-1)*c.LRDecay)
	std := fAddScalar(fOp("sqrt", sum), c.Eps)
	return fOp("sub", s.X, fMulScalar(fOp("div", g, std), clr))
}
