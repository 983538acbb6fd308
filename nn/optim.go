package nn

import (
	"fmt"
	"maps"
	"slices"

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
	// State is every parameter's state, in parameter order: what torch's
	// state_dict()["state"] holds, under torch's names.
	State() []ParamState
	// LoadState replaces the state (one entry per parameter, as State
	// returns it); tensors go to their parameter's device and floating
	// dtype. It checks everything before it changes anything.
	LoadState(states []ParamState) error
}

// ParamState is one parameter's optimiser state: how many updates it has
// had and its tensors by torch's names ("exp_avg", "momentum_buffer", ...).
// A parameter that was never updated has Step 0 and no tensors.
type ParamState struct {
	Step    int
	Tensors map[string]*core.Tensor
}

// paramSet is the parameter list every optimiser keeps.
type paramSet []*Parameter

func newParamSet(kind string, params []*Parameter) (paramSet, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("%s: no parameters to optimise (the parameter list is empty)", kind)
	}
	seen := make(map[*Parameter]bool, len(params))
	for i, p := range params {
		if p == nil {
			return nil, fmt.Errorf("%s: parameter %d is nil", kind, i)
		}
		if seen[p] {
			return nil, fmt.Errorf("%s: parameter %d appears twice", kind, i)
		}
		seen[p] = true
	}
	return append(paramSet{}, params...), nil
}

// optimizer is what the optimisers share: the parameters, their state, and
// a step that builds each parameter's update from the optimiser's rule and
// commits all of them or none.
type optimizer struct {
	kind   string
	params paramSet
	state  []ParamState
	// owned marks the parameters whose state tensors only this optimiser
	// holds (made by its last step, never handed out by State nor taken
	// from LoadState's caller): a step releases those it replaces.
	owned []bool
}

// newOptimizer makes the shared part of an optimiser of kind over params,
// failing first with invalid, its settings' Validate error, so that every
// optimiser rejects bad settings before bad parameters.
func newOptimizer(kind string, params []*Parameter, invalid error) (optimizer, error) {
	if invalid != nil {
		return optimizer{}, invalid
	}
	ps, err := newParamSet(kind, params)
	if err != nil {
		return optimizer{}, err
	}
	return optimizer{kind: kind, params: ps, state: make([]ParamState, len(ps)), owned: make([]bool, len(ps))}, nil
}

// settings are an optimiser's hyper-parameters when they alone give its
// update rule (SGD's, Adagrad's, RMSprop's).
type settings interface {
	// Validate rejects what torch rejects, in torch's words.
	Validate() error
	build(s *stepTrees) fx
}

// tunable is an optimiser whose update rule is its settings' C: the step,
// and reading and changing the settings between steps.
type tunable[C settings] struct {
	optimizer
	cfg C
	lr  func(*C) *float64 // the learning rate among the settings
}

// newTunable makes an optimiser O of kind over params with settings cfg,
// after cfg.Validate. O is the public type (Adagrad, RMSprop, SGD), a
// struct holding only its tunable[C], so each constructor is one call.
func newTunable[O ~struct{ tunable[C] }, C settings](kind string, params []*Parameter, cfg C, lr func(*C) *float64) (*O, error) {
	o, err := newOptimizer(kind, params, cfg.Validate())
	if err != nil {
		return nil, err
	}
	return &O{tunable[C]{optimizer: o, cfg: cfg, lr: lr}}, nil
}

// Step applies one update.
func (o *tunable[C]) Step() error { return o.step(o.cfg.build) }

// Config is the current settings.
func (o *tunable[C]) Config() C { return o.cfg }

// SetConfig changes the settings (the state is kept).
func (o *tunable[C]) SetConfig(c C) error {
	if err := c.Validate(); err != nil {
		return err
	}
	o.cfg = c
	return nil
}

// LR is the current learning rate.
func (o *tunable[C]) LR() float64 { return *o.lr(&o.cfg) }

// SetLR changes the learning rate.
func (o *tunable[C]) SetLR(lr float64) { *o.lr(&o.cfg) = lr }

