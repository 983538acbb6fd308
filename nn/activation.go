package nn

import (
	"fmt"
	"reflect"

	"github.com/webtensor/webtensor/core"
)

// Activation modules wrap the elementwise ops so they can sit in a
// Sequential. They hold no state; their zero values are ready to use.

// ReLU is max(x, 0).
type ReLU struct{ Base }

// Forward applies the activation.
func (*ReLU) Forward(x *core.Tensor) *core.Tensor { return op("relu", nil, x) }

// GELU is x·Φ(x); Approximate "tanh" uses torch's tanh approximation,
// "" or "none" the exact erf form.
type GELU struct {
	Base
	Approximate string
}

// Forward applies the activation.
func (g *GELU) Forward(x *core.Tensor) *core.Tensor {
	approx := g.Approximate
	if approx == "" {
		approx = "none"
	}
	return op("gelu", core.Attrs{"approximate": approx}, x)
}

// SiLU is x·sigmoid(x) (also called swish).
type SiLU struct{ Base }

// Forward applies the activation.
func (*SiLU) Forward(x *core.Tensor) *core.Tensor { return op("silu", nil, x) }

// Tanh is the hyperbolic tangent.
type Tanh struct{ Base }

// Forward applies the activation.
func (*Tanh) Forward(x *core.Tensor) *core.Tensor { return op("tanh", nil, x) }

// Sigmoid is 1 / (1 + exp(-x)).
type Sigmoid struct{ Base }

// Forward applies the activation.
func (*Sigmoid) Forward(x *core.Tensor) *core.Tensor { return op("sigmoid", nil, x) }

// Softmax normalises exp(x) to sum to 1 along Axis.
type Softmax struct {
	Base
	Axis int
}

// NewSoftmax makes a Softmax over axis (negative counts from the end).
func NewSoftmax(axis int) *Softmax { return &Softmax{Axis: axis} }

// Forward applies the activation.
func (s *Softmax) Forward(x *core.Tensor) *core.Tensor {
	return op("softmax", core.Attrs{"axis": s.Axis}, x)
}

// Identity returns its input; a placeholder where a layer is optional.
type Identity struct{ Base }

// Forward returns x.
func (*Identity) Forward(x *core.Tensor) *core.Tensor { return x }

// Flatten merges every dimension after the batch dimension, like torch's
// nn.Flatten() with its defaults.
type Flatten struct{ Base }

// Forward maps (N, d1, d2, ...) to (N, d1·d2·...).
func (*Flatten) Forward(x *core.Tensor) *core.Tensor {
	return op("flatten", core.Attrs{"start_dim": 1, "end_dim": -1}, x)
}

// Dropout zeroes each element with probability P during training and scales
// the rest by 1/(1-P); in evaluation mode it is the identity. The mask draws
// from core's seeded generator.
type Dropout struct {
	Base
	P float64
}

// NewDropout makes a Dropout with drop probability p in [0, 1].
func NewDropout(p float64) (*Dropout, error) {
	if p < 0 || p > 1 {
		return nil, fmt.Errorf("nn: Dropout: probability must be in [0, 1], got %g", p)
	}
	return &Dropout{P: p}, nil
}

// Forward applies dropout in training mode.
func (d *Dropout) Forward(x *core.Tensor) *core.Tensor {
	return dropout(x, d.P, d.Training())
}

func dropout(x *core.Tensor, p float64, training bool) *core.Tensor {
	if !training || p == 0 {
		return x
	}
	return op("dropout", core.Attrs{"p": p, "training": true}, x)
}

// Sequential chains layers: the output of each is the input of the next.
// Its children are named "0", "1", ... as in torch.
type Sequential struct {
	Base
	Layers []Layer
}

// NewSequential makes a Sequential of layers (nil layers are rejected).
func NewSequential(layers ...Layer) (*Sequential, error) {
	s := &Sequential{}
	for _, l := range layers {
		if err := s.Append(l); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Append adds a layer at the end.
func (s *Sequential) Append(l Layer) error {
	if isNil(l) {
		return fmt.Errorf("nn: Sequential: layer %d is nil", len(s.Layers))
	}
	s.addChild(fmt.Sprint(len(s.Layers)), l)
	s.Layers = append(s.Layers, l)
	return nil
}

// Forward runs the layers in order.
func (s *Sequential) Forward(x *core.Tensor) *core.Tensor {
	for _, l := range s.Layers {
		x = l.Forward(x)
	}
	return x
}

// isNil also catches a typed nil pointer, such as the *Linear a failed
// constructor returns, which would otherwise panic in Forward.
func isNil(m Module) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
