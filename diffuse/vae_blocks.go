package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The VAE's blocks. They reuse the UNet's parts (conv, group norm, the
// attention, the samplers) but not its ResNet: diffusers builds the VAE's
// ResnetBlock2Ds with temb_channels None, so they have no time_emb_proj,
// and the UNet's resnet always has one.

// plainResnet is ResnetBlock2D without time conditioning: norm1, SiLU,
// conv1, norm2, SiLU, conv2, plus the input (through conv_shortcut when
// the widths differ).
type plainResnet struct {
	nn.Base
	norm1, norm2 *nn.GroupNorm
	conv1, conv2 *convLayer
	shortcut     *convLayer // nil when in == out
}

func (w *weights) plainResnet(name string, groups, in, out int) *plainResnet {
	r := &plainResnet{}
	r.norm1 = w.groupNorm(name+".norm1", groups, in, vaeEps)
	r.conv1 = w.conv(name+".conv1", in, out, 3, 1, 1)
	r.norm2 = w.groupNorm(name+".norm2", groups, out, vaeEps)
	r.conv2 = w.conv(name+".conv2", out, out, 3, 1, 1)
	children := []nn.NamedModule{{Name: "norm1", Module: r.norm1}, {Name: "conv1", Module: r.conv1},
		{Name: "norm2", Module: r.norm2}, {Name: "conv2", Module: r.conv2}}
	if in != out {
		r.shortcut = w.conv(name+".conv_shortcut", in, out, 1, 1, 0)
		children = append(children, nn.NamedModule{Name: "conv_shortcut", Module: r.shortcut})
	}
	w.register(&r.Base, nil, children...)
	return r
}

// forward releases its intermediates at their last use (on the CPU, as
// nn.ReleaseDead allows), but not x, which is the caller's.
func (r *plainResnet) forward(x *core.Tensor, meter *activationMeter) *core.Tensor {
	act := r.norm1.ForwardSiLU(x)
	h := r.conv1.Forward(act)
	nn.ReleaseDead(nil, act)
	act = r.norm2.ForwardSiLU(h)
	nn.ReleaseDead(nil, h)
	h = r.conv2.Forward(act)
	nn.ReleaseDead(nil, act)
	meter.see(h)
	if r.shortcut == nil {
		out := x.Add(h)
		nn.ReleaseDead(nil, h)
		return out
	}
	sc := r.shortcut.Forward(x)
	out := sc.Add(h)
	nn.ReleaseDead(nil, sc, h)
	return out
}

// plainResnets builds a block's layers ResNets, the first taking in
// channels, and the list they register under ("resnets").
func (w *weights) plainResnets(name string, groups, in, out, layers int) ([]*plainResnet, nn.NamedModule) {
	rs := make([]*plainResnet, layers)
	mods := make([]nn.Module, layers)
	for i := range layers {
		resIn := out
		if i == 0 {
			resIn = in
		}
		rs[i] = w.plainResnet(fmt.Sprintf("%s.resnets.%d", name, i), groups, resIn, out)
		mods[i] = rs[i]
	}
	return rs, nn.NamedModule{Name: "resnets", Module: w.list(mods...)}
}

// vaeDownBlock is DownEncoderBlock2D: ResNets, then (except in the last
// block) a padding-0 stride-2 conv.
type vaeDownBlock struct {
	nn.Base
	resnets []*plainResnet
	down    *downsample // nil in the last block
}

func (w *weights) vaeDownBlock(name string, groups, in, out, layers int, addDown bool) *vaeDownBlock {
	d := &vaeDownBlock{}
	var resnets nn.NamedModule
	d.resnets, resnets = w.plainResnets(name, groups, in, out, layers)
	children := []nn.NamedModule{resnets}
	if addDown {
		d.down = w.downsample(name+".downsamplers.0", out, 0)
		children = append(children, nn.NamedModule{Name: "downsamplers", Module: w.list(d.down)})
	}
	w.register(&d.Base, nil, children...)
	return d
}

// vaeUpBlock is UpDecoderBlock2D: ResNets, then (except in the last block)
// nearest doubling and a conv.
type vaeUpBlock struct {
	nn.Base
	resnets []*plainResnet
	up      *upsample // nil in the last block
}

func (w *weights) vaeUpBlock(name string, groups, in, out, layers int, addUp bool) *vaeUpBlock {
	u := &vaeUpBlock{}
	var resnets nn.NamedModule
	u.resnets, resnets = w.plainResnets(name, groups, in, out, layers)
	children := []nn.NamedModule{resnets}
	if addUp {
		u.up = w.upsample(name+".upsamplers.0", out)
		children = append(children, nn.NamedModule{Name: "upsamplers", Module: w.list(u.up)})
	}
	w.register(&u.Base, nil, children...)
	return u
}

// vaeMidBlock is UNetMidBlock2D as the VAE builds it: a ResNet, one
// single-head attention over all positions (when mid_block_add_attention;
// diffusers passes attention_head_dim = the width), another ResNet, all
// with output scale 1.
type vaeMidBlock struct {
	nn.Base
	resnets [2]*plainResnet
	attn    *attention // nil without mid_block_add_attention
}

func (w *weights) vaeMidBlock(name string, groups, ch int, addAttn bool) *vaeMidBlock {
	m := &vaeMidBlock{}
	var children []nn.NamedModule
	if addAttn {
		m.attn = w.attention(name+".attentions.0", ch, ch, groups, vaeEps, 1)
		children = append(children, nn.NamedModule{Name: "attentions", Module: w.list(m.attn)})
	}
	for i := range m.resnets {
		m.resnets[i] = w.plainResnet(fmt.Sprintf("%s.resnets.%d", name, i), groups, ch, ch)
	}
	children = append(children, nn.NamedModule{Name: "resnets", Module: w.list(m.resnets[0], m.resnets[1])})
	w.register(&m.Base, nil, children...)
	return m
}

func (m *vaeMidBlock) forward(x *core.Tensor, meter *activationMeter) *core.Tensor {
	h := m.resnets[0].forward(x, meter)
	if m.attn != nil {
		meter.seeScores(h)
		a := m.attn.forward(h)
		nn.ReleaseDead(nil, h)
		h = a
		meter.see(h)
	}
	out := m.resnets[1].forward(h, meter)
	nn.ReleaseDead(nil, h)
	return out
}

// vaeEncoder is diffusers' Encoder with double_z: its output has
// 2·latent_channels channels, the mean's and the log variance's.
type vaeEncoder struct {
	nn.Base
	convIn  *convLayer
	downs   []*vaeDownBlock
	mid     *vaeMidBlock
	normOut *nn.GroupNorm
	convOut *convLayer
}

func (e *vaeEncoder) forward(x *core.Tensor) *core.Tensor {
	h := e.convIn.Forward(x)
	for _, d := range e.downs {
		for _, r := range d.resnets {
			h = r.forward(h, nil)
		}
		if d.down != nil {
			h = d.down.forward(h)
		}
	}
	h = e.mid.forward(h, nil)
	return e.convOut.Forward(e.normOut.ForwardSiLU(h))
}

// vaeDecoder is diffusers' Decoder with group norms (not the spatial norm
// of MoVQ).
type vaeDecoder struct {
	nn.Base
	convIn  *convLayer
	mid     *vaeMidBlock
	ups     []*vaeUpBlock
	normOut *nn.GroupNorm
	convOut *convLayer
}

// forward releases each block's input once the block has made its output
// (on the CPU, as nn.ReleaseDead allows), all but z, the caller's: left
// to the collector, a 512x512 decode held 387 MB of storage at its peak
// against the 192 it keeps alive (BenchmarkVAEDecode).
func (d *vaeDecoder) forward(z *core.Tensor, meter *activationMeter) *core.Tensor {
	h := d.convIn.Forward(z)
	meter.see(h)
	next := func(out *core.Tensor) {
		nn.ReleaseDead(nil, h)
		h = out
	}
	next(d.mid.forward(h, meter))
	for _, u := range d.ups {
		for _, r := range u.resnets {
			next(r.forward(h, meter))
		}
		if u.up != nil {
			next(u.up.forward(h))
			meter.see(h)
		}
	}
	act := d.normOut.ForwardSiLU(h)
	next(d.convOut.Forward(act))
	nn.ReleaseDead(nil, act)
	meter.see(h)
	return h
}
