package nn

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Linear is torch.nn.Linear: y = x·Wᵀ + b over the last dimension of x.
// State: weight (Out, In), bias (Out).
type Linear struct {
	Base
	In, Out int
	Weight  *Parameter
	Bias    *Parameter // nil when built WithoutBias
}

// NewLinear makes a Linear with torch's default initialisation. Options:
// WithoutBias, WithDType, WithDevice.
func NewLinear(in, out int, opts ...Option) (*Linear, error) {
	c, err := buildConfig("Linear", defaultConfig(), opts, optBias, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if in < 0 || out < 0 {
		return nil, fmt.Errorf("nn: Linear: sizes must be >= 0, got in=%d out=%d", in, out)
	}
	w, b, err := defaultWeightAndBias(core.Shape{out, in}, out, c)
	if err != nil {
		return nil, fmt.Errorf("nn: Linear: %w", err)
	}
	l := &Linear{In: in, Out: out, Weight: w, Bias: b}
	registerWeightBias(&l.Base, w, b)
	return l, nil
}

// Forward maps (..., In) to (..., Out).
func (l *Linear) Forward(x *core.Tensor) *core.Tensor {
	return linear(x, l.Weight.Tensor(), optionalTensor(l.Bias))
}

// ForwardAdd is l.Forward(x).Add(res), a layer's output plus a residual.
// On the CPU, with no gradient to record and no tracer, the residual is
// added in the product's store (the matmul epilogue: the same bits, since
// the epilogue adds in the same order), so the output is written once.
func (l *Linear) ForwardAdd(x, res *core.Tensor) *core.Tensor {
	if l.Bias != nil && res.Err() == nil {
		wt := transpose(l.Weight.Tensor(), 0, 1)
		if y := fusion.MatmulEpilogueOnCPU(x, wt, fusion.BiasResidualAdd, l.Bias.Tensor(), res); y != nil {
			return y
		}
	}
	return add(l.Forward(x), res)
}

// optionalTensor is the value of a parameter that may be absent.
func optionalTensor(p *Parameter) *core.Tensor {
	if p == nil {
		return nil
	}
	return p.Tensor()
}

// Embedding is torch.nn.Embedding: a lookup table from integer indices to
// rows of weight (Num, Dim), initialised from N(0, 1).
type Embedding struct {
	Base
	Num, Dim int
	Weight   *Parameter
}

// NewEmbedding makes an Embedding. Options: WithDType, WithDevice.
func NewEmbedding(num, dim int, opts ...Option) (*Embedding, error) {
	c, err := buildConfig("Embedding", defaultConfig(), opts, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if num < 0 || dim < 0 {
		return nil, fmt.Errorf("nn: Embedding: sizes must be >= 0, got num=%d dim=%d", num, dim)
	}
	w, err := NewParameter(normalTensor(core.Shape{num, dim}, 0, 1, c.dtype, c.device))
	if err != nil {
		return nil, fmt.Errorf("nn: Embedding: %w", err)
	}
	e := &Embedding{Num: num, Dim: dim, Weight: w}
	e.addParam("weight", w)
	return e, nil
}

// Forward maps integer indices of any shape S to vectors of shape (S..., Dim).
func (e *Embedding) Forward(indices *core.Tensor) *core.Tensor {
	return op("embedding", nil, e.Weight.Tensor(), indices)
}
