package multimodal

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/nn"
)

// preNormLayer is the pre-norm transformer layer ViT and CLIP share:
// h + attention(norm1(h)), then h + mlp(norm2(h)). Only the parameter
// names differ between the two, and layerNames carries them.
type preNormLayer struct {
	nn.Base
	norm1, norm2 *nn.LayerNorm
	q, k, v, o   *nn.Linear
	fc1, fc2     *nn.Linear
	heads        int
	act          string
}

// layerNames are a checkpoint's names for the parts of a preNormLayer,
// relative to the layer, and how the torch modules nest them.
type layerNames struct {
	q, k, v, o, fc1, fc2, norm1, norm2 string
	// nest groups the built parts into the layer's torch module tree, so
	// StateDict gives the checkpoint's names.
	nest func(w *weights, l *preNormLayer) []nn.NamedModule
}

type layerDims struct {
	hidden, inter, heads int
	eps                  float64
	act                  string
	qkvBias              bool
}

func (w *weights) preNormLayer(prefix string, d layerDims, n layerNames) *preNormLayer {
	l := &preNormLayer{heads: d.heads, act: d.act}
	h := d.hidden
	l.q = w.linearBias(prefix+n.q, h, h, d.qkvBias)
	l.k = w.linearBias(prefix+n.k, h, h, d.qkvBias)
	l.v = w.linearBias(prefix+n.v, h, h, d.qkvBias)
	l.o = w.linear(prefix+n.o, h, h)
	l.fc1 = w.linear(prefix+n.fc1, h, d.inter)
	l.fc2 = w.linear(prefix+n.fc2, d.inter, h)
	l.norm1 = w.layerNorm(prefix+n.norm1, h, d.eps)
	l.norm2 = w.layerNorm(prefix+n.norm2, h, d.eps)
	w.register(&l.Base, nil, n.nest(w, l)...)
	return l
}

// forward maps h (B, S, H) to (B, S, H); mask, bool and broadcastable to
// (B, heads, S, S), says which keys a query attends to (nil: all).
func (l *preNormLayer) forward(h, mask *core.Tensor) *core.Tensor {
	if h.Err() != nil {
		return h
	}
	x := l.norm1.Forward(h)
	q, k, v := l.q.Forward(x), l.k.Forward(x), l.v.Forward(x)
	nn.ReleaseDead(nil, x)
	o := attend(q, k, v, mask, l.heads)
	nn.ReleaseDead(nil, q, k, v)
	h1 := l.o.ForwardAdd(o, h)
	nn.ReleaseDead(nil, o)
	x = l.norm2.Forward(h1)
	inter := linearActivated(l.fc1, x, l.act)
	nn.ReleaseDead(nil, x)
	out := l.fc2.ForwardAdd(inter, h1)
	nn.ReleaseDead(nil, inter, h1)
	return out
}

