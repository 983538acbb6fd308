package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// AutoencoderKL is diffusers' AutoencoderKL, the VAE of Stable Diffusion:
// an encoder of DownEncoderBlock2Ds (ResNets without time conditioning,
// padding-0 strided downsampling), a mid block with one single-head
// self-attention, and a head giving a diagonal Gaussian's mean and log
// variance; a decoder of the mirror image (UpDecoderBlock2Ds with one more
// ResNet each, nearest upsampling). Its StateDict holds diffusers'
// parameter names (encoder.…, decoder.…, quant_conv, post_quant_conv).
//
// The model does not apply scaling_factor: as in diffusers, a pipeline
// multiplies the encoded latents by Config.ScalingFactor and divides the
// latents it decodes by it.
type AutoencoderKL struct {
	nn.Base
	Config AutoencoderKLConfig

	dev           core.Device
	dtype         core.DType
	enc           *vaeEncoder
	dec           *vaeDecoder
	quantConv     *convLayer // nil without use_quant_conv
	postQuantConv *convLayer // nil without use_post_quant_conv
}

// LoadAutoencoderKL loads an AutoencoderKL saved by diffusers'
// save_pretrained (a pipeline's vae/ folder): dir holds config.json and
// diffusion_pytorch_model.safetensors. As for LoadUNet2D, every tensor the
// config implies must be in the file with its shape and the file may hold
// no other; the error lists each one that is missing, misshaped or
// unexpected. WithDevice and WithDType choose where and in what dtype the
// weights live.
func LoadAutoencoderKL(dir string, opts ...LoadOption) (*AutoencoderKL, error) {
	m, o, err := loadWhole("diffuse: LoadAutoencoderKL", dir, opts, ParseAutoencoderKLConfig, buildAutoencoderKL)
	if err != nil {
		return nil, err
	}
	m.dev, m.dtype = o.dev, o.dtype
	return m, nil
}

// vaeEps is the epsilon of every group norm in diffusers' Encoder and
// Decoder (fixed there, not a config key).
const vaeEps = 1e-6

// buildAutoencoderKL builds the modules in diffusers' registration order
// (the decoder registers up_blocks before mid_block), so StateDict lists
// the tensors as torch's state_dict does.
func buildAutoencoderKL(cfg AutoencoderKLConfig, w *weights) *AutoencoderKL {
	m := &AutoencoderKL{Config: cfg}
	ch := cfg.BlockOutChannels
	n, g := len(ch), cfg.NormNumGroups

	e := &vaeEncoder{}
	e.convIn = w.conv("encoder.conv_in", cfg.InChannels, ch[0], 3, 1, 1)
	downs := make([]nn.Module, n)
	for i := range n {
		d := w.vaeDownBlock(fmt.Sprintf("encoder.down_blocks.%d", i), g, ch[max(i-1, 0)], ch[i], cfg.LayersPerBlock, i < n-1)
		e.downs, downs[i] = append(e.downs, d), d
	}
	e.mid = w.vaeMidBlock("encoder.mid_block", g, ch[n-1], cfg.MidBlockAddAttention)
	e.normOut = w.groupNorm("encoder.conv_norm_out", g, ch[n-1], vaeEps)
	e.convOut = w.conv("encoder.conv_out", ch[n-1], 2*cfg.LatentChannels, 3, 1, 1)
	w.register(&e.Base, nil, nn.NamedModule{Name: "conv_in", Module: e.convIn},
		nn.NamedModule{Name: "down_blocks", Module: w.list(downs...)}, nn.NamedModule{Name: "mid_block", Module: e.mid},
		nn.NamedModule{Name: "conv_norm_out", Module: e.normOut}, nn.NamedModule{Name: "conv_out", Module: e.convOut})

	d := &vaeDecoder{}
	d.convIn = w.conv("decoder.conv_in", cfg.LatentChannels, ch[n-1], 3, 1, 1)
	ups := make([]nn.Module, n)
	for i := range n {
		u := w.vaeUpBlock(fmt.Sprintf("decoder.up_blocks.%d", i), g, ch[n-1-max(i-1, 0)], ch[n-1-i], cfg.LayersPerBlock+1, i < n-1)
		d.ups, ups[i] = append(d.ups, u), u
	}
	d.mid = w.vaeMidBlock("decoder.mid_block", g, ch[n-1], cfg.MidBlockAddAttention)
	d.normOut = w.groupNorm("decoder.conv_norm_out", g, ch[0], vaeEps)
	d.convOut = w.conv("decoder.conv_out", ch[0], cfg.OutChannels, 3, 1, 1)
	w.register(&d.Base, nil, nn.NamedModule{Name: "conv_in", Module: d.convIn},
		nn.NamedModule{Name: "up_blocks", Module: w.list(ups...)}, nn.NamedModule{Name: "mid_block", Module: d.mid},
		nn.NamedModule{Name: "conv_norm_out", Module: d.normOut}, nn.NamedModule{Name: "conv_out", Module: d.convOut})

	m.enc, m.dec = e, d
	children := []nn.NamedModule{{Name: "encoder", Module: e}, {Name: "decoder", Module: d}}
	if cfg.UseQuantConv {
		m.quantConv = w.conv("quant_conv", 2*cfg.LatentChannels, 2*cfg.LatentChannels, 1, 1, 0)
		children = append(children, nn.NamedModule{Name: "quant_conv", Module: m.quantConv})
	}
	if cfg.UsePostQuantConv {
		m.postQuantConv = w.conv("post_quant_conv", cfg.LatentChannels, cfg.LatentChannels, 1, 1, 0)
		children = append(children, nn.NamedModule{Name: "post_quant_conv", Module: m.postQuantConv})
	}
	w.register(&m.Base, nil, children...)
	return m
}

