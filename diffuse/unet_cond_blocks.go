package diffuse

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/nn"
)

// The conditional UNet's building blocks: diffusers' Transformer2DModel
// (continuous input) with its BasicTransformerBlocks, and the
// CrossAttnDownBlock2D, CrossAttnUpBlock2D and UNetMidBlock2DCrossAttn that
// hold them between the ResNets of unet_blocks.go. As there, each is built
// from the checkpoint's tensors under diffusers' parameter names.

func (w *weights) linearNoBias(name string, in, out int) *linearLayer {
	l := &linearLayer{Linear: nn.Linear{In: in, Out: out}}
	l.Weight = w.param(name+".weight", uniformInit(in), out, in)
	w.register(&l.Base, []nn.NamedParameter{{Name: "weight", Param: l.Weight}})
	w.maybeInt8(name, adaptedLayer{lin: l})
	return l
}

func (w *weights) layerNorm(name string, dim int, eps float64) *nn.LayerNorm {
	l := &nn.LayerNorm{NormalizedShape: core.Shape{dim}, Eps: eps}
	l.Weight, l.Bias = w.param(name+".weight", onesInit, dim), w.param(name+".bias", zerosInit, dim)
	w.register(&l.Base, []nn.NamedParameter{{Name: "weight", Param: l.Weight}, {Name: "bias", Param: l.Bias}})
	return l
}

// crossAttention is diffusers' Attention as BasicTransformerBlock builds
// it: q, k, v projections (bias-free unless attention_bias) (k and v from the context's width),
// multi-head scaled dot-product attention, and a biased output projection;
// no norm, no residual (the block adds it).
type crossAttention struct {
	nn.Base
	q, k, v, out *linearLayer
	heads, hdim  int
	upcast       bool
	kv           kvCache
}

// kvCache holds one cross-attention layer's projected keys and values for
// the encoder states they came from. The encoder states of a sampling run
// are one tensor for every step (and every tile of a tiled step), and the
// projections depend on nothing else, so computing them once per run
// saves two matmuls per layer per call. It is only on while a run holds
// it (cacheCrossAttention): a cache left on across runs would serve stale
// keys after the weights change (a LoRA applied or rescaled).
type kvCache struct {
	on       bool
	ctx      *core.Tensor // the encoder states k and v were projected from
	k, v     *core.Tensor // split into heads: (B, heads, S, hdim)
	computed int          // cross-attention projections computed, for tests
}

func (w *weights) crossAttention(name string, dim, ctxDim, heads, hdim int, upcast, qkvBias bool) *crossAttention {
	inner := heads * hdim
	a := &crossAttention{heads: heads, hdim: hdim, upcast: upcast}
	proj := w.linearNoBias
	if qkvBias { // DiT's attention_bias
		proj = w.linear
	}
	a.q = proj(name+".to_q", dim, inner)
	a.k = proj(name+".to_k", ctxDim, inner)
	a.v = proj(name+".to_v", ctxDim, inner)
	a.out = w.linear(name+".to_out.0", inner, dim)
	w.register(&a.Base, nil, nn.NamedModule{Name: "to_q", Module: a.q}, nn.NamedModule{Name: "to_k", Module: a.k},
		nn.NamedModule{Name: "to_v", Module: a.v}, nn.NamedModule{Name: "to_out", Module: w.list(a.out)})
	return a
}

// forward attends from x (B, L, dim) to ctx (B, S, ctxDim), or to x itself
// when ctx is nil.
func (a *crossAttention) forward(x, ctx *core.Tensor) *core.Tensor {
	return a.forwardAdd(x, ctx, nil)
}