// ZeroGrad drops every parameter's gradient.
func (o *optimizer) ZeroGrad() {
	for _, p := range o.params {
		p.ZeroGrad()
	}
}

// State is a copy of every parameter's state.
func (o *optimizer) State() []ParamState {
	out := make([]ParamState, len(o.state))
	clear(o.owned) // the caller now holds these tensors too
	for i, s := range o.state {
		out[i] = ParamState{Step: s.Step, Tensors: maps.Clone(s.Tensors)}
	}
	return out
}

// LoadState installs states after checking them all: a tensor must have
// its parameter's shape, and floating ones take its dtype (torch casts
// them on load too); every tensor moves to its parameter's device.
func (o *optimizer) LoadState(states []ParamState) error {
	if len(states) != len(o.params) {
		return fmt.Errorf("%s: load state: %d parameter states for %d parameters", o.kind, len(states), len(o.params))
	}
	next := make([]ParamState, len(states))
	for i, s := range states {
		p := o.params[i].Tensor()
		if s.Step < 0 {
			return fmt.Errorf("%s: load state: parameter %d: step %d is negative", o.kind, i, s.Step)
		}
		next[i] = ParamState{Step: s.Step, Tensors: make(map[string]*core.Tensor, len(s.Tensors))}
		for _, name := range slices.Sorted(maps.Keys(s.Tensors)) {
			t := s.Tensors[name]
			if err := t.Err(); err != nil {
				return fmt.Errorf("%s: load state: parameter %d: %s: %w", o.kind, i, name, err)
			}
			if !t.Shape().Equal(p.Shape()) {
				return fmt.Errorf("%s: load state: parameter %d: %s has shape %v, the parameter %v", o.kind, i, name, t.Shape(), p.Shape())
			}
			var v *core.Tensor
			core.NoGrad(func() {
				v = t.Detach()
				if v.DType() != p.DType() && v.DType().IsFloat() {
					v = v.Cast(p.DType())
				}
				v = v.To(p.Device())
			})
			if err := v.Err(); err != nil {
				return fmt.Errorf("%s: load state: parameter %d: %s: %w", o.kind, i, name, err)
			}
			next[i].Tensors[name] = v
		}
	}
	o.state = next
	clear(o.owned) // LoadState's tensors may share storage with the caller's
	return nil
}

// update is one parameter's new value and optimiser state, computed before
// anything is committed so that a failing op leaves every parameter as it was.
type update struct {
	index int
	value *core.Tensor
	state map[string]*core.Tensor
}

// step runs build for every parameter that has a gradient, then commits.
func (o *optimizer) step(build rule) error {
	var updates []update
	core.NoGrad(func() {
		for i, p := range o.params {
			if p.Grad() != nil {
				updates = append(updates, o.update(i, p, build))
			}
		}
	})
	// The shape check catches a gradient set by hand that broadcasts against
	// its parameter, which would otherwise silently reshape the parameter.
	for _, u := range updates {
		err := firstErr(u.value)
		for _, t := range u.state {
			if err == nil {
				err = firstErr(t)
			}
		}
		if err == nil {
			err = checkReplacement(o.params[u.index].t, u.value)
		}
		if err != nil {
			return fmt.Errorf("%s step, parameter %d: %w", o.kind, u.index, err)
		}
	}
	for _, u := range updates {
		p := o.params[u.index]
		p.t = leafWithGrad(u.value, p.t.Grad())
		old := o.state[u.index]
		o.state[u.index] = ParamState{Step: old.Step + 1, Tensors: u.state}
		if o.owned[u.index] {
			releaseReplaced(old.Tensors, u)
		}
		o.owned[u.index] = true
	}
	return nil
}

