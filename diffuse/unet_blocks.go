package diffuse

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// The UNet's building blocks, each an nn.Module whose state dict carries
// diffusers' parameter names (ResnetBlock2D's norm1, conv1, time_emb_proj,
// ...; Attention's group_norm, to_q, to_k, to_v, to_out.0), so a model's
// StateDict is the checkpoint's and nn.Save writes a file diffusers loads.
// They are built straight from the checkpoint's tensors rather than
// randomly initialised and then overwritten: a real UNet has hundreds of
// megabytes of weights, and drawing them only to discard them would double
// the loading time and the peak memory.

// weights hands out a checkpoint's tensors as parameters, on the model's
// device in its dtype, and keeps a list of every problem (a missing tensor,
// a misshaped one) so that one error names them all.
type weights struct {
	file     *safetensors.File // nil when the weights are drawn (seed) or streamed
	stream   *weightStream     // set when the weights stay in the mapped file until used
	seed     uint64
	offset   int64 // the Philox stream's position, advanced by every draw
	dev      core.Device
	dtype    core.DType
	used     map[string]bool
	problems []string
	dummy    *nn.Parameter // stands in for a tensor with a problem; the load fails anyway
	int8     bool          // hold linear and conv weights as int8 (WithInt8Weights)
	// placeholder is what quantised layers' weight parameters hold.
	placeholder *core.Tensor
}

func newWeights(f *safetensors.File, dev core.Device, dtype core.DType) (*weights, error) {
	dummy, err := nn.NewParameter(core.Scalar(0, dtype, dev))
	if err != nil {
		return nil, err
	}
	return &weights{file: f, dev: dev, dtype: dtype, used: map[string]bool{}, dummy: dummy}, nil
}

// paramInit is how a parameter is drawn when a model is built without a
// checkpoint: torch's default initialisation of its layer.
type paramInit struct {
	kind  byte    // 'u' uniform in [-bound, bound], '1' ones, '0' zeros, 'n' standard normal
	bound float64 // 'u': 1/sqrt(fan_in), what kaiming_uniform(a=√5) gives weights and torch gives biases
}

func uniformInit(fanIn int) paramInit {
	return paramInit{kind: 'u', bound: 1 / math.Sqrt(float64(fanIn))}
}

var (
	onesInit   = paramInit{kind: '1'}
	zerosInit  = paramInit{kind: '0'}
	normalInit = paramInit{kind: 'n'}
)

// draw makes a parameter of shape by ini from the weights' Philox stream.
func (w *weights) draw(ini paramInit, shape core.Shape) *core.Tensor {
	attrs := core.Attrs{"shape": []int(shape), "dtype": core.F32, "seed": int64(w.seed), "offset": w.offset}
	var t *core.Tensor
	switch ini.kind {
	case 'u':
		t = mul(core.Rand(attrs), 2*ini.bound).Sub(core.Scalar(ini.bound, core.F32))
		w.offset += int64(shape.Numel())
	case 'n':
		t = core.Randn(attrs)
		w.offset += int64(shape.Numel())
	case '1':
		t = core.Ones(shape, core.F32)
	default:
		t = core.Zeros(shape, core.F32)
	}
	return t.Cast(w.dtype).To(w.dev)
}

// param is tensor name, which must have the given shape; without a
// checkpoint it is drawn by ini.
func (w *weights) param(name string, ini paramInit, shape ...int) *nn.Parameter {
	w.used[name] = true
	if w.stream != nil {
		return w.streamedParam(name, core.Shape(shape))
	}
	if w.file == nil {
		p, err := nn.NewParameter(w.draw(ini, core.Shape(shape)))
		if err != nil {
			w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
			return w.dummy
		}
		return p
	}
	st, ok := w.file.Tensors[name]
	if problem := misfit(name, ok, st.Shape, st.DType, core.Shape(shape)); problem != "" {
		w.problems = append(w.problems, problem)
		return w.dummy
	}
	p, err := nn.NewParameter(tensorFor(st, w.dtype, w.dev))
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
		return w.dummy
	}
	return p
}

// misfit is what is wrong with checkpoint tensor name (found, of shape
// and dtype) for a parameter of shape want, or "" when it fits.
func misfit(name string, found bool, shape core.Shape, dtype core.DType, want core.Shape) string {
	switch {
	case !found:
		return fmt.Sprintf("tensor %s is missing (want shape %v)", name, want)
	case !shape.Equal(want):
		return fmt.Sprintf("tensor %s has shape %v, want %v", name, shape, want)
	case !dtype.IsFloat():
		return fmt.Sprintf("tensor %s has dtype %s, want a float dtype", name, dtype)
	}
	return ""
}