// forwardAdd is forward(x, ctx) plus res (nil: nothing), the residual
// added in the output projection's store where the CPU allows.
func (a *crossAttention) forwardAdd(x, ctx, res *core.Tensor) *core.Tensor {
	self := ctx == nil
	if self {
		ctx = x
	}
	if x.Err() != nil {
		return x
	}
	if ctx.Err() != nil {
		return ctx
	}
	b, l, s := dimOf(x, 0), dimOf(x, 1), dimOf(ctx, 1)
	split := func(t *core.Tensor, n int) *core.Tensor {
		return t.Reshape(core.Shape{b, n, a.heads, a.hdim}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	}
	q := split(a.q.Forward(x), l)
	var k, v *core.Tensor
	if a.kv.on && a.kv.ctx == ctx {
		k, v = a.kv.k, a.kv.v
	} else {
		k, v = split(a.k.Forward(ctx), s), split(a.v.Forward(ctx), s)
		if !self {
			a.kv.computed++
			if a.kv.on {
				a.kv.ctx, a.kv.k, a.kv.v = ctx, k, v
			}
		}
	}
	dtype := q.DType()
	// upcast_attention exists because half-precision scores overflow in
	// Stable Diffusion 2; diffusers' fused SDPA processor ignores the flag,
	// but its classic processor computes the scores in float32, as here.
	if a.upcast && dtype != core.F32 && dtype != core.F64 {
		q, k, v = q.Cast(core.F32), k.Cast(core.F32), v.Cast(core.F32)
	}
	attrs := core.Attrs{"scale": 1 / math.Sqrt(float64(a.hdim))}
	var joined *core.Tensor // (B, L, heads·hdim)
	if q.DType() == dtype {
		joined = nn.MergedHeadsAttention(q, k, v, nil, attrs)
	} else {
		o := q.ScaledDotProductAttention(k, v, nil, attrs)
		joined = o.Cast(dtype).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{b, l, a.heads * a.hdim})
		nn.ReleaseDead([]*core.Tensor{joined}, o)
	}
	// The projections die here, except keys and values a cache keeps.
	nn.ReleaseDead(nil, q)
	if self || !a.kv.on {
		nn.ReleaseDead(nil, k, v)
	}
	y := a.out.forwardAdd(joined, res)
	nn.ReleaseDead(nil, joined)
	return y
}

// feedForward is diffusers' FeedForward with GEGLU: net.0.proj maps dim to
// twice the inner width, the first half is gated by the exact GELU of the
// second, and net.2 maps back (net.1 is a parameterless dropout).
type feedForward struct {
	nn.Base
	proj, out *linearLayer
	inner     int
}

func (w *weights) feedForward(name string, dim int) *feedForward {
	inner := 4 * dim
	f := &feedForward{inner: inner}
	f.proj = w.linear(name+".net.0.proj", dim, 2*inner)
	f.out = w.linear(name+".net.2", inner, dim)
	geglu := &list{}
	w.register(&geglu.Base, nil, nn.NamedModule{Name: "proj", Module: f.proj})
	net := &list{}
	w.register(&net.Base, nil, nn.NamedModule{Name: "0", Module: geglu}, nn.NamedModule{Name: "2", Module: f.out})
	w.register(&f.Base, nil, nn.NamedModule{Name: "net", Module: net})
	return f
}

// forwardAdd is the block's output plus res, the residual added in the
// second projection's store where the CPU allows.
func (f *feedForward) forwardAdd(x, res *core.Tensor) *core.Tensor {
	h := f.proj.Forward(x)
	axis := len(h.Shape()) - 1
	val := h.Slice(core.Attrs{"axis": axis, "start": 0, "stop": f.inner})
	gate := h.Slice(core.Attrs{"axis": axis, "start": f.inner, "stop": 2 * f.inner})
	// One pass over the two halves, read in place (the bits of the ops).
	gated := fusion.MapOnCPU(gegluTree, val, gate)
	if gated == nil {
		gated = val.Mul(gate.GELU())
	}
	nn.ReleaseDead(nil, h) // val and gate are views of h
	y := f.out.forwardAdd(gated, res)
	nn.ReleaseDead(nil, gated)
	return y
}

// gegluTree is $0 · gelu($1): GEGLU's value half times the GELU of its gate.
var gegluTree = &fusion.Expr{Op: "mul", Args: []*fusion.Expr{{Arg: 0}, {Op: "gelu", Args: []*fusion.Expr{{Arg: 1}}}}}

// transformerBlock is BasicTransformerBlock with layer norms: self-attention,
// cross-attention to the encoder states, GEGLU feed-forward, each on the
// normed input and added back.
type transformerBlock struct {
	nn.Base
	norm1, norm2, norm3 *nn.LayerNorm
	attn1, attn2        *crossAttention
	ff                  *feedForward
}

