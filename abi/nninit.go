package abi

import (
	"errors"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// torch.nn.init for the SDKs: the formulas and the draws are the nn
// package's, so a seed gives the same weights whichever SDK initialises a
// tensor, and the SDKs carry no copy of them.

// initTarget is the nn.State an initialiser fills: the tensor behind a
// handle, whose new value is kept until it replaces the old.
type initTarget struct {
	t, v *core.Tensor
}

func (s *initTarget) Tensor() *core.Tensor { return s.t }

func (s *initTarget) Set(v *core.Tensor) error {
	if err := v.Err(); err != nil {
		return err
	}
	if !v.Shape().Equal(s.t.Shape()) || v.DType() != s.t.DType() {
		return Errorf(StatusInternal, "initialiser made %v %v for a %v %v tensor", v.DType(), v.Shape(), s.t.DType(), s.t.Shape())
	}
	s.v = v
	return nil
}

// initMethods are wt_nn_init's methods, each reading its settings
// (torch's keyword arguments, torch's defaults) and calling nn's function.
var initMethods = map[string]func(s *settings, t *initTarget) error{
	"uniform": func(s *settings, t *initTarget) error {
		a, b := 0.0, 1.0
		if err := firstOf(s.float("a", &a), s.float("b", &b), s.done("a", "b")); err != nil {
			return err
		}
		return nn.Uniform(t, a, b)
	},
	"normal": func(s *settings, t *initTarget) error {
		mean, std := 0.0, 1.0
		if err := firstOf(s.float("mean", &mean), s.float("std", &std), s.done("mean", "std")); err != nil {
			return err
		}
		return nn.Normal(t, mean, std)
	},
	"constant": func(s *settings, t *initTarget) error {
		val := 0.0
		if _, ok := s.attrs["val"]; !ok {
			return Invalidf("%s: setting \"val\" is required", s.kind)
		}
		if err := firstOf(s.float("val", &val), s.done("val")); err != nil {
			return err
		}
		return nn.Constant(t, val)
	},
	"xavier_uniform": func(s *settings, t *initTarget) error {
		gain := 1.0
		if err := firstOf(s.float("gain", &gain), s.done("gain")); err != nil {
			return err
		}
		return nn.XavierUniform(t, gain)
	},
	"xavier_normal": func(s *settings, t *initTarget) error {
		gain := 1.0
		if err := firstOf(s.float("gain", &gain), s.done("gain")); err != nil {
			return err
		}
		return nn.XavierNormal(t, gain)
	},
	"kaiming_uniform": func(s *settings, t *initTarget) error {
		a, mode, nonlinearity, err := kaimingSettings(s)
		if err != nil {
			return err
		}
		return nn.KaimingUniform(t, a, mode, nonlinearity)
	},
	"kaiming_normal": func(s *settings, t *initTarget) error {
		a, mode, nonlinearity, err := kaimingSettings(s)
		if err != nil {
			return err
		}
		return nn.KaimingNormal(t, a, mode, nonlinearity)
	},
}

func kaimingSettings(s *settings) (a float64, mode nn.FanMode, nonlinearity string, err error) {
	m, nonlinearity := string(nn.FanIn), "leaky_relu"
	err = firstOf(s.float("a", &a), s.text("mode", &m), s.text("nonlinearity", &nonlinearity),
		s.done("a", "mode", "nonlinearity"))
	return a, nn.FanMode(m), nonlinearity, err
}

// NNInit is wt_nn_init: the tensor behind h gets the values the
// initialiser draws, keeping its handle, shape, dtype and device; a leaf
// that requires a gradient stays one and keeps its gradient, as torch's
// initialisers (which run under no_grad on a parameter) leave it.
func NNInit(h int64, method string, attrs AttrList) error {
	fn, ok := initMethods[method]
	if !ok {
		return Invalidf("wt_nn_init: unknown method %q (uniform, normal, constant, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal)", method)
	}
	s, err := newSettings("wt_nn_init "+method, attrs)
	if err != nil {
		return err
	}
	t, err := TensorOf(h)
	if err != nil {
		return err
	}
	if t.RequiresGrad() && !t.IsLeaf() {
		return Invalidf("wt_nn_init %s: the tensor was computed from others (not a leaf); replacing its values would cut its autograd graph", method)
	}
	target := &initTarget{t: t}
	core.NoGrad(func() { err = fn(s, target) })
	var own *Error
	if errors.As(err, &own) {
		return err // a setting's error, already naming the method
	}
	if err != nil {
		return Prefix(err, "wt_nn_init %s", method) // nn's (a shape without fans, an unknown nonlinearity)
	}
	v := target.v
	if t.RequiresGrad() {
		v = v.Detach().SetRequiresGrad(true)
		v.SetGrad(t.Grad())
	}
	replaceTensors([]int64{h}, []*core.Tensor{t}, []*core.Tensor{v}, nil)
	return nil
}

// NNCalculateGain is wt_nn_calculate_gain: torch.nn.init.calculate_gain,
// param being leaky_relu's negative slope (torch's default of 0.01 is the
// caller's to pass).
func NNCalculateGain(nonlinearity string, param float64) (float64, error) {
	g, err := nn.Gain(nonlinearity, param)
	if err != nil {
		return 0, Invalidf("wt_nn_calculate_gain: %v", err)
	}
	return g, nil
}
