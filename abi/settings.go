package abi

import (
	"slices"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// settings are an optimiser's or a schedule's keyword arguments, passed as
// op attributes: each reader takes the names it knows, and done refuses
// the rest, so a misspelt setting is an error rather than ignored.
type settings struct {
	kind  string // names the optimiser or schedule in errors
	attrs core.Attrs
	used  map[string]bool
}

func newSettings(kind string, l AttrList) (*settings, error) {
	a, err := decodeAttrs(l)
	if err != nil {
		return nil, Prefix(err, "%s", kind)
	}
	return &settings{kind: kind, attrs: a, used: map[string]bool{}}, nil
}

// float reads a number (an int attribute will do) into dst, if given.
func (s *settings) float(name string, dst *float64) error {
	v, ok := s.attrs[name]
	if !ok {
		return nil
	}
	s.used[name] = true
	switch x := v.(type) {
	case float64:
		*dst = x
	case int:
		*dst = float64(x)
	default:
		return Invalidf("%s: setting %q must be a number, got %T", s.kind, name, v)
	}
	return nil
}

// integer reads an integer into dst, if given.
func (s *settings) integer(name string, dst *int) error {
	v, ok := s.attrs[name]
	if !ok {
		return nil
	}
	s.used[name] = true
	x, isInt := v.(int)
	if !isInt {
		return Invalidf("%s: setting %q must be an integer, got %T", s.kind, name, v)
	}
	*dst = x
	return nil
}

// ints reads a list of integers into dst, if given.
func (s *settings) ints(name string, dst *[]int) error {
	v, ok := s.attrs[name]
	if !ok {
		return nil
	}
	s.used[name] = true
	x, isInts := v.([]int)
	if !isInts {
		return Invalidf("%s: setting %q must be a list of integers, got %T", s.kind, name, v)
	}
	*dst = x
	return nil
}

// flag reads a bool (or an int 0 or 1) into dst, if given.
func (s *settings) flag(name string, dst *bool) error {
	v, ok := s.attrs[name]
	if !ok {
		return nil
	}
	s.used[name] = true
	switch x := v.(type) {
	case bool:
		*dst = x
	case int:
		if x != 0 && x != 1 {
			return Invalidf("%s: setting %q must be a bool, got %d", s.kind, name, x)
		}
		*dst = x == 1
	default:
		return Invalidf("%s: setting %q must be a bool, got %T", s.kind, name, v)
	}
	return nil
}

// pair reads a list of two numbers (Adam's betas), if given.
func (s *settings) pair(name string, a, b *float64) error {
	v, ok := s.attrs[name]
	if !ok {
		return nil
	}
	s.used[name] = true
	switch x := v.(type) {
	case []float64:
		if len(x) == 2 {
			*a, *b = x[0], x[1]
			return nil
		}
	case []int:
		if len(x) == 2 {
			*a, *b = float64(x[0]), float64(x[1])
			return nil
		}
	}
	return Invalidf("%s: setting %q must be two numbers, got %v", s.kind, name, v)
}

// done refuses the settings no reader took, naming the ones it takes.
func (s *settings) done(known ...string) error {
	var unknown []string
	for name := range s.attrs {
		if !s.used[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return Invalidf("%s: unknown setting %s (it takes %s)", s.kind, strings.Join(quoteAll(unknown), ", "), strings.Join(known, ", "))
}

func quoteAll(names []string) []string {
	out := slices.Clone(names)
	for i, n := range out {
		out[i] = `"` + n + `"`
	}
	return out
}

func (s *settings) sgd(c *nn.SGDConfig) error {
	return firstOf(s.float("lr", &c.LR), s.float("momentum", &c.Momentum), s.float("dampening", &c.Dampening),
		s.float("weight_decay", &c.WeightDecay), s.flag("nesterov", &c.Nesterov), s.flag("maximize", &c.Maximize),
		s.done("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"))
}

func (s *settings) adam(c *nn.AdamConfig) error {
	return firstOf(s.float("lr", &c.LR), s.pair("betas", &c.Beta1, &c.Beta2), s.float("eps", &c.Eps),
		s.float("weight_decay", &c.WeightDecay), s.flag("amsgrad", &c.AMSGrad), s.flag("maximize", &c.Maximize),
		s.done("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"))
}

func (s *settings) rmsprop(c *nn.RMSpropConfig) error {
	return firstOf(s.float("lr", &c.LR), s.float("alpha", &c.Alpha), s.float("eps", &c.Eps),
		s.float("weight_decay", &c.WeightDecay), s.float("momentum", &c.Momentum), s.flag("centered", &c.Centered),
		s.flag("maximize", &c.Maximize), s.done("lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"))
}

func (s *settings) adagrad(c *nn.AdagradConfig) error {
	return firstOf(s.float("lr", &c.LR), s.float("lr_decay", &c.LRDecay), s.float("weight_decay", &c.WeightDecay),
		s.float("initial_accumulator_value", &c.InitialAccumulatorValue), s.float("eps", &c.Eps),
		s.flag("maximize", &c.Maximize),
		s.done("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize"))
}

// firstOf is the first non-nil error; the readers above run in order.
func firstOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// text reads a string into dst, if given.
func (s *settings) text(name string, dst *string) error {
	v, ok := s.attrs[name]
	if !ok {
		return nil
	}
	s.used[name] = true
	x, isString := v.(string)
	if !isString {
		return Invalidf("%s: setting %q must be a string, got %T", s.kind, name, v)
	}
	*dst = x
	return nil
}
