package nn

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Optimizer updates parameters from their accumulated gradients.
type Optimizer interface {
	// Step applies one update to every parameter that has a gradient;
	// parameters without one are left alone, as in torch. A failed step
	// changes nothing.
	Step() error
	// ZeroGrad drops the parameters' gradients (torch's set_to_none=True).
	ZeroGrad()
	// LR is the current learning rate.
	LR() float64
	// SetLR changes the learning rate; schedules call it.
	SetLR(lr float64)
}

// paramSet is the parameter list every optimiser keeps.
type paramSet []*Parameter

func newParamSet(kind string, params []*Parameter) (paramSet, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("nn: %s: no parameters to optimise", kind)
	}
	seen := make(map[*Parameter]bool, len(params))
	for i, p := range params {
		if p == nil {
			return nil, fmt.Errorf("nn: %s: parameter %d is nil", kind, i)
		}
		if seen[p] {
			return nil, fmt.Errorf("nn: %s: parameter %d appears twice", kind, i)
		}
		seen[p] = true
	}
	return append(paramSet{}, params...), nil
}

func (ps paramSet) ZeroGrad() {
	for _, p := range ps {
		p.ZeroGrad()
	}
}

// update is one parameter's new value and optimiser state, computed before
// anything is committed so that a failing op leaves every parameter as it was.
type update struct {
	index int
	value *core.Tensor
	state []*core.Tensor
}

// commit checks every computed tensor, then installs the new values. The
// shape check catches a gradient set by hand that broadcasts against its
// parameter, which would otherwise silently reshape the parameter.
func commit(kind string, ps paramSet, updates []update, install func(u update)) error {
	for _, u := range updates {
		err := firstErr(append([]*core.Tensor{u.value}, u.state...)...)
		if err == nil {
			err = checkReplacement(ps[u.index].t, u.value)
		}
		if err != nil {
			return fmt.Errorf("nn: %s step, parameter %d: %w", kind, u.index, err)
		}
	}
	for _, u := range updates {
		p := ps[u.index]
		p.t = leafWithGrad(u.value, p.t.Grad())
		install(u)
	}
	return nil
}

// leafWithGrad makes a parameter value from a tensor computed under NoGrad
// (already a leaf of the same shape, dtype and device as the old value).
func leafWithGrad(v, grad *core.Tensor) *core.Tensor {
	leaf := v.Detach().SetRequiresGrad(true)
	leaf.SetGrad(grad)
	return leaf
}

// effectiveGrad is the gradient an update uses: negated when maximising,
// with L2 weight decay folded in when wd is not zero.
func effectiveGrad(p *Parameter, maximize bool, wd float64) *core.Tensor {
	g := p.Grad()
	if maximize {
		g = op("neg", nil, g)
	}
	if wd != 0 {
		g = add(g, mulScalar(p.Tensor(), wd))
	}
	return g
}

// SGDConfig holds torch.optim.SGD's settings; the zero value is plain SGD
// with learning rate 0, so set LR.
type SGDConfig struct {
	LR          float64
	Momentum    float64
	Dampening   float64
	Nesterov    bool
	WeightDecay float64
	Maximize    bool
}

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and weight decay, following torch.optim.SGD exactly:
//
//	g = grad + wd·p
//	buf = g (first step) or momentum·buf + (1-dampening)·g
//	g = g + momentum·buf (Nesterov) or buf
//	p = p - lr·g
type SGD struct {
	cfg     SGDConfig
	params  paramSet
	buffers []*core.Tensor
}

// NewSGD makes an SGD optimiser over params.
func NewSGD(params []*Parameter, cfg SGDConfig) (*SGD, error) {
	switch {
	case cfg.LR < 0:
		return nil, fmt.Errorf("nn: SGD: invalid learning rate %g", cfg.LR)
	case cfg.Momentum < 0:
		return nil, fmt.Errorf("nn: SGD: invalid momentum %g", cfg.Momentum)
	case cfg.WeightDecay < 0:
		return nil, fmt.Errorf("nn: SGD: invalid weight decay %g", cfg.WeightDecay)
	case cfg.Nesterov && (cfg.Momentum <= 0 || cfg.Dampening != 0):
		return nil, fmt.Errorf("nn: SGD: Nesterov momentum needs momentum > 0 and zero dampening (got momentum %g, dampening %g)", cfg.Momentum, cfg.Dampening)
	}
	ps, err := newParamSet("SGD", params)
	if err != nil {
		return nil, err
	}
	return &SGD{cfg: cfg, params: ps, buffers: make([]*core.Tensor, len(ps))}, nil
}

// Step applies one SGD update.
func (o *SGD) Step() error {
	var updates []update
	core.NoGrad(func() {
		for i, p := range o.params {
			if p.Grad() == nil {
				continue
			}
			updates = append(updates, o.update(i, p))
		}
	})
	return commit("SGD", o.params, updates, func(u update) {
		if len(u.state) > 0 {
			o.buffers[u.index] = u.state[0]
		}
	})
}

func (o *SGD) update(i int, p *Parameter) update {
	c := o.cfg
	g := effectiveGrad(p, c.Maximize, c.WeightDecay)
	var state []*core.Tensor
	if c.Momentum != 0 {
		buf := g
		if prev := o.buffers[i]; prev != nil {
			buf = add(mulScalar(prev, c.Momentum), mulScalar(g, 1-c.Dampening))
		}
		state = []*core.Tensor{buf}
		if c.Nesterov {
			g = add(g, mulScalar(buf, c.Momentum))
		} else {
			g = buf
		}
	}
	return update{index: i, value: sub(p.Tensor(), mulScalar(g, c.LR)), state: state}
}

// ZeroGrad drops every parameter's gradient.
func (o *SGD) ZeroGrad() { o.params.ZeroGrad() }

// LR is the current learning rate.
func (o *SGD) LR() float64 { return o.cfg.LR }

// SetLR changes the learning rate.
func (o *SGD) SetLR(lr float64) { o.cfg.LR = lr }