// Device is where the weights live; Encode and Decode take tensors there.
func (m *AutoencoderKL) Device() core.Device { return m.dev }

// DType is the weights' dtype; Encode and Decode take tensors of it.
func (m *AutoencoderKL) DType() core.DType { return m.dtype }

// DiagonalGaussian is the encoder's posterior, diffusers'
// DiagonalGaussianDistribution: per-element mean and log variance, both
// (B, latent_channels, H/f, W/f). LogVar is clamped to [-30, 20] as
// diffusers clamps it, so exp(LogVar) neither underflows to 0 nor
// overflows float16.
type DiagonalGaussian struct {
	Mean, LogVar *core.Tensor
}

// Std is exp(LogVar / 2), computed as diffusers does (exp(0.5·logvar)).
func (g DiagonalGaussian) Std() *core.Tensor { return mul(g.LogVar, 0.5).Exp() }

// Mode is the distribution's most likely latent, the mean (diffusers'
// mode(), what img2img pipelines use with sample_mode "argmax").
func (g DiagonalGaussian) Mode() *core.Tensor { return g.Mean }

// Sample is Mean + Std·noise for standard normal noise of Mean's shape,
// dtype and device (diffusers' sample() draws it with randn_tensor; pass
// the same numbers to get the same latent, or SeededNoise's).
func (g DiagonalGaussian) Sample(noise *core.Tensor) (*core.Tensor, error) {
	if err := noise.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: DiagonalGaussian.Sample: noise: %w", err)
	}
	if err := g.Mean.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: DiagonalGaussian.Sample: mean: %w", err)
	}
	switch {
	case !noise.Shape().Equal(g.Mean.Shape()):
		return nil, fmt.Errorf("diffuse: DiagonalGaussian.Sample: noise has shape %v, the mean %v", noise.Shape(), g.Mean.Shape())
	case noise.DType() != g.Mean.DType():
		return nil, fmt.Errorf("diffuse: DiagonalGaussian.Sample: noise has dtype %s, the mean %s", noise.DType(), g.Mean.DType())
	case noise.Device() != g.Mean.Device():
		return nil, fmt.Errorf("diffuse: DiagonalGaussian.Sample: noise is on %s, the mean on %s", noise.Device(), g.Mean.Device())
	}
	defer core.NoGradScope()()
	x := g.Mean.Add(g.Std().Mul(noise))
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: DiagonalGaussian.Sample: %w", err)
	}
	return x, nil
}

