package abi

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Optimisers (wt_optimizer_*) are nn's, over parameters the SDKs hold as
// tensor handles. An optimiser keeps the handles, not the tensors: before
// each step it reads what they hold (an SDK may have loaded a state dict
// into them since), and a step points them at the new values
// (replaceTensors), so every SDK object of a parameter sees the update, as
// in torch, and no SDK swaps handles. Settings are torch's keyword
// arguments, passed as op attributes (wt_attr), so every SDK builds them as
// it builds an op call's, and a bad one is refused here, in one wording.

var optimizers = newObjects[*optimizer]("optimizer")

type optimizer struct {
	mu      sync.Mutex // one call at a time: a step reads and replaces every parameter
	kind    *optimKind
	handles []int64
	params  []*nn.Parameter
	opt     nn.Optimizer
}

// optimKind is one kind of optimiser: its name in errors, how it is made
// from settings, and how settings change.
type optimKind struct {
	name string
	make func(ps []*nn.Parameter, s *settings) (nn.Optimizer, error)
	set  func(o nn.Optimizer, s *settings) error
}

var optimKinds = map[string]*optimKind{
	"sgd":     kindOf("SGD", nn.DefaultSGD, (*settings).sgd, nn.NewSGD),
	"adam":    kindOf("Adam", nn.DefaultAdam, (*settings).adam, nn.NewAdam),
	"adamw":   kindOf("AdamW", nn.DefaultAdamW, (*settings).adam, nn.NewAdamW),
	"rmsprop": kindOf("RMSprop", nn.DefaultRMSprop, (*settings).rmsprop, nn.NewRMSprop),
	"adagrad": kindOf("Adagrad", nn.DefaultAdagrad, (*settings).adagrad, nn.NewAdagrad),
}

// configurable is an nn optimiser whose settings are read and changed as
// one C.
type configurable[C any] interface {
	nn.Optimizer
	Config() C
	SetConfig(C) error
}

// kindOf is the optimKind of every nn optimiser alike: made from its
// defaults with the settings read over them, and changed by reading the
// settings over its current configuration.
func kindOf[C any, O configurable[C]](name string, defaults func() C, read func(*settings, *C) error,
	newOpt func([]*nn.Parameter, C) (O, error)) *optimKind {
	return &optimKind{name,
		func(ps []*nn.Parameter, s *settings) (nn.Optimizer, error) {
			c := defaults()
			if err := read(s, &c); err != nil {
				return nil, err
			}
			return newOpt(ps, c)
		},
		func(o nn.Optimizer, s *settings) error {
			opt := o.(O)
			c := opt.Config()
			if err := read(s, &c); err != nil {
				return err
			}
			return opt.SetConfig(c)
		}}
}

// OptimizerNew is wt_optimizer_new.
func OptimizerNew(kind string, params []int64, attrs AttrList) (int64, error) {
	k, ok := optimKinds[kind]
	if !ok {
		return 0, Invalidf("wt_optimizer_new: unknown optimizer %q (sgd, adam, adamw, rmsprop, adagrad)", kind)
	}
	s, err := newSettings(k.name, attrs)
	if err != nil {
		return 0, err
	}
	ts, err := paramList(params, k.name+": parameter")
	if err != nil {
		return 0, err
	}
	boxes := make([]*nn.Parameter, len(ts))
	seen := map[*core.Tensor]int{}
	for i, t := range ts {
		if _, dup := seen[t]; dup {
			return 0, Invalidf("%s: parameter %d appears twice", k.name, i)
		}
		seen[t] = i
		if err := checkParameter(k.name, i, t); err != nil {
			return 0, err
		}
		if boxes[i], err = nn.ParameterOf(t); err != nil {
			return 0, err
		}
	}
	opt, err := k.make(boxes, s)
	if err != nil {
		return 0, err
	}
	return optimizers.add(&optimizer{kind: k, handles: append([]int64(nil), params...), params: boxes, opt: opt}), nil
}

// checkParameter says, in the optimiser's words, why parameter i's tensor
// cannot be trained.
func checkParameter(kind string, i int, t *core.Tensor) error {
	switch {
	case !t.RequiresGrad():
		return Invalidf("%s: parameter %d does not require a gradient", kind, i)
	case !t.IsLeaf():
		return Invalidf("%s: parameter %d is not a leaf (it was computed from others; detach it)", kind, i)
	}
	return nil
}

