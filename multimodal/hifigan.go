package multimodal

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// SpeechT5HifiGan is transformers' SpeechT5HifiGan vocoder: the
// spectrogram normalised by the checkpoint's mean and scale, conv_pre,
// then per upsampler a leaky ReLU, a transposed convolution and the mean
// of its residual blocks (dilated convolutions with leaky ReLUs), and at
// the end a leaky ReLU (slope 0.01), conv_post and tanh. Its StateDict
// holds the names save_pretrained writes (without weight norm, as
// transformers saves it).
type SpeechT5HifiGan struct {
	nn.Base
	Config HiFiGANConfig

	dev         core.Device
	dtype       core.DType
	convPre     *nn.Conv1d
	ups         []*convTranspose1d
	blocks      []*hifiResBlock // len(ups)·len(resblock_kernel_sizes), upsampler-major
	convPost    *nn.Conv1d
	mean, scale *nn.Buffer
}

// convTranspose1d is torch.nn.ConvTranspose1d (weight (In, Out, K)),
// run as a 2-D transposed convolution of height 1.
type convTranspose1d struct {
	nn.Base
	weight, bias   *nn.Parameter
	in, out, k     int
	stride, padAmt int
}

func (c *convTranspose1d) forward(x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	w := c.weight.Tensor().Reshape(core.Shape{c.in, c.out, 1, c.k})
	y := x.Reshape(core.Shape{s[0], s[1], 1, s[2]}).ConvTranspose2d(w, c.bias.Tensor(),
		core.Attrs{"stride": []int{1, c.stride}, "padding": []int{0, c.padAmt}, "dilation": []int{1, 1}, "groups": 1})
	ys := y.Shape()
	return y.Reshape(core.Shape{ys[0], ys[1], ys[3]})
}

// hifiResBlock is HifiGanResidualBlock: per dilation, x + conv2(lrelu(
// conv1(lrelu(x)))).
type hifiResBlock struct {
	nn.Base
	convs1, convs2 []*nn.Conv1d
	slope          float64
}

func (w *weights) dilatedConv(name string, ch, k, dilation int) *nn.Conv1d {
	c := &nn.Conv1d{ConvGeometry: nn.ConvGeometry{In: ch, Out: ch, Kernel: []int{k}, Stride: []int{1},
		Padding: []int{(k*dilation - dilation) / 2}, Dilation: []int{dilation}, Groups: 1}}
	c.Weight, c.Bias = w.param(name+".weight", ch, ch, k), w.param(name+".bias", ch)
	w.register(&c.Base, []nn.NamedParameter{{Name: "weight", Param: c.Weight}, {Name: "bias", Param: c.Bias}})
	return c
}

func (w *weights) buffer(base *nn.Base, name, short string, n int) *nn.Buffer {
	buf, err := nn.NewBuffer(w.param(name, n).Tensor())
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
		return nil
	}
	if err := base.RegisterBuffer(short, buf); err != nil {
		w.problems = append(w.problems, err.Error())
	}
	return buf
}

func buildHiFiGAN(c HiFiGANConfig, w *weights) *SpeechT5HifiGan {
	v := &SpeechT5HifiGan{Config: c, dev: w.dev, dtype: w.dtype}
	v.convPre = w.conv1d("conv_pre", c.ModelInDim, c.UpsampleInitialChannel, 7, 1, 3)
	var ups, blocks []nn.Module
	ch := c.UpsampleInitialChannel
	for i, rate := range c.UpsampleRates {
		k := c.UpsampleKernelSizes[i]
		name := fmt.Sprintf("upsampler.%d", i)
		u := &convTranspose1d{in: ch, out: ch / 2, k: k, stride: rate, padAmt: (k - rate) / 2}
		u.weight, u.bias = w.param(name+".weight", ch, ch/2, k), w.param(name+".bias", ch/2)
		w.register(&u.Base, []nn.NamedParameter{{Name: "weight", Param: u.weight}, {Name: "bias", Param: u.bias}})
		v.ups, ups = append(v.ups, u), append(ups, u)
		ch /= 2
		for j, rk := range c.ResblockKernelSizes {
			name := fmt.Sprintf("resblocks.%d", i*len(c.ResblockKernelSizes)+j)
			b := &hifiResBlock{slope: c.LeakyReLUSlope}
			var c1, c2 []nn.Module
			for n, d := range c.ResblockDilationSizes[j] {
				a := w.dilatedConv(fmt.Sprintf("%s.convs1.%d", name, n), ch, rk, d)
				z := w.dilatedConv(fmt.Sprintf("%s.convs2.%d", name, n), ch, rk, 1)
				b.convs1, b.convs2 = append(b.convs1, a), append(b.convs2, z)
				c1, c2 = append(c1, a), append(c2, z)
			}
			w.register(&b.Base, nil, nn.NamedModule{Name: "convs1", Module: w.list(c1...)}, nn.NamedModule{Name: "convs2", Module: w.list(c2...)})
			v.blocks, blocks = append(v.blocks, b), append(blocks, b)
		}
	}
	v.convPost = w.conv1d("conv_post", ch, 1, 7, 1, 3)
	w.register(&v.Base, nil, nn.NamedModule{Name: "conv_pre", Module: v.convPre}, nn.NamedModule{Name: "upsampler", Module: w.list(ups...)},
		nn.NamedModule{Name: "resblocks", Module: w.list(blocks...)}, nn.NamedModule{Name: "conv_post", Module: v.convPost})
	v.mean = w.buffer(&v.Base, "mean", "mean", c.ModelInDim)
	v.scale = w.buffer(&v.Base, "scale", "scale", c.ModelInDim)
	return v
}

