package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// Initialisers follow torch.nn.init. They draw through the rand and randn
// ops, so they consume core's global Philox generator in a fixed order:
// core.ManualSeed(s) before building a model gives the same weights on every
// backend.

// FanMode picks the fan that Kaiming initialisation keeps the variance of.
type FanMode string

// Fan modes.
const (
	FanIn  FanMode = "fan_in"  // preserve the variance of activations in the forward pass
	FanOut FanMode = "fan_out" // preserve the variance of gradients in the backward pass
)

// Gain is torch.nn.init.calculate_gain: the scale that keeps activations'
// variance through a nonlinearity. param is leaky_relu's negative slope and
// ignored otherwise.
func Gain(nonlinearity string, param float64) (float64, error) {
	switch nonlinearity {
	case "linear", "identity", "sigmoid", "conv1d", "conv2d", "conv3d",
		"conv_transpose1d", "conv_transpose2d", "conv_transpose3d":
		return 1, nil
	case "tanh":
		return 5.0 / 3, nil
	case "relu":
		return math.Sqrt2, nil
	case "leaky_relu":
		return math.Sqrt(2 / (1 + param*param)), nil
	case "selu":
		return 0.75, nil
	}
	return 0, fmt.Errorf("nn: gain: unsupported nonlinearity %q (want linear, sigmoid, tanh, relu, leaky_relu, selu or a conv name)", nonlinearity)
}

// Fans returns fan_in and fan_out of a weight shape as torch computes them:
// dim 1 and dim 0 times the product of the remaining (kernel) dims.
func Fans(shape core.Shape) (fanIn, fanOut int, err error) {
	if len(shape) < 2 {
		return 0, 0, fmt.Errorf("nn: fan in and fan out need at least 2 dims, got shape %v", shape)
	}
	receptive := shape[2:].Numel()
	return shape[1] * receptive, shape[0] * receptive, nil
}

// Uniform fills s with draws from U(lo, hi).
func Uniform(s State, lo, hi float64) error {
	t := s.Tensor()
	return s.Set(uniformTensor(t.Shape(), lo, hi, t.DType(), t.Device().String()))
}

// Normal fills s with draws from N(mean, std²).
func Normal(s State, mean, std float64) error {
	t := s.Tensor()
	return s.Set(normalTensor(t.Shape(), mean, std, t.DType(), t.Device().String()))
}

// Constant fills s with v.
func Constant(s State, v float64) error {
	t := s.Tensor()
	return s.Set(core.Full(t.Shape(), v, t.DType(), t.Device()))
}

// XavierUniform is torch's xavier_uniform_: U(-a, a) with
// a = gain·sqrt(6 / (fan_in + fan_out)).
func XavierUniform(s State, gain float64) error {
	fanIn, fanOut, err := Fans(s.Tensor().Shape())
	if err != nil {
		return err
	}
	a := gain * math.Sqrt(6/float64(fanIn+fanOut))
	return Uniform(s, -a, a)
}

// XavierNormal is torch's xavier_normal_: N(0, std²) with
// std = gain·sqrt(2 / (fan_in + fan_out)).
func XavierNormal(s State, gain float64) error {
	fanIn, fanOut, err := Fans(s.Tensor().Shape())
	if err != nil {
		return err
	}
	return Normal(s, 0, gain*math.Sqrt(2/float64(fanIn+fanOut)))
}

// KaimingUniform is torch's kaiming_uniform_: U(-b, b) with
// b = sqrt(3)·gain/sqrt(fan); a is leaky_relu's negative slope.
func KaimingUniform(s State, a float64, mode FanMode, nonlinearity string) error {
	std, err := kaimingStd(s.Tensor().Shape(), a, mode, nonlinearity)
	if err != nil {
		return err
	}
	bound := math.Sqrt(3) * std
	return Uniform(s, -bound, bound)
}

// KaimingNormal is torch's kaiming_normal_: N(0, std²) with std = gain/sqrt(fan).
func KaimingNormal(s State, a float64, mode FanMode, nonlinearity string) error {
	std, err := kaimingStd(s.Tensor().Shape(), a, mode, nonlinearity)
	if err != nil {
		return err
	}
	return Normal(s, 0, std)
}

func kaimingStd(shape core.Shape, a float64, mode FanMode, nonlinearity string) (float64, error) {
	fanIn, fanOut, err := Fans(shape)
	if err != nil {
		return 0, err
	}
	fan := fanIn
	switch mode {
	case FanIn:
	case FanOut:
		fan = fanOut
	default:
		return 0, fmt.Errorf("nn: kaiming: mode %q, want fan_in or fan_out", mode)
	}
	if fan == 0 {
		return 0, fmt.Errorf("nn: kaiming: fan is 0 for shape %v", shape)
	}
	gain, err := Gain(nonlinearity, a)
	if err != nil {
		return 0, err
	}
	return gain / math.Sqrt(float64(fan)), nil
}

func uniformTensor(shape core.Shape, lo, hi float64, dtype core.DType, device string) *core.Tensor {
	u := op("rand", core.Attrs{"shape": []int(shape), "dtype": dtype, "device": device})
	return addScalar(mulScalar(u, hi-lo), lo)
}

func normalTensor(shape core.Shape, mean, std float64, dtype core.DType, device string) *core.Tensor {
	n := op("randn", core.Attrs{"shape": []int(shape), "dtype": dtype, "device": device})
	return addScalar(mulScalar(n, std), mean)
}

// defaultWeightAndBias draws the weight and bias of a Linear or convolution
// as torch's reset_parameters does: kaiming_uniform_(a=√5), which is
// U(±1/√fan_in), and a bias from U(±1/√fan_in).
func defaultWeightAndBias(wShape core.Shape, biasLen int, c config) (w, b *Parameter, err error) {
	fanIn, _, err := Fans(wShape)
	if err != nil {
		return nil, nil, err
	}
	bound := 0.0
	if fanIn > 0 {
		bound = 1 / math.Sqrt(float64(fanIn))
	}
	if w, err = NewParameter(uniformTensor(wShape, -bound, bound, c.dtype, c.device)); err != nil {
		return nil, nil, err
	}
	if !c.bias {
		return w, nil, nil
	}
	b, err = NewParameter(uniformTensor(core.Shape{biasLen}, -bound, bound, c.dtype, c.device))
	return w, b, err
}

// filled makes a parameter of constant value (norm scales and shifts).
func filled(shape core.Shape, v float64, c config) (*Parameter, error) {
	dev, err := deviceOf(c)
	if err != nil {
		return nil, err
	}
	return NewParameter(core.Full(shape, v, c.dtype, dev))
}

func deviceOf(c config) (core.Device, error) {
	if c.device == "" {
		return core.DefaultDevice(), nil
	}
	return core.ParseDevice(c.device)
}