// OptimizerSet is wt_optimizer_set: new settings, checked together; the
// state is kept.
func OptimizerSet(h int64, attrs AttrList) error {
	o, err := optimizers.get(h)
	if err != nil {
		return err
	}
	s, err := newSettings(o.kind.name, attrs)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.kind.set(o.opt, s)
}

// bind points the optimiser's parameters at what their handles hold now.
func (o *optimizer) bind() ([]*core.Tensor, error) {
	ts, err := paramList(o.handles, o.kind.name+": parameter")
	if err != nil {
		return nil, err
	}
	for i, t := range ts {
		if o.params[i].Tensor() == t {
			continue
		}
		if err := checkParameter(o.kind.name, i, t); err != nil {
			return nil, err
		}
		if err := o.params[i].Bind(t); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// OptimizerStep is wt_optimizer_step: one update of every parameter that
// has a gradient, all or none.
func OptimizerStep(h int64) error {
	o, err := optimizers.get(h)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	olds, err := o.bind()
	if err != nil {
		return err
	}
	if err := o.opt.Step(); err != nil {
		return err
	}
	news := make([]*core.Tensor, len(olds))
	for i, p := range o.params {
		news[i] = p.Tensor()
	}
	replaceTensors(o.handles, olds, news, nil)
	return nil
}

// OptimizerZeroGrad is wt_optimizer_zero_grad.
func OptimizerZeroGrad(h int64) error {
	o, err := optimizers.get(h)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ts, err := paramList(o.handles, o.kind.name+": parameter")
	if err != nil {
		return err
	}
	for _, t := range ts {
		t.ZeroGrad()
	}
	return nil
}

// OptimizerFree is wt_optimizer_free: the optimiser and its state go; the
// parameters are the caller's.
func OptimizerFree(h int64) error { return optimizers.free(h) }

// OptimizerState is wt_optimizer_state: a state dict of the optimiser's
// state, each parameter's under "<its index>.<torch's name>" ("0.exp_avg",
// "0.step"; the step count is an i64 scalar), for the parameters updated so
// far, as torch's state_dict()["state"] holds them.
func OptimizerState(h int64) (int64, error) {
	o, err := optimizers.get(h)
	if err != nil {
		return 0, err
	}
	o.mu.Lock()
	states := o.opt.State()
	o.mu.Unlock()
	sd := &stateDict{}
	for i, s := range states {
		if s.Step == 0 && len(s.Tensors) == 0 {
			continue
		}
		sd.add(fmt.Sprintf("%d.step", i), core.Scalar(float64(s.Step), core.I64, core.CPU), false)
		for _, name := range slices.Sorted(maps.Keys(s.Tensors)) {
			sd.add(fmt.Sprintf("%d.%s", i, name), s.Tensors[name], false)
		}
	}
	return stateDicts.add(sd), nil
}

// OptimizerLoadState is wt_optimizer_load_state: the state dict's entries,
// named as OptimizerState names them, replace the optimiser's state, all
// or none; a parameter without entries starts afresh.
func OptimizerLoadState(h, state int64) error {
	o, err := optimizers.get(h)
	if err != nil {
		return err
	}
	sd, err := stateDicts.get(state)
	if err != nil {
		return err
	}
	names, tensors, _ := sd.snapshot()
	o.mu.Lock()
	defer o.mu.Unlock()
	loaded := make([]nn.ParamState, len(o.handles))
	for k, name := range names {
		index, key, _ := strings.Cut(name, ".")
		i, err := strconv.Atoi(index)
		if err != nil || i < 0 || i >= len(loaded) || key == "" {
			return Invalidf("%s: load state: %q does not name a parameter's state (want \"<index>.<name>\", index below %d)", o.kind.name, name, len(loaded))
		}
		if key == "step" {
			v, err := tensors[k].Item()
			if err != nil {
				return Invalidf("%s: load state: %s: %v", o.kind.name, name, err)
			}
			loaded[i].Step = int(v)
			continue
		}
		if loaded[i].Tensors == nil {
			loaded[i].Tensors = map[string]*core.Tensor{}
		}
		loaded[i].Tensors[key] = tensors[k]
	}
	if _, err := o.bind(); err != nil {
		return err
	}
	return o.opt.LoadState(loaded)
}