// LoadSpeechT5HifiGan loads a SpeechT5HifiGan folder save_pretrained wrote
// (config.json and model.safetensors), as strictly as LoadBertModel.
func LoadSpeechT5HifiGan(dir string, opts ...LoadOption) (*SpeechT5HifiGan, error) {
	cfg, w, path, err := readCheckpoint("LoadSpeechT5HifiGan", dir, ParseHiFiGANConfig, opts)
	if err != nil {
		return nil, err
	}
	v := buildHiFiGAN(cfg, w)
	if err := w.check(path); err != nil {
		return nil, err
	}
	return v, nil
}

// Device is where the weights live; inputs must be there.
func (v *SpeechT5HifiGan) Device() core.Device { return v.dev }

// HopLength is the waveform samples per spectrogram frame: the product of
// the upsample rates.
func (v *SpeechT5HifiGan) HopLength() int {
	n := 1
	for _, r := range v.Config.UpsampleRates {
		n *= r
	}
	return n
}

// Forward turns log-mel spectrograms (B, L, model_in_dim), or one (L,
// model_in_dim), into waveforms (B, samples) or (samples), as
// SpeechT5HifiGan's forward.
func (v *SpeechT5HifiGan) Forward(spectrogram *core.Tensor) (*core.Tensor, error) {
	fail := func(err error) (*core.Tensor, error) {
		return nil, fmt.Errorf("multimodal: SpeechT5HifiGan.Forward: %w", err)
	}
	if spectrogram == nil {
		return fail(fmt.Errorf("spectrogram is nil"))
	}
	if err := spectrogram.Err(); err != nil {
		return fail(err)
	}
	c := v.Config
	s := spectrogram.Shape()
	batched := len(s) == 3
	switch {
	case (len(s) != 2 && len(s) != 3) || s[len(s)-1] != c.ModelInDim || s[len(s)-2] < 1:
		return fail(fmt.Errorf("spectrogram has shape %v, want (batch, frames, %d) or (frames, %d) (model_in_dim)", s, c.ModelInDim, c.ModelInDim))
	case spectrogram.DType() != v.dtype:
		return fail(fmt.Errorf("spectrogram has dtype %s, the vocoder %s", spectrogram.DType(), v.dtype))
	case spectrogram.Device() != v.dev:
		return fail(fmt.Errorf("spectrogram is on %s, the vocoder on %s", spectrogram.Device(), v.dev))
	}
	defer core.NoGradScope()()
	x := spectrogram
	if c.NormalizeBefore {
		x = x.Sub(v.mean.Tensor()).Div(v.scale.Tensor())
	}
	if !batched {
		x = x.Reshape(core.Shape{1, s[0], s[1]})
	}
	x = v.convPre.Forward(x.Permute(core.Attrs{"dims": []int{0, 2, 1}}))
	k := len(c.ResblockKernelSizes)
	for i, up := range v.ups {
		x = up.forward(x.LeakyReLU(core.Attrs{"negative_slope": c.LeakyReLUSlope}))
		sum := v.blocks[i*k].forward(x)
		for j := 1; j < k; j++ {
			sum = sum.Add(v.blocks[i*k+j].forward(x))
		}
		x = sum.Div(core.Scalar(float64(k), x.DType(), x.Device()))
	}
	// The last leaky ReLU has torch's default slope, not the config's.
	x = v.convPost.Forward(x.LeakyReLU(core.Attrs{"negative_slope": 0.01})).Tanh()
	xs := x.Shape()
	out := x.Reshape(core.Shape{xs[0], xs[2]})
	if !batched {
		out = out.Reshape(core.Shape{xs[2]})
	}
	if err := out.Err(); err != nil {
		return fail(err)
	}
	return out, nil
}

func (b *hifiResBlock) forward(x *core.Tensor) *core.Tensor {
	slope := core.Attrs{"negative_slope": b.slope}
	for i, c1 := range b.convs1 {
		y := b.convs2[i].Forward(c1.Forward(x.LeakyReLU(slope)).LeakyReLU(slope))
		x = y.Add(x)
	}
	return x
}