// tensorFor is a checkpoint's tensor on dev in dtype.
func tensorFor(st safetensors.Tensor, dtype core.DType, dev core.Device) *core.Tensor {
	if st.DType == dtype {
		return st.ToTensor(dev)
	}
	// Cast on the CPU: WebGPU refuses f64, and a checkpoint may hold it.
	return st.ToTensor(core.CPU).Cast(dtype).To(dev)
}

// register adds a module's parameters and children; the names are fixed
// and the values non-nil, so an error here is a bug, kept as a problem
// rather than a panic.
func (w *weights) register(base *nn.Base, params []nn.NamedParameter, children ...nn.NamedModule) {
	for _, p := range params {
		if err := base.RegisterParameter(p.Name, p.Param); err != nil {
			w.problems = append(w.problems, err.Error())
		}
	}
	for _, c := range children {
		if err := base.RegisterModule(c.Name, c.Module); err != nil {
			w.problems = append(w.problems, err.Error())
		}
	}
}

// check reports every problem, and every tensor of the file the model does
// not have, in one error.
func (w *weights) check(path string) error {
	var extra []string
	if w.file != nil {
		for name := range w.file.Tensors {
			if !w.used[name] {
				extra = append(extra, name)
			}
		}
	}
	if w.stream != nil {
		for name := range w.stream.entries {
			if !w.used[name] {
				extra = append(extra, name)
			}
		}
	}
	sort.Strings(extra)
	problems := w.problems
	for _, name := range extra {
		problems = append(problems, fmt.Sprintf("tensor %s is not a parameter of the model", name))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("diffuse: %s does not match the model's config (%d problem(s)):\n  %s", path, len(problems), strings.Join(problems, "\n  "))
}

func (w *weights) conv(name string, in, out, k, stride, pad int) *convLayer {
	c := &convLayer{Conv2d: nn.Conv2d{ConvGeometry: nn.ConvGeometry{In: in, Out: out, Kernel: []int{k, k},
		Stride: []int{stride, stride}, Padding: []int{pad, pad}, Dilation: []int{1, 1}, Groups: 1}}}
	ini := uniformInit(in * k * k)
	c.Weight, c.Bias = w.param(name+".weight", ini, out, in, k, k), w.param(name+".bias", ini, out)
	w.register(&c.Base, []nn.NamedParameter{{Name: "weight", Param: c.Weight}, {Name: "bias", Param: c.Bias}})
	w.maybeInt8(name, adaptedLayer{conv: c})
	return c
}

func (w *weights) linear(name string, in, out int) *linearLayer {
	l := &linearLayer{Linear: nn.Linear{In: in, Out: out}}
	l.Weight, l.Bias = w.param(name+".weight", uniformInit(in), out, in), w.param(name+".bias", uniformInit(in), out)
	w.register(&l.Base, []nn.NamedParameter{{Name: "weight", Param: l.Weight}, {Name: "bias", Param: l.Bias}})
	w.maybeInt8(name, adaptedLayer{lin: l})
	return l
}

func (w *weights) groupNorm(name string, groups, ch int, eps float64) *nn.GroupNorm {
	g := &nn.GroupNorm{Groups: groups, Channels: ch, Eps: eps}
	g.Weight, g.Bias = w.param(name+".weight", onesInit, ch), w.param(name+".bias", zerosInit, ch)
	w.register(&g.Base, []nn.NamedParameter{{Name: "weight", Param: g.Weight}, {Name: "bias", Param: g.Bias}})
	return g
}

// list is torch's ModuleList: children named 0, 1, ...
type list struct{ nn.Base }

func (w *weights) list(items ...nn.Module) *list {
	l := &list{}
	for i, m := range items {
		w.register(&l.Base, nil, nn.NamedModule{Name: fmt.Sprint(i), Module: m})
	}
	return l
}

// resnet is diffusers' ResnetBlock2D (pre-norm, SiLU, conv_shortcut when
// the widths differ), with the "default" time conditioning (the projected
// embedding added before norm2) or "scale_shift" (norm2's output scaled by
// 1 + scale and shifted).
type resnet struct {
	nn.Base
	norm1, norm2 *nn.GroupNorm
	conv1, conv2 *convLayer
	timeProj     *linearLayer
	shortcut     *convLayer // nil when in == out
	scaleShift   bool
	outScale     float64
}

// unetBlock is what the blocks share from the config.
type unetBlock struct {
	groups     int
	eps        float64
	temb       int
	scaleShift bool
}

func (w *weights) resnet(name string, b unetBlock, in, out int, outScale float64) *resnet {
	r := &resnet{scaleShift: b.scaleShift, outScale: outScale}
	projOut := out
	if b.scaleShift {
		projOut = 2 * out
	}
	r.norm1 = w.groupNorm(name+".norm1", b.groups, in, b.eps)
	r.conv1 = w.conv(name+".conv1", in, out, 3, 1, 1)
	r.timeProj = w.linear(name+".time_emb_proj", b.temb, projOut)
	r.norm2 = w.groupNorm(name+".norm2", b.groups, out, b.eps)
	r.conv2 = w.conv(name+".conv2", out, out, 3, 1, 1)
	children := []nn.NamedModule{{Name: "norm1", Module: r.norm1}, {Name: "conv1", Module: r.conv1},
		{Name: "time_emb_proj", Module: r.timeProj}, {Name: "norm2", Module: r.norm2}, {Name: "conv2", Module: r.conv2}}
	if in != out {
		r.shortcut = w.conv(name+".conv_shortcut", in, out, 1, 1, 0)
		children = append(children, nn.NamedModule{Name: "conv_shortcut", Module: r.shortcut})
	}
	w.register(&r.Base, nil, children...)
	return r
}

// forward maps x (B, in, H, W) to (B, out, H, W); tembAct is SiLU of the
// time embedding (every ResNet applies SiLU to the same embedding first,
// so the model does it once).
// forward releases the feature maps it makes once they are read for the
// last time (on the CPU, as nn.ReleaseDead allows), but not x, which the
// caller owns.
func (r *resnet) forward(x, tembAct *core.Tensor) *core.Tensor {
	act := r.norm1.ForwardSiLU(x)
	h := r.conv1.Forward(act)
	nn.ReleaseDead(nil, act)
	t := r.timeProj.Forward(tembAct)
	t = t.Reshape(core.Shape{dimOf(t, 0), dimOf(t, 1), 1, 1})
	if r.scaleShift {
		normed := r.norm2.Forward(h)
		half := dimOf(t, 1) / 2
		scale := t.Slice(core.Attrs{"axis": 1, "start": 0, "stop": half})
		shift := t.Slice(core.Attrs{"axis": 1, "start": half, "stop": 2 * half})
		scaled := normed.Mul(scalarLike(normed, 1).Add(scale))
		shifted := scaled.Add(shift)
		act = shifted.SiLU()
		nn.ReleaseDead(nil, h, normed, scaled, shifted)
	} else {
		sum := h.Add(t)
		act = r.norm2.ForwardSiLU(sum)
		nn.ReleaseDead(nil, h, sum)
	}
	h = r.conv2.Forward(act)
	nn.ReleaseDead(nil, act)
	res := x
	if r.shortcut != nil {
		res = r.shortcut.Forward(x)
	}
	out := res.Add(h)
	nn.ReleaseDead(nil, h)
	if res != x {
		nn.ReleaseDead(nil, res)
	}
	if r.outScale != 1 {
		scaled := div(out, r.outScale)
		nn.ReleaseDead(nil, out)
		out = scaled
	}
	return out
}

// attention is diffusers' Attention as the UNet2D blocks build it (the
// former AttentionBlock): group norm (absent in a scale_shift mid block),
// multi-head self-attention over the H·W positions, output projection,
// residual, then division by the block's output scale.
type attention struct {
	nn.Base
	norm          *nn.GroupNorm // nil without norm groups
	q, k, v, out  *linearLayer
	heads, hdim   int
	rescaleOutput float64
}

func (w *weights) attention(name string, ch, headDim, groups int, eps, rescale float64) *attention {
	heads := ch / headDim
	inner := heads * headDim
	a := &attention{heads: heads, hdim: headDim, rescaleOutput: rescale}
	var children []nn.NamedModule
	if groups > 0 {
		a.norm = w.groupNorm(name+".group_norm", groups, ch, eps)
		children = append(children, nn.NamedModule{Name: "group_norm", Module: a.norm})
	}
	a.q = w.linear(name+".to_q", ch, inner)
	a.k = w.linear(name+".to_k", ch, inner)
	a.v = w.linear(name+".to_v", ch, inner)
	a.out = w.linear(name+".to_out.0", inner, ch)
	children = append(children, nn.NamedModule{Name: "to_q", Module: a.q}, nn.NamedModule{Name: "to_k", Module: a.k},
		nn.NamedModule{Name: "to_v", Module: a.v}, nn.NamedModule{Name: "to_out", Module: w.list(a.out)})
	w.register(&a.Base, nil, children...)
	return a
}

func (a *attention) forward(x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	b, c, hw := s[0], s[1], s[2]*s[3]
	normed := x
	if a.norm != nil {
		normed = a.norm.Forward(x)
	}
	h := normed.Reshape(core.Shape{b, c, hw}).Transpose() // (B, HW, C)
	split := func(t *core.Tensor) *core.Tensor {
		return t.Reshape(core.Shape{b, hw, a.heads, a.hdim}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	}
	q, k, v := split(a.q.Forward(h)), split(a.k.Forward(h)), split(a.v.Forward(h))
	joined := nn.MergedHeadsAttention(q, k, v, nil, core.Attrs{"scale": 1 / math.Sqrt(float64(a.hdim))})
	// Each value made here is released once read for the last time (on
	// the CPU, as nn.ReleaseDead allows); x is the caller's.
	if normed != x {
		nn.ReleaseDead(nil, normed)
	}
	nn.ReleaseDead(nil, q, k, v)
	proj := a.out.Forward(joined)
	nn.ReleaseDead(nil, joined)
	o := proj.Transpose().Reshape(s).Add(x)
	nn.ReleaseDead(nil, proj)
	if a.rescaleOutput != 1 {
		scaled := div(o, a.rescaleOutput)
		nn.ReleaseDead(nil, o)
		o = scaled
	}
	return o
}

// downsample is Downsample2D with a convolution: a 3×3 stride-2 conv; with
// padding 0 diffusers first pads one zero row and column at the bottom
// and right.
type downsample struct {
	nn.Base
	conv   *convLayer
	padEnd bool
}

func (w *weights) downsample(name string, ch, padding int) *downsample {
	d := &downsample{conv: w.conv(name+".conv", ch, ch, 3, 2, padding), padEnd: padding == 0}
	w.register(&d.Base, nil, nn.NamedModule{Name: "conv", Module: d.conv})
	return d
}

func (d *downsample) forward(x *core.Tensor) *core.Tensor {
	if d.padEnd {
		x = x.Pad(core.Attrs{"pads": []int{0, 1, 0, 1}})
	}
	return d.conv.Forward(x)
}

// upsample is Upsample2D with a convolution: nearest-neighbour doubling,
// then a 3×3 conv.
type upsample struct {
	nn.Base
	conv *convLayer
}

func (w *weights) upsample(name string, ch int) *upsample {
	u := &upsample{conv: w.conv(name+".conv", ch, ch, 3, 1, 1)}
	w.register(&u.Base, nil, nn.NamedModule{Name: "conv", Module: u.conv})
	return u
}

func (u *upsample) forward(x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	up := x.Interpolate(core.Attrs{"size": []int{2 * s[2], 2 * s[3]}, "mode": "nearest"})
	out := u.conv.Forward(up)
	nn.ReleaseDead(nil, up)
	return out
}

// scalarLike is a 0-dim tensor of v in x's dtype on x's device.
func scalarLike(x *core.Tensor, v float64) *core.Tensor {
	return core.Scalar(v, x.DType(), x.Device())
}

// dimOf is dimension i of t, or 0 when t has fewer (a failed tensor's
// error then surfaces from the next op rather than a panic here).
func dimOf(t *core.Tensor, i int) int {
	s := t.Shape()
	if i < len(s) {
		return s[i]
	}
	return 0
}

// downBlock is DownBlock2D, or AttnDownBlock2D with an attention after each
// ResNet; it returns its output and every state the up path concatenates.
type downBlock struct {
	nn.Base
	resnets []*resnet
	attns   []*attention // empty in DownBlock2D
	down    *downsample  // nil in the last block
}

func (w *weights) downBlock(name string, b unetBlock, withAttn bool, in, out, layers, headDim int, addDown bool, padding int) *downBlock {
	d := &downBlock{}
	var attns, resnets []nn.Module
	for i := range layers {
		resIn := out
		if i == 0 {
			resIn = in
		}
		r := w.resnet(fmt.Sprintf("%s.resnets.%d", name, i), b, resIn, out, 1)
		d.resnets, resnets = append(d.resnets, r), append(resnets, r)
		if withAttn {
			a := w.attention(fmt.Sprintf("%s.attentions.%d", name, i), out, headDim, b.groups, b.eps, 1)
			d.attns, attns = append(d.attns, a), append(attns, a)
		}
	}
	var children []nn.NamedModule
	if withAttn {
		children = append(children, nn.NamedModule{Name: "attentions", Module: w.list(attns...)})
	}
	children = append(children, nn.NamedModule{Name: "resnets", Module: w.list(resnets...)})
	if addDown {
		d.down = w.downsample(name+".downsamplers.0", out, padding)
		children = append(children, nn.NamedModule{Name: "downsamplers", Module: w.list(d.down)})
	}
	w.register(&d.Base, nil, children...)
	return d
}

func (d *downBlock) forward(h, embAct *core.Tensor) (*core.Tensor, []*core.Tensor) {
	var outs []*core.Tensor
	for i, r := range d.resnets {
		h = r.forward(h, embAct)
		if d.attns != nil {
			mapped := h
			h = d.attns[i].forward(mapped)
			nn.ReleaseDead([]*core.Tensor{h}, mapped)
		}
		outs = append(outs, h)
	}
	if d.down != nil {
		h = d.down.forward(h)
		outs = append(outs, h)
	}
	return h, outs
}

// upBlock is UpBlock2D, or AttnUpBlock2D: each ResNet takes the previous
// output concatenated (on channels) with one of the down path's states,
// the last first.
type upBlock struct {
	nn.Base
	resnets []*resnet
	attns   []*attention
	up      *upsample // nil in the last block
}

func (w *weights) upBlock(name string, b unetBlock, withAttn bool, in, out, prev, layers, headDim int, addUp bool) *upBlock {
	u := &upBlock{}
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
		r := w.resnet(fmt.Sprintf("%s.resnets.%d", name, i), b, resIn+skip, out, 1)
		u.resnets, resnets = append(u.resnets, r), append(resnets, r)
		if withAttn {
			a := w.attention(fmt.Sprintf("%s.attentions.%d", name, i), out, headDim, b.groups, b.eps, 1)
			u.attns, attns = append(u.attns, a), append(attns, a)
		}
	}
	var children []nn.NamedModule
	if withAttn {
		children = append(children, nn.NamedModule{Name: "attentions", Module: w.list(attns...)})
	}
	children = append(children, nn.NamedModule{Name: "resnets", Module: w.list(resnets...)})
	if addUp {
		u.up = w.upsample(name+".upsamplers.0", out)
		children = append(children, nn.NamedModule{Name: "upsamplers", Module: w.list(u.up)})
	}
	w.register(&u.Base, nil, children...)
	return u
}

// forward consumes h and skips, these from the end: on the CPU (as
// nn.ReleaseDead allows) it releases each once concatenated.
func (u *upBlock) forward(h *core.Tensor, skips []*core.Tensor, embAct *core.Tensor) *core.Tensor {
	for i, r := range u.resnets {
		skip := skips[len(skips)-1-i]
		joined := core.Concat([]*core.Tensor{h, skip}, core.Attrs{"axis": 1})
		nn.ReleaseDead(nil, h, skip)
		h = r.forward(joined, embAct)
		nn.ReleaseDead(nil, joined)
		if u.attns != nil {
			mapped := h
			h = u.attns[i].forward(mapped)
			nn.ReleaseDead([]*core.Tensor{h}, mapped)
		}
	}
	if u.up != nil {
		h = u.up.forward(h)
	}
	return h
}

// midBlock is UNetMidBlock2D: a ResNet, then one attention (when
// add_attention) and one more ResNet; every one divides its output by
// mid_block_scale_factor.
type midBlock struct {
	nn.Base
	resnets []*resnet
	attn    *attention // nil without add_attention
}

func (w *weights) midBlock(name string, b unetBlock, ch, headDim, attnGroups int, addAttn bool, scale float64) *midBlock {
	m := &midBlock{}
	var children []nn.NamedModule
	if addAttn {
		m.attn = w.attention(name+".attentions.0", ch, headDim, attnGroups, b.eps, scale)
		children = append(children, nn.NamedModule{Name: "attentions", Module: w.list(m.attn)})
	}
	for i := range 2 {
		m.resnets = append(m.resnets, w.resnet(fmt.Sprintf("%s.resnets.%d", name, i), b, ch, ch, scale))
	}
	children = append(children, nn.NamedModule{Name: "resnets", Module: w.list(m.resnets[0], m.resnets[1])})
	w.register(&m.Base, nil, children...)
	return m
}

// forward does not release h, which the down path also hands to the up
// path; it releases the states it makes.
func (m *midBlock) forward(h, embAct *core.Tensor) *core.Tensor {
	mapped := m.resnets[0].forward(h, embAct)
	attended := mapped
	if m.attn != nil {
		attended = m.attn.forward(mapped)
	}
	out := m.resnets[1].forward(attended, embAct)
	nn.ReleaseDead(nil, mapped, attended)
	return out
}