func (w *weights) transformerBlock(name string, dim, ctxDim, heads, hdim int, upcast bool) *transformerBlock {
	// Transformer2DModel's norm_eps default; the UNet does not pass its own.
	const eps = 1e-5
	t := &transformerBlock{}
	t.norm1 = w.layerNorm(name+".norm1", dim, eps)
	t.attn1 = w.crossAttention(name+".attn1", dim, dim, heads, hdim, upcast, false)
	t.norm2 = w.layerNorm(name+".norm2", dim, eps)
	t.attn2 = w.crossAttention(name+".attn2", dim, ctxDim, heads, hdim, upcast, false)
	t.norm3 = w.layerNorm(name+".norm3", dim, eps)
	t.ff = w.feedForward(name+".ff", dim)
	w.register(&t.Base, nil, nn.NamedModule{Name: "norm1", Module: t.norm1}, nn.NamedModule{Name: "attn1", Module: t.attn1},
		nn.NamedModule{Name: "norm2", Module: t.norm2}, nn.NamedModule{Name: "attn2", Module: t.attn2},
		nn.NamedModule{Name: "norm3", Module: t.norm3}, nn.NamedModule{Name: "ff", Module: t.ff})
	return t
}

// forward releases what it makes (on the CPU, as nn.ReleaseDead allows),
// but not h, which the caller owns.
func (t *transformerBlock) forward(h, ctx *core.Tensor) *core.Tensor {
	n := t.norm1.Forward(h)
	h1 := t.attn1.forwardAdd(n, nil, h)
	nn.ReleaseDead(nil, n)
	n = t.norm2.Forward(h1)
	h2 := t.attn2.forwardAdd(n, ctx, h1)
	nn.ReleaseDead(nil, n, h1)
	n = t.norm3.Forward(h2)
	out := t.ff.forwardAdd(n, h2)
	nn.ReleaseDead(nil, n, h2)
	return out
}

// transformer2D is Transformer2DModel on a feature map: group norm (eps
// 1e-6, fixed by diffusers), proj_in (a 1×1 conv before flattening, or a
// linear after it with use_linear_projection), the transformer blocks over
// the H·W positions, proj_out the same way back, and the residual.
type transformer2D struct {
	nn.Base
	norm            *nn.GroupNorm
	inConv, outConv *convLayer   // without use_linear_projection
	inLin, outLin   *linearLayer // with it
	blocks          []*transformerBlock
	inner           int
}

func (w *weights) transformer2D(name string, b condBlock, ch, heads int) *transformer2D {
	hdim := ch / heads
	inner := heads * hdim
	t := &transformer2D{inner: inner}
	t.norm = w.groupNorm(name+".norm", b.groups, ch, 1e-6)
	var projIn, projOut nn.Module
	if b.linearProj {
		t.inLin = w.linear(name+".proj_in", ch, inner)
		projIn = t.inLin
	} else {
		t.inConv = w.conv(name+".proj_in", ch, inner, 1, 1, 0)
		projIn = t.inConv
	}
	blocks := make([]nn.Module, b.layers)
	for i := range blocks {
		t.blocks = append(t.blocks, w.transformerBlock(fmt.Sprintf("%s.transformer_blocks.%d", name, i), inner, b.ctxDim, heads, hdim, b.upcast))
		blocks[i] = t.blocks[i]
	}
	if b.linearProj {
		t.outLin = w.linear(name+".proj_out", inner, ch)
		projOut = t.outLin
	} else {
		t.outConv = w.conv(name+".proj_out", inner, ch, 1, 1, 0)
		projOut = t.outConv
	}
	w.register(&t.Base, nil, nn.NamedModule{Name: "norm", Module: t.norm}, nn.NamedModule{Name: "proj_in", Module: projIn},
		nn.NamedModule{Name: "transformer_blocks", Module: w.list(blocks...)}, nn.NamedModule{Name: "proj_out", Module: projOut})
	return t
}