// attend is multi-head attention on projected queries, keys and values
// (B, S, heads·headDim): each head's softmax(q kᵀ/√headDim) v, the heads
// joined back to (B, S, heads·headDim). mask is as preNormLayer.forward's.
func attend(q, k, v, mask *core.Tensor, heads int) *core.Tensor {
	if q.Err() != nil {
		return q
	}
	s := q.Shape()
	b, n, headDim := s[0], s[1], s[2]/heads
	split := func(t *core.Tensor) *core.Tensor {
		return t.Reshape(core.Shape{b, n, heads, headDim}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	}
	return nn.MergedHeadsAttention(split(q), split(k), split(v), mask, core.Attrs{"scale": 1 / math.Sqrt(float64(headDim))})
}

// mlp is a transformer layer's feed-forward block, fc2(act(fc1(x))),
// without the residual.
func mlp(x *core.Tensor, fc1, fc2 *nn.Linear, act string) *core.Tensor {
	inter := linearActivated(fc1, x, act)
	y := fc2.Forward(inter)
	nn.ReleaseDead(nil, inter)
	return y
}

// linearActivated is activate(l.Forward(x), act). On the CPU, with no
// gradient to record and no tracer, GELU and ReLU run in the product's
// store (the backend's matmul epilogue, with the same kernels, so the same
// bits): the intermediate, a feed-forward block's widest tensor, is then
// written once instead of written, read and written again.
func linearActivated(l *nn.Linear, x *core.Tensor, act string) *core.Tensor {
	if es, ok := activationEpilogues[act]; ok {
		e, extras := es[0], []*core.Tensor(nil)
		if l.Bias != nil {
			e, extras = es[1], []*core.Tensor{l.Bias.Tensor()}
		}
		if y := storedLinear(l, x, e, extras...); y != nil {
			return y
		}
	}
	return activate(l.Forward(x), act)
}

// activationEpilogues are the hidden_acts linearActivated stores, each as
// a tree over the product ($0) and over the product plus its bias ($0 + $1).
var activationEpilogues = map[string][2]*fusion.Expr{
	"gelu":              activationEpilogue("gelu", nil),
	"gelu_new":          activationEpilogue("gelu", core.Attrs{"approximate": "tanh"}),
	"gelu_pytorch_tanh": activationEpilogue("gelu", core.Attrs{"approximate": "tanh"}),
	"relu":              activationEpilogue("relu", nil),
}

func activationEpilogue(op string, attrs core.Attrs) [2]*fusion.Expr {
	return [2]*fusion.Expr{
		{Op: op, Attrs: attrs, Args: []*fusion.Expr{{Arg: 0}}},
		{Op: op, Attrs: attrs, Args: []*fusion.Expr{fusion.BiasAdd}},
	}
}

// storedLinear is e(x @ l's weightᵀ, extras...) through the CPU backend's
// matmul epilogue, or nil where that does not apply
// (fusion.MatmulEpilogueOnCPU).
func storedLinear(l *nn.Linear, x *core.Tensor, e *fusion.Expr, extras ...*core.Tensor) *core.Tensor {
	w := l.Weight.Tensor().Transpose(core.Attrs{"dim0": 0, "dim1": 1})
	return fusion.MatmulEpilogueOnCPU(x, w, e, extras...)
}

// activate applies a transformers hidden_act: "gelu" is the exact erf
// form, "gelu_new" and "gelu_pytorch_tanh" the tanh approximation,
// "quick_gelu" CLIP's x·σ(1.702x).
func activate(x *core.Tensor, act string) *core.Tensor {
	switch act {
	case "gelu_new", "gelu_pytorch_tanh":
		return x.GELU(core.Attrs{"approximate": "tanh"})
	case "quick_gelu":
		return x.Mul(x.Mul(core.Scalar(1.702, x.DType(), x.Device())).Sigmoid())
	case "relu":
		return x.ReLU()
	case "silu", "swish":
		return x.SiLU()
	}
	return x.GELU()
}

// activations are the hidden_act values activate implements.
var activations = map[string]bool{"gelu": true, "gelu_new": true, "gelu_pytorch_tanh": true, "quick_gelu": true,
	"relu": true, "silu": true, "swish": true}

const activationNames = "gelu, gelu_new, gelu_pytorch_tanh, quick_gelu, relu, silu, swish"

// patchEmbed is a ViT-style patch embedding: a conv with stride equal to
// its kernel, flattened to (B, patches, hidden).
func patchEmbed(conv *nn.Conv2d, pixels *core.Tensor) *core.Tensor {
	x := conv.Forward(pixels)
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	return x.Reshape(core.Shape{s[0], s[1], s[2] * s[3]}).Permute(core.Attrs{"dims": []int{0, 2, 1}})
}

// prependToken puts tok (hidden,) or (1, 1, hidden) before every sequence
// of x (B, S, hidden).
func prependToken(tok, x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	t := tok.Reshape(core.Shape{1, 1, s[2]}).Expand(core.Attrs{"shape": []int{s[0], 1, s[2]}})
	return core.Concat([]*core.Tensor{t, x}, core.Attrs{"axis": 1})
}

// firstToken is x[:, 0] of x (B, S, hidden).
func firstToken(x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	return x.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}).Reshape(core.Shape{s[0], s[2]})
}
