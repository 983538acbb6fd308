package nn

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// TransformerEncoderLayer is torch.nn.TransformerEncoderLayer: self-attention
// and a two-layer feed-forward block, each with a residual connection and
// layer norm (after the addition by default, before the block WithNormFirst).
// State names: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*.
type TransformerEncoderLayer struct {
	Base
	SelfAttn                    *MultiheadAttention
	Linear1, Linear2            *Linear
	Norm1, Norm2                *LayerNorm
	Dropout, Dropout1, Dropout2 *Dropout
	Activation                  string // "relu" or "gelu"
	NormFirst                   bool
}

// NewTransformerEncoderLayer makes an encoder layer of width dModel with
// nHead attention heads and a feed-forward block of width dimFeedforward
// (torch's default is 2048). Options: WithDropout (default 0.1),
// WithActivation, WithEps (layer norms, default 1e-5), WithBatchFirst,
// WithNormFirst, WithoutBias, WithDType, WithDevice.
func NewTransformerEncoderLayer(dModel, nHead, dimFeedforward int, opts ...Option) (*TransformerEncoderLayer, error) {
	base := defaultConfig()
	base.dropout = 0.1
	c, err := buildConfig("TransformerEncoderLayer", base, opts, optDropout, optActivation, optEps,
		optBatchFirst, optNormFirst, optBias, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	t := &TransformerEncoderLayer{Activation: c.activation, NormFirst: c.normFirst}
	if err := t.build(dModel, nHead, dimFeedforward, c); err != nil {
		return nil, fmt.Errorf("nn: TransformerEncoderLayer: %w", err)
	}
	return t, nil
}

func (t *TransformerEncoderLayer) build(dModel, nHead, dimFF int, c config) error {
	common := []Option{WithDType(c.dtype)}
	if c.device != "" {
		dev, err := deviceOf(c)
		if err != nil {
			return err
		}
		common = append(common, WithDevice(dev))
	}
	if !c.bias {
		common = append(common, WithoutBias())
	}
	attnOpts := append([]Option{WithDropout(c.dropout)}, common...)
	if c.batchFirst {
		attnOpts = append(attnOpts, WithBatchFirst())
	}
	var err error
	if t.SelfAttn, err = NewMultiheadAttention(dModel, nHead, attnOpts...); err != nil {
		return err
	}
	if t.Linear1, err = NewLinear(dModel, dimFF, common...); err != nil {
		return err
	}
	if t.Dropout, err = NewDropout(c.dropout); err != nil {
		return err
	}
	if t.Linear2, err = NewLinear(dimFF, dModel, common...); err != nil {
		return err
	}
	normOpts := append([]Option{WithEps(c.eps)}, common...)
	if t.Norm1, err = NewLayerNorm(core.Shape{dModel}, normOpts...); err != nil {
		return err
	}
	if t.Norm2, err = NewLayerNorm(core.Shape{dModel}, normOpts...); err != nil {
		return err
	}
	t.Dropout1, t.Dropout2 = &Dropout{P: c.dropout}, &Dropout{P: c.dropout}
	t.addChild("self_attn", t.SelfAttn)
	t.addChild("linear1", t.Linear1)
	t.addChild("dropout", t.Dropout)
	t.addChild("linear2", t.Linear2)
	t.addChild("norm1", t.Norm1)
	t.addChild("norm2", t.Norm2)
	t.addChild("dropout1", t.Dropout1)
	t.addChild("dropout2", t.Dropout2)
	return nil
}

// Forward encodes src, shaped (S, N, E), or (N, S, E) WithBatchFirst.
func (t *TransformerEncoderLayer) Forward(src *core.Tensor) *core.Tensor {
	return t.ForwardMasked(src, AttentionMask{})
}

// ForwardMasked is Forward with an attention mask (torch's src_mask,
// src_key_padding_mask and is_causal).
func (t *TransformerEncoderLayer) ForwardMasked(src *core.Tensor, mask AttentionMask) *core.Tensor {
	x := src
	if t.NormFirst {
		x = add(x, t.selfAttention(t.Norm1.Forward(x), mask))
		return add(x, t.feedForward(t.Norm2.Forward(x)))
	}
	x = t.Norm1.Forward(add(x, t.selfAttention(x, mask)))
	return t.Norm2.Forward(add(x, t.feedForward(x)))
}

func (t *TransformerEncoderLayer) selfAttention(x *core.Tensor, mask AttentionMask) *core.Tensor {
	return t.Dropout1.Forward(t.SelfAttn.Forward(x, x, x, mask))
}

func (t *TransformerEncoderLayer) feedForward(x *core.Tensor) *core.Tensor {
	h := t.Linear1.Forward(x)
	if t.Activation == "gelu" {
		h = op("gelu", core.Attrs{"approximate": "none"}, h)
	} else {
		h = op("relu", nil, h)
	}
	return t.Dropout2.Forward(t.Linear2.Forward(t.Dropout.Forward(h)))
}
