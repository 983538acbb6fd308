package diffuse

import (
	"fmt"
	"io/fs"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// UNet2DModel is diffusers' UNet2DModel, the unconditional image UNet of
// DDPM and DDIM: a positional timestep embedding, down blocks of ResNets
// (and self-attention in AttnDownBlock2D) with strided-conv downsampling,
// a mid block, up blocks that concatenate the down path's outputs, and a
// GroupNorm-SiLU-conv head. Its StateDict holds diffusers' parameter names.
type UNet2DModel struct {
	nn.Base
	Config UNet2DConfig

	dev       core.Device
	dtype     core.DType
	convIn    *convLayer
	time1     *linearLayer // time_embedding.linear_1
	time2     *linearLayer // time_embedding.linear_2
	downs     []*downBlock
	mid       *midBlock // nil when mid_block_type is null
	ups       []*upBlock
	normOut   *nn.GroupNorm
	convOut   *convLayer
	timeFreqs []float32 // the sinusoidal embedding's frequencies
}

// LoadOption changes how a model loads.
type LoadOption func(*loadOptions)

type loadOptions struct {
	dev   core.Device
	dtype core.DType
	int8  bool  // WithInt8Weights
	fsys  fs.FS // FromFS: folders are paths inside it
}

// WithDevice puts the model's weights on dev (default: the CPU); Forward
// then takes samples on dev.
func WithDevice(dev core.Device) LoadOption { return func(o *loadOptions) { o.dev = dev } }

// WithDType converts the weights to dtype (default F32, whatever the file
// holds); Forward then takes samples of dtype.
func WithDType(dtype core.DType) LoadOption { return func(o *loadOptions) { o.dtype = dtype } }

// LoadUNet2D loads a UNet2DModel saved by diffusers' save_pretrained: dir
// holds config.json and diffusion_pytorch_model.safetensors. Every tensor
// the config implies must be in the file with its shape, and the file may
// hold no other; the error lists each tensor that is missing, misshaped or
// unexpected.
func LoadUNet2D(dir string, opts ...LoadOption) (*UNet2DModel, error) {
	m, o, err := loadWhole("diffuse: LoadUNet2D", dir, opts, ParseUNet2DConfig, buildUNet2D)
	if err != nil {
		return nil, err
	}
	m.dev, m.dtype = o.dev, o.dtype
	m.Train(false)
	return m, nil
}

// NewUNet2D builds a UNet2DModel of cfg with freshly drawn weights (torch's
// default initialisation of each layer, from core's Philox stream at seed,
// so a seed gives the same model on every device), in training mode: its
// Forward records for autograd, so a loss on its output can be
// backpropagated into StateDict's parameters. cfg comes from
// ParseUNet2DConfig or DefaultUNet2DConfig with fields changed.
func NewUNet2D(cfg UNet2DConfig, seed uint64, opts ...LoadOption) (*UNet2DModel, error) {
	o := newLoadOptions(opts)
	if err := o.checkFloat("diffuse: NewUNet2D"); err != nil {
		return nil, err
	}
	if o.int8 {
		return nil, fmt.Errorf("diffuse: NewUNet2D: WithInt8Weights: NewUNet2D builds a model to train, and int8 weights do not train; train it, then Train(false) and QuantizeInt8")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w, err := newWeights(nil, o.dev, o.dtype)
	if err != nil {
		return nil, fmt.Errorf("diffuse: NewUNet2D: %w", err)
	}
	w.seed = seed
	m := buildUNet2D(cfg, w)
	if err := w.check("NewUNet2D"); err != nil {
		return nil, err
	}
	m.dev, m.dtype = o.dev, o.dtype
	return m, nil
}

// buildUNet2D builds the model's modules in diffusers' registration order,
// so StateDict lists the tensors as torch's state_dict does.
func buildUNet2D(cfg UNet2DConfig, w *weights) *UNet2DModel {
	m := &UNet2DModel{Config: cfg}
	ch := cfg.BlockOutChannels
	n := len(ch)
	temb := cfg.timeEmbedDim()
	b := unetBlock{groups: cfg.NormNumGroups, eps: cfg.NormEps, temb: temb, scaleShift: cfg.ResnetTimeScaleShift == "scale_shift"}

	m.convIn = w.conv("conv_in", cfg.InChannels, ch[0], 3, 1, 1)
	m.time1 = w.linear("time_embedding.linear_1", ch[0], temb)
	m.time2 = w.linear("time_embedding.linear_2", temb, temb)
	timeEmb := &list{}
	w.register(&timeEmb.Base, nil, nn.NamedModule{Name: "linear_1", Module: m.time1}, nn.NamedModule{Name: "linear_2", Module: m.time2})

	downs := make([]nn.Module, n)
	for i, kind := range cfg.DownBlockTypes {
		in := ch[max(i-1, 0)]
		d := w.downBlock(fmt.Sprintf("down_blocks.%d", i), b, kind == "AttnDownBlock2D", in, ch[i],
			cfg.LayersPerBlock, cfg.headDim(ch[i]), i < n-1, cfg.DownsamplePadding)
		m.downs, downs[i] = append(m.downs, d), d
	}
	children := []nn.NamedModule{{Name: "conv_in", Module: m.convIn}, {Name: "time_embedding", Module: timeEmb},
		{Name: "down_blocks", Module: w.list(downs...)}}
	if cfg.MidBlock {
		attnGroups := cfg.AttnNormNumGroups
		if attnGroups == 0 && !b.scaleShift {
			attnGroups = cfg.NormNumGroups
		}
		m.mid = w.midBlock("mid_block", b, ch[n-1], cfg.headDim(ch[n-1]), attnGroups, cfg.AddAttention, cfg.MidBlockScaleFactor)
		children = append(children, nn.NamedModule{Name: "mid_block", Module: m.mid})
	}
	ups := make([]nn.Module, n)
	for i, kind := range cfg.UpBlockTypes {
		out := ch[n-1-i]
		prev := ch[n-1-max(i-1, 0)]
		in := ch[n-1-min(i+1, n-1)]
		u := w.upBlock(fmt.Sprintf("up_blocks.%d", i), b, kind == "AttnUpBlock2D", in, out, prev,
			cfg.LayersPerBlock+1, cfg.headDim(out), i < n-1)
		m.ups, ups[i] = append(m.ups, u), u
	}
	m.normOut = w.groupNorm("conv_norm_out", cfg.NormNumGroups, ch[0], cfg.NormEps)
	m.convOut = w.conv("conv_out", ch[0], cfg.OutChannels, 3, 1, 1)
	children = append(children, nn.NamedModule{Name: "up_blocks", Module: w.list(ups...)},
		nn.NamedModule{Name: "conv_norm_out", Module: m.normOut}, nn.NamedModule{Name: "conv_out", Module: m.convOut})
	w.register(&m.Base, nil, children...)
	m.timeFreqs = timestepFreqs(ch[0], cfg.FreqShift)
	return m
}

// Device is where the weights live; Forward takes samples there.
func (m *UNet2DModel) Device() core.Device { return m.dev }

// DType is the weights' dtype; Forward takes samples of it.
func (m *UNet2DModel) DType() core.DType { return m.dtype }

// Forward predicts the model output (noise, for an epsilon model) for
// sample (B, in_channels, H, W) at timestep t, the same for every batch
// element. H and W must be divisible by 2^(len(block_out_channels)-1).
// diffusers truncates a Python float timestep to an integer here (it
// makes a long tensor); webtensor uses t as given, as diffusers does for a
// float tensor, so pass integer timesteps to match an integer schedule.
// Forward records for autograd only in training mode (Train(true), the
// mode NewUNet2D's models start in); a loaded model starts in eval mode,
// where inference pays nothing for autograd.
func (m *UNet2DModel) Forward(sample *core.Tensor, t float64) (*core.Tensor, error) {
	if err := m.checkSample(sample); err != nil {
		return nil, err
	}
	ts := make([]float64, dimOf(sample, 0))
	for i := range ts {
		ts[i] = t
	}
	return m.forward(sample, ts)
}

// ForwardTimesteps is Forward with the timesteps as a tensor: 0-dim (one
// for the batch) or (B) (one per batch element), on any device. Its values
// are read to the host, where the sinusoidal embedding is computed (see
// timestepEmbedding).
func (m *UNet2DModel) ForwardTimesteps(sample, timesteps *core.Tensor) (*core.Tensor, error) {
	if err := m.checkSample(sample); err != nil {
		return nil, err
	}
	vals, err := batchTimesteps("diffuse: UNet2DModel.Forward", timesteps, dimOf(sample, 0))
	if err != nil {
		return nil, err
	}
	return m.forward(sample, vals)
}

// batchTimesteps reads a UNet's timesteps tensor, 0-dim (one for the
// batch) or (batch), to the host as one timestep per batch element.
func batchTimesteps(op string, timesteps *core.Tensor, batch int) ([]float64, error) {
	if err := timesteps.Err(); err != nil {
		return nil, fmt.Errorf("%s: timesteps: %w", op, err)
	}
	vals, err := timesteps.Float64s()
	if err != nil {
		return nil, fmt.Errorf("%s: timesteps: %w", op, err)
	}
	switch {
	case timesteps.Rank() == 0:
		v := vals[0]
		vals = make([]float64, batch)
		for i := range vals {
			vals[i] = v
		}
	case timesteps.Rank() != 1 || len(vals) != batch:
		return nil, fmt.Errorf("%s: timesteps have shape %v, want [] or [%d] (the batch)", op, timesteps.Shape(), batch)
	}
	return vals, nil
}

func (m *UNet2DModel) checkSample(x *core.Tensor) error {
	if err := x.Err(); err != nil {
		return fmt.Errorf("diffuse: UNet2DModel.Forward: sample: %w", err)
	}
	s := x.Shape()
	if len(s) != 4 || s[1] != m.Config.InChannels {
		return fmt.Errorf("diffuse: UNet2DModel.Forward: sample has shape %v, want (batch, %d, height, width) (in_channels %d)",
			s, m.Config.InChannels, m.Config.InChannels)
	}
	f := 1 << (len(m.Config.BlockOutChannels) - 1)
	if s[2]%f != 0 || s[3]%f != 0 || s[2] == 0 || s[3] == 0 {
		return fmt.Errorf("diffuse: UNet2DModel.Forward: sample is %d×%d; height and width must be positive multiples of %d (%d downsamplings)",
			s[2], s[3], f, len(m.Config.BlockOutChannels)-1)
	}
	if x.DType() != m.dtype {
		return fmt.Errorf("diffuse: UNet2DModel.Forward: sample has dtype %s, the model %s", x.DType(), m.dtype)
	}
	if x.Device() != m.dev {
		return fmt.Errorf("diffuse: UNet2DModel.Forward: sample is on %s, the model on %s", x.Device(), m.dev)
	}
	return nil
}

func (m *UNet2DModel) forward(x *core.Tensor, ts []float64) (*core.Tensor, error) {
	if !m.Training() {
		defer core.NoGradScope()()
	}
	if m.Config.CenterInputSample {
		x = mul(x, 2).Sub(scalarLike(x, 1))
	}
	emb := timestepEmbedding(m.timeFreqs, m.Config.BlockOutChannels[0], m.Config.FlipSinToCos, ts, m.dtype, m.dev)
	emb = m.time2.Forward(m.time1.Forward(emb).SiLU())
	embAct := emb.SiLU()

	h := m.convIn.Forward(x)
	skips := []*core.Tensor{h}
	for _, d := range m.downs {
		var outs []*core.Tensor
		h, outs = d.forward(h, embAct)
		skips = append(skips, outs...)
	}
	if m.mid != nil {
		h = m.mid.forward(h, embAct)
	}
	for _, u := range m.ups {
		k := len(u.resnets)
		h = u.forward(h, skips[len(skips)-k:], embAct)
		skips = skips[:len(skips)-k]
	}
	act := m.normOut.ForwardSiLU(h)
	out := m.convOut.Forward(act)
	nn.ReleaseDead(nil, h, act) // h is the last up block's output
	h = out
	if err := h.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: UNet2DModel.Forward: %w", err)
	}
	return h, nil
}

// timestepFreqs are diffusers' get_timestep_embedding frequencies,
// exp(-ln(10000)·i / (half - shift)), each step rounded to float32 as torch
// computes them on float32 tensors.
func timestepFreqs(dim int, shift float64) []float32 {
	half := dim / 2
	freqs := make([]float32, half)
	for i := range freqs {
		e := float32(-math.Log(10000)) * float32(i)
		e /= float32(float64(half) - shift)
		freqs[i] = float32(math.Exp(float64(e)))
	}
	return freqs
}

// timestepEmbedding is the (B, dim) sinusoidal embedding [sin, cos] (or
// [cos, sin] when flipped) of float32(t)·freq. It is computed on the host
// in float64 and rounded: arguments reach 1000 radians, where GPU sin and
// cos approximations lose digits, and the table is B·dim numbers.
func timestepEmbedding(freqs []float32, dim int, flip bool, ts []float64, dtype core.DType, dev core.Device) *core.Tensor {
	half := len(freqs)
	vals := make([]float64, len(ts)*dim)
	for b, t := range ts {
		row := vals[b*dim : (b+1)*dim]
		for i, f := range freqs {
			arg := float64(float32(t) * f)
			s, c := float64(float32(math.Sin(arg))), float64(float32(math.Cos(arg)))
			if flip {
				s, c = c, s
			}
			row[i], row[half+i] = s, c
		}
	}
	return core.FromFloat64s(core.F32, core.Shape{len(ts), dim}, vals).Cast(dtype).To(dev)
}
