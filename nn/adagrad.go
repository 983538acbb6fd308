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
	return firstError(
		checkHyper(c.LR >= 0, "Adagrad", "learning rate", c.LR),
		checkHyper(c.LRDecay >= 0, "Adagrad", "lr decay", c.LRDecay),
		checkHyper(c.WeightDecay >= 0, "Adagrad", "weight decay", c.WeightDecay),
		checkHyper(c.InitialAccumulatorValue >= 0, "Adagrad", "initial accumulator value", c.InitialAccumulatorValue),
		checkHyper(c.Eps >= 0, "Adagrad", "epsilon", c.Eps))
}

// Adagrad is torch.optim.Adagrad, torch's single-tensor equations:
//
//	g = grad + wd·p
//	clr = lr / (1 + (t-1)·lr_decay)
//	sum = sum + g²          (sum starts at initial_accumulator_value)
//	p = p - clr · g / (√sum + eps)
type Adagrad struct {
	optimizer
	cfg AdagradConfig
}

// NewAdagrad makes an Adagrad optimiser over params.
func NewAdagrad(params []*Parameter, cfg AdagradConfig) (*Adagrad, error) {
	o, err := newOptimizer("Adagrad", params, cfg.Validate())
	if err != nil {
		return nil, err
	}
	return &Adagrad{optimizer: o, cfg: cfg}, nil
}

// Step applies one update.
func (o *Adagrad) Step() error { return o.step(o.cfg.build) }

func (c AdagradConfig) build(s *stepTrees) fx {
	g := s.grad(c.Maximize, c.WeightDecay)
	sum := fOp("add", s.Prev("sum", fConst(c.InitialAccumulatorValue)), fOp("mul", g, g))
	s.Set("sum", sum)
	clr := c.LR / (1 + float64(s.Step-1)*c.LRDecay)
	std := fAddScalar(fOp("sqrt", sum), c.Eps)
	return fOp("sub", s.X, fMulScalar(fOp("div", g, std), clr))
}

// Config is the current settings.
func (o *Adagrad) Config() AdagradConfig { return o.cfg }

// SetConfig changes the settings (the state is kept).
func (o *Adagrad) SetConfig(c AdagradConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	o.cfg = c
	return nil
}

// LR is the current learning rate.
func (o *Adagrad) LR() float64 { return o.cfg.LR }

// SetLR changes the learning rate.
func (o *Adagrad) SetLR(lr float64) { o.cfg.LR = lr }