func (t *transformer2D) forward(x, ctx *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	b, hgt, wid := s[0], s[2], s[3]
	// (B, C, H, W) -> (B, H·W, C), the order diffusers' permute(0, 2, 3, 1) gives.
	flatten := func(h *core.Tensor) *core.Tensor {
		c := dimOf(h, 1)
		return h.Permute(core.Attrs{"dims": []int{0, 2, 3, 1}}).Reshape(core.Shape{b, hgt * wid, c})
	}
	unflatten := func(h *core.Tensor) *core.Tensor {
		c := dimOf(h, 2)
		return h.Reshape(core.Shape{b, hgt, wid, c}).Permute(core.Attrs{"dims": []int{0, 3, 1, 2}})
	}
	// Each value made here is released once read for the last time (on the
	// CPU, as nn.ReleaseDead allows); flatten and unflatten may return views
	// of their argument, so a view the code goes on with is kept.
	normed := t.norm.Forward(x)
	var h *core.Tensor
	if t.inLin != nil {
		flat := flatten(normed)
		h = t.inLin.Forward(flat)
		nn.ReleaseDead(nil, normed, flat)
	} else {
		proj := t.inConv.Forward(normed)
		h = flatten(proj)
		nn.ReleaseDead([]*core.Tensor{h}, normed, proj)
	}
	for _, blk := range t.blocks {
		next := blk.forward(h, ctx)
		nn.ReleaseDead(nil, h)
		h = next
	}
	var out *core.Tensor
	if t.outLin != nil {
		proj := t.outLin.Forward(h)
		out = unflatten(proj).Add(x)
		nn.ReleaseDead(nil, h, proj)
	} else {
		maps := unflatten(h)
		proj := t.outConv.Forward(maps)
		out = proj.Add(x)
		nn.ReleaseDead(nil, h, maps, proj)
	}
	return out
}

// condBlock is what the cross-attention blocks share from the config.
type condBlock struct {
	unetBlock
	ctxDim, layers     int // cross_attention_dim, transformer_layers_per_block
	linearProj, upcast bool
}

// crossDownBlock is CrossAttnDownBlock2D: each ResNet followed by a
// Transformer2DModel, then a strided-conv downsampler (not in the last
// block); it returns its output and every state the up path concatenates.
type crossDownBlock struct {
	nn.Base
	resnets []*resnet
	attns   []*transformer2D
	down    *downsample // nil in the last block
}

func (w *weights) crossDownBlock(name string, b condBlock, in, out, layers, heads int, addDown bool, padding int) *crossDownBlock {
	d := &crossDownBlock{}
	var attns, resnets []nn.Module
	for i := range layers {
		resIn := out
		if i == 0 {
			resIn = in
		}
		r := w.resnet(fmt.Sprintf("%s.resnets.%d", name, i), b.unetBlock, resIn, out, 1)
		a := w.transformer2D(fmt.Sprintf("%s.attentions.%d", name, i), b, out, heads)
		d.resnets, resnets = append(d.resnets, r), append(resnets, r)
		d.attns, attns = append(d.attns, a), append(attns, a)
	}
	children := []nn.NamedModule{{Name: "attentions", Module: w.list(attns...)}, {Name: "resnets", Module: w.list(resnets...)}}
	if addDown {
		d.down = w.downsample(name+".downsamplers.0", out, padding)
		children = append(children, nn.NamedModule{Name: "downsamplers", Module: w.list(d.down)})
	}
	w.register(&d.Base, nil, children...)
	return d
}

func (d *crossDownBlock) forward(h, embAct, ctx *core.Tensor) (*core.Tensor, []*core.Tensor) {
	var outs []*core.Tensor
	for i, r := range d.resnets {
		mapped := r.forward(h, embAct)
		h = d.attns[i].forward(mapped, ctx)
		nn.ReleaseDead(nil, mapped)
		outs = append(outs, h)
	}
	if d.down != nil {
		h = d.down.forward(h)
		outs = append(outs, h)
	}
	return h, outs
}

// crossUpBlock is CrossAttnUpBlock2D: each ResNet takes the previous output
// concatenated with one of the down path's states (the last first) and is
// followed by a Transformer2DModel; then an upsampler (not in the last block).
type crossUpBlock struct {
	nn.Base
	resnets []*resnet
	attns   []*transformer2D
	up      *upsample
}

func (w *weights) crossUpBlock(name string, b condBlock, in, out, prev, layers, heads int, addUp bool) *crossUpBlock {
	u := &crossUpBlock{}
	var attns, resnets []nn.Module
	for i := range layers {
		skip := out
		if i == layers-1 {
			skip = in
		}
		resIn := out
		if i == 0 {
			resIn = prev
		}
		r := w.resnet(fmt.Sprintf("%s.resnets.%d", name, i), b.unetBlock, resIn+skip, out, 1)
		a := w.transformer2D(fmt.Sprintf("%s.attentions.%d", name, i), b, out, heads)
		u.resnets, resnets = append(u.resnets, r), append(resnets, r)
		u.attns, attns = append(u.attns, a), append(attns, a)
	}
	children := []nn.NamedModule{{Name: "attentions", Module: w.list(attns...)}, {Name: "resnets", Module: w.list(resnets...)}}
	if addUp {
		u.up = w.upsample(name+".upsamplers.0", out)
		children = append(children, nn.NamedModule{Name: "upsamplers", Module: w.list(u.up)})
	}
	w.register(&u.Base, nil, children...)
	return u
}