// releaseReplaced frees the storage of the state tensors a step replaced,
// unless the step's results still use it (a state the rule left as it
// was, on the op chain's path). Left to the collector, the storage of the
// replaced moments was free only after a collection: each step wrote its
// new state into memory not touched for a while, and the Adam update of
// the MLP step (670k parameters, 8 MB of new state) took 1 ms instead of
// the loop's 0.3 ms.
func releaseReplaced(old map[string]*core.Tensor, u update) {
	kept := map[core.Storage]bool{u.value.Storage(): true}
	for _, t := range u.state {
		kept[t.Storage()] = true
	}
	for _, t := range old {
		if s := t.Storage(); s != nil && !kept[s] {
			t.Release()
		}
	}
}

// update builds parameter i's trees over its value, gradient and state
// (leaves 0, 1 and 2... in the state's name order) and runs them.
func (o *optimizer) update(i int, p *Parameter, build rule) update {
	prev := o.state[i]
	x := p.Tensor()
	ins := []*core.Tensor{x, p.Grad()}
	s := &stepTrees{X: fLeaf(0), G: fLeaf(1), Step: prev.Step + 1, prev: map[string]fx{}}
	for _, name := range slices.Sorted(maps.Keys(prev.Tensors)) {
		s.prev[name] = fLeaf(len(ins))
		ins = append(ins, prev.Tensors[name])
	}
	trees := []fx{build(s)}
	for _, name := range s.names {
		trees = append(trees, s.next[name])
	}
	outs := runTrees(trees, ins, x)
	u := update{index: i, value: outs[0], state: make(map[string]*core.Tensor, len(s.names))}
	for k, name := range s.names {
		u.state[name] = outs[1+k]
	}
	return u
}

// leafWithGrad makes a parameter value from a tensor computed under NoGrad
// (already a leaf of the same shape, dtype and device as the old value).
func leafWithGrad(v, grad *core.Tensor) *core.Tensor {
	leaf := v.Detach().SetRequiresGrad(true)
	leaf.SetGrad(grad)
	return leaf
}

// rule is an optimiser's update of one parameter, written once as trees
// (optim_trees.go): the tree of the new value is returned, those of the
// new state tensors are set on s.
type rule func(s *stepTrees) fx

// stepTrees is what a rule builds from: the leaves of the parameter (X)
// and its gradient (G), the state before this step, and the step's number
// (1 on the first).
type stepTrees struct {
	X, G  fx
	Step  int
	prev  map[string]fx
	next  map[string]fx
	names []string
}

// Prev is the state tensor name before this step, or init when the
// parameter has none yet (its first step, or an option just turned on).
func (s *stepTrees) Prev(name string, init fx) fx {
	if t, ok := s.prev[name]; ok {
		return t
	}
	return init
}

// Set makes t the state tensor name after this step.
func (s *stepTrees) Set(name string, t fx) {
	if s.next == nil {
		s.next = map[string]fx{}
	}
	if _, ok := s.next[name]; !ok {
		s.names = append(s.names, name)
	}
	s.next[name] = t
}

// grad is the gradient an update uses: negated when maximising, with L2
// weight decay wd·x folded in when wd is not zero.
func (s *stepTrees) grad(maximize bool, wd float64) fx {
	g := s.G
	if maximize {
		g = fOp("neg", g)
	}
	if wd != 0 {
		g = fOp("add", g, fMulScalar(s.X, wd))
	}
	return g
}

// checkHyper returns "<kind>: invalid <what>: <v>" unless ok, torch's
// wording, so every SDK reports a bad setting the same way.
func checkHyper(ok bool, kind, what string, v float64) error {
	if ok {
		return nil
	}
	return fmt.Errorf("%s: invalid %s: %v", kind, what, v)
}

// hyper is a setting as torch's errors name it, and its value.
type hyper struct {
	name string
	v    float64
}

// nonNegative is torch's check of most optimiser settings: each must be
// >= 0 (NaN is not), the first that is not failing as checkHyper does.
func nonNegative(kind string, hypers ...hyper) error {
	for _, h := range hypers {
		if err := checkHyper(h.v >= 0, kind, h.name, h.v); err != nil {
			return err
		}
	}
	return nil
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