// checkInput checks a (B, channels, H, W) input of Encode or Decode: H and
// W of at least minSide, the model's dtype and device.
func (m *AutoencoderKL) checkInput(op, what string, x *core.Tensor, channels, minSide int, key string) error {
	if err := x.Err(); err != nil {
		return fmt.Errorf("diffuse: AutoencoderKL.%s: %s: %w", op, what, err)
	}
	s := x.Shape()
	switch {
	case len(s) != 4 || s[1] != channels:
		return fmt.Errorf("diffuse: AutoencoderKL.%s: %s have shape %v, want (batch, %d, height, width) (%s %d)",
			op, what, s, channels, key, channels)
	case s[0] < 1 || s[2] < minSide || s[3] < minSide:
		return fmt.Errorf("diffuse: AutoencoderKL.%s: %s have shape %v; batch must be >= 1, height and width >= %d", op, what, s, minSide)
	case x.DType() != m.dtype:
		return fmt.Errorf("diffuse: AutoencoderKL.%s: %s have dtype %s, the model %s", op, what, x.DType(), m.dtype)
	case x.Device() != m.dev:
		return fmt.Errorf("diffuse: AutoencoderKL.%s: %s are on %s, the model on %s", op, what, x.Device(), m.dev)
	}
	return nil
}

// Encode maps images (B, in_channels, H, W), in [-1, 1] as diffusers'
// image processor makes them, to the posterior over latents of
// (B, latent_channels, H/f, W/f), f = 2^(levels-1). Each downsampling
// takes floor(side/2), as diffusers' padded stride-2 conv does, so H and
// W need not be multiples of f but must be at least f.
func (m *AutoencoderKL) Encode(images *core.Tensor) (DiagonalGaussian, error) {
	if err := m.checkInput("Encode", "images", images, m.Config.InChannels, m.Config.scale(), "in_channels"); err != nil {
		return DiagonalGaussian{}, err
	}
	defer core.NoGradScope()()
	h := m.enc.forward(images)
	if m.quantConv != nil {
		h = m.quantConv.Forward(h)
	}
	lc := m.Config.LatentChannels
	mean := h.Slice(core.Attrs{"axis": 1, "start": 0, "stop": lc})
	logvar := h.Slice(core.Attrs{"axis": 1, "start": lc, "stop": 2 * lc}).Clamp(core.Attrs{"min": -30.0, "max": 20.0})
	if err := logvar.Err(); err != nil {
		return DiagonalGaussian{}, fmt.Errorf("diffuse: AutoencoderKL.Encode: %w", err)
	}
	return DiagonalGaussian{Mean: mean, LogVar: logvar}, mean.Err()
}

// Decode maps latents (B, latent_channels, h, w) to images
// (B, out_channels, h·f, w·f), in about [-1, 1] (diffusers' image
// processor then maps them to [0, 1]). The whole image is one pass, whose
// largest activation is (B, block_out_channels[0], h·f, w·f) and whose
// mid-block attention compares all h·w positions pairwise; DecodeTiled
// bounds both by the tile size.
func (m *AutoencoderKL) Decode(latents *core.Tensor) (*core.Tensor, error) {
	if err := m.checkInput("Decode", "latents", latents, m.Config.LatentChannels, 1, "latent_channels"); err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	x := m.decode(latents, nil)
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: AutoencoderKL.Decode: %w", err)
	}
	return x, nil
}

// decode is post_quant_conv then the decoder, unchecked; meter, if not
// nil, sees every activation.
func (m *AutoencoderKL) decode(z *core.Tensor, meter *activationMeter) *core.Tensor {
	if m.postQuantConv != nil {
		q := m.postQuantConv.Forward(z)
		meter.see(q)
		out := m.dec.forward(q, meter)
		nn.ReleaseDead(nil, q)
		return out
	}
	return m.dec.forward(z, meter)
}

// activationMeter records the bytes of the largest tensor a decode makes
// at block granularity (each conv, ResNet, attention and sampler output),
// and of the attention score matrix, (B, heads, h·w, h·w), which the
// attention materialises on backends without a fused kernel. It is how
// the tests compare the memory of tiled and untiled decoding without
// depending on when the garbage collector returns buffers.
type activationMeter struct{ largest int64 }

func (a *activationMeter) see(ts ...*core.Tensor) {
	if a == nil {
		return
	}
	for _, t := range ts {
		if t.Err() == nil {
			a.largest = max(a.largest, int64(t.Shape().Numel()*t.DType().Size()))
		}
	}
}

func (a *activationMeter) seeScores(x *core.Tensor) {
	if a == nil || x.Err() != nil {
		return
	}
	s := x.Shape()
	hw := int64(s[2] * s[3])
	a.largest = max(a.largest, int64(s[0])*hw*hw*int64(x.DType().Size()))
}