// forward consumes h and skips: on the CPU (as nn.ReleaseDead allows) it
// releases each once concatenated.
func (u *crossUpBlock) forward(h *core.Tensor, skips []*core.Tensor, embAct, ctx *core.Tensor) *core.Tensor {
	for i, r := range u.resnets {
		skip := skips[len(skips)-1-i]
		joined := core.Concat([]*core.Tensor{h, skip}, core.Attrs{"axis": 1})
		nn.ReleaseDead(nil, h, skip)
		mapped := r.forward(joined, embAct)
		h = u.attns[i].forward(mapped, ctx)
		nn.ReleaseDead(nil, joined, mapped)
	}
	if u.up != nil {
		h = u.up.forward(h)
	}
	return h
}

// crossMidBlock is UNetMidBlock2DCrossAttn: ResNet, Transformer2DModel,
// ResNet; the ResNets divide by mid_block_scale_factor, the transformer
// does not.
type crossMidBlock struct {
	nn.Base
	resnets []*resnet
	attn    *transformer2D
}

func (w *weights) crossMidBlock(name string, b condBlock, ch, heads int, scale float64) *crossMidBlock {
	m := &crossMidBlock{}
	m.attn = w.transformer2D(name+".attentions.0", b, ch, heads)
	for i := range 2 {
		m.resnets = append(m.resnets, w.resnet(fmt.Sprintf("%s.resnets.%d", name, i), b.unetBlock, ch, ch, scale))
	}
	w.register(&m.Base, nil, nn.NamedModule{Name: "attentions", Module: w.list(m.attn)},
		nn.NamedModule{Name: "resnets", Module: w.list(m.resnets[0], m.resnets[1])})
	return m
}

func (m *crossMidBlock) forward(h, embAct, ctx *core.Tensor) *core.Tensor {
	mapped := m.resnets[0].forward(h, embAct)
	attended := m.attn.forward(mapped, ctx)
	out := m.resnets[1].forward(attended, embAct)
	nn.ReleaseDead(nil, mapped, attended)
	return out
}

// crossAttentions lists the cross-attention layers under m.
func crossAttentions(m nn.Module) []*crossAttention {
	var out []*crossAttention
	var walk func(m nn.Module)
	walk = func(m nn.Module) {
		if a, ok := m.(*crossAttention); ok {
			out = append(out, a)
		}
		if c, ok := m.(interface{ Children() []nn.NamedModule }); ok {
			for _, child := range c.Children() {
				walk(child.Module)
			}
		}
	}
	walk(m)
	return out
}

// cacheCrossAttention turns the keys-and-values cache of every
// cross-attention layer under m on, and returns the function that turns
// it off and drops what it holds. Self-attention is never cached (its
// keys come from the sample).
func cacheCrossAttention(m nn.Module) (release func()) {
	layers := crossAttentions(m)
	for _, a := range layers {
		a.kv = kvCache{on: true, computed: a.kv.computed}
	}
	return func() {
		for _, a := range layers {
			a.kv = kvCache{computed: a.kv.computed}
		}
	}
}

// CacheCrossAttention makes the model compute each cross-attention
// layer's keys and values once per encoder-states tensor until release is
// called: a sampling loop passes the same encoder states at every step
// and (tiled) to every tile, so the text's projections are computed once
// per run. CondPipeline does this itself for every run; call it directly
// only around a loop of your own, and do not change the weights (apply,
// merge or rescale a LoRA) before release. Not safe for concurrent use.
func (m *UNet2DConditionModel) CacheCrossAttention() (release func()) { return cacheCrossAttention(m) }

// CacheCrossAttention is UNet2DConditionModel's, for the ControlNet's own
// cross-attention layers.
func (m *ControlNetModel) CacheCrossAttention() (release func()) { return cacheCrossAttention(m) }
