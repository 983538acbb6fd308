package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// UNet2DConditionModel is diffusers' UNet2DConditionModel, Stable
// Diffusion's latent UNet: UNet2DModel's ResNet levels and positional
// timestep embedding, with Transformer2DModels after the ResNets of the
// cross-attention blocks, which attend to encoder hidden states (a text
// encoder's output). Its StateDict holds diffusers' parameter names.
type UNet2DConditionModel struct {
	nn.Base
	Config UNet2DConditionConfig

	dev       core.Device
	dtype     core.DType
	convIn    *convLayer
	time1     *linearLayer
	time2     *linearLayer
	downs     []condDown
	mid       *crossMidBlock // nil when mid_block_type is null
	ups       []condUp
	normOut   *nn.GroupNorm
	convOut   *convLayer
	timeFreqs []float32
	stream    *weightStream // set by LoadUNet2DConditionStreamed
}

// condDown is a down block of either kind; exactly one field is set.
type condDown struct {
	plain *downBlock
	cross *crossDownBlock
}

func (d condDown) forward(h, embAct, ctx *core.Tensor) (*core.Tensor, []*core.Tensor) {
	if d.cross != nil {
		return d.cross.forward(h, embAct, ctx)
	}
	return d.plain.forward(h, embAct)
}

func (d condDown) module() nn.Module {
	if d.cross != nil {
		return d.cross
	}
	return d.plain
}

// condUp is an up block of either kind; exactly one field is set.
type condUp struct {
	plain *upBlock
	cross *crossUpBlock
}

// layers is how many down-path states the block consumes.
func (u condUp) layers() int {
	if u.cross != nil {
		return len(u.cross.resnets)
	}
	return len(u.plain.resnets)
}

func (u condUp) forward(h *core.Tensor, skips []*core.Tensor, embAct, ctx *core.Tensor) *core.Tensor {
	if u.cross != nil {
		return u.cross.forward(h, skips, embAct, ctx)
	}
	return u.plain.forward(h, skips, embAct)
}

func (u condUp) module() nn.Module {
	if u.cross != nil {
		return u.cross
	}
	return u.plain
}

// LoadUNet2DCondition loads a UNet2DConditionModel saved by diffusers'
// save_pretrained (a Stable Diffusion checkpoint's unet/ folder): dir holds
// config.json and diffusion_pytorch_model.safetensors. As with LoadUNet2D,
// every tensor the config implies must be in the file with its shape, the
// file may hold no other, and the error lists every one that is missing,
// misshaped or unexpected.
func LoadUNet2DCondition(dir string, opts ...LoadOption) (*UNet2DConditionModel, error) {
	return loadUNet2DCondition(dir, false, opts)
}

func loadUNet2DCondition(dir string, streamed bool, opts []LoadOption) (*UNet2DConditionModel, error) {
	op := "diffuse: LoadUNet2DCondition"
	if streamed {
		op += "Streamed"
	}
	o := newLoadOptions(opts)
	if err := o.checkFloat(op); err != nil {
		return nil, err
	}
	if streamed && o.int8 {
		return nil, fmt.Errorf("%s: WithInt8Weights: a streamed UNet copies its weights in from the checkpoint at every call, so none stay resident to hold as int8; load it whole (LoadUNet2DCondition) for int8 weights", op)
	}
	if streamed && o.fsys != nil {
		return nil, fmt.Errorf("%s: FromFS: weight streaming maps the checkpoint file on disk, and a model in an fs.FS (a zip archive) has none to map; load it whole (LoadUNet2DCondition)", op)
	}
	d, err := o.folder(op, dir)
	if err != nil {
		return nil, err
	}
	var cfg UNet2DConditionConfig
	var f *safetensors.File
	var ckpt *mappedCheckpoint
	path := d.Path(modelFile)
	if streamed {
		// The header is checked now, the tensors read as blocks run.
		var raw []byte
		if raw, err = d.ReadFile("config.json"); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if cfg, err = ParseUNet2DConditionConfig(raw); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, d.Path("config.json"))
		}
		if ckpt, err = openCheckpoint(path); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	} else if cfg, f, path, err = readModel(op, d, ParseUNet2DConditionConfig); err != nil {
		return nil, err
	}
	w, err := newWeights(f, o.dev, o.dtype)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if streamed {
		w.stream = newWeightStream(ckpt, o.dev, o.dtype)
	}
	w.int8 = o.int8
	m := buildUNet2DCondition(cfg, w)
	if err := w.check(path); err != nil {
		if ckpt != nil {
			ckpt.close()
		}
		return nil, err
	}
	m.dev, m.dtype, m.stream = o.dev, o.dtype, w.stream
	return m, nil
}

// buildUNet2DCondition builds the modules in diffusers' registration
// order, so StateDict lists the tensors as torch's state_dict does.
func buildUNet2DCondition(cfg UNet2DConditionConfig, w *weights) *UNet2DConditionModel {
	m := &UNet2DConditionModel{Config: cfg}
	ch := cfg.BlockOutChannels
	n := len(ch)
	temb := cfg.timeEmbedDim()
	b := condBlockOf(&cfg)

	m.convIn = w.conv("conv_in", cfg.InChannels, ch[0], 3, 1, 1)
	m.time1 = w.linear("time_embedding.linear_1", ch[0], temb)
	m.time2 = w.linear("time_embedding.linear_2", temb, temb)
	timeEmb := &list{}
	w.register(&timeEmb.Base, nil, nn.NamedModule{Name: "linear_1", Module: m.time1}, nn.NamedModule{Name: "linear_2", Module: m.time2})

	var downs []nn.Module
	m.downs, downs = buildCondDowns(&cfg, w)
	// Registration order is diffusers' __init__ order: the time embedding,
	// then down_blocks, up_blocks, mid_block (assigned after the up blocks'
	// list is created), which only matters for StateDict's listing.
	children := []nn.NamedModule{{Name: "conv_in", Module: m.convIn}, {Name: "time_embedding", Module: timeEmb},
		{Name: "down_blocks", Module: w.list(downs...)}}
	ups := make([]nn.Module, n)
	for i, kind := range cfg.UpBlockTypes {
		out := ch[n-1-i]
		prev := ch[n-1-max(i-1, 0)]
		in := ch[n-1-min(i+1, n-1)]
		name, layers := fmt.Sprintf("up_blocks.%d", i), cfg.LayersPerBlock[n-1-i]+1
		var u condUp
		if kind == "CrossAttnUpBlock2D" {
			u.cross = w.crossUpBlock(name, b, in, out, prev, layers, cfg.heads(n-1-i), i < n-1)
			ups[i] = u.cross
		} else {
			u.plain = w.upBlock(name, b.unetBlock, false, in, out, prev, layers, 0, i < n-1)
			ups[i] = u.plain
		}
		m.ups = append(m.ups, u)
	}
	children = append(children, nn.NamedModule{Name: "up_blocks", Module: w.list(ups...)})
	if cfg.MidBlock {
		m.mid = w.crossMidBlock("mid_block", b, ch[n-1], cfg.heads(n-1), cfg.MidBlockScaleFactor)
		children = append(children, nn.NamedModule{Name: "mid_block", Module: m.mid})
	}
	m.normOut = w.groupNorm("conv_norm_out", cfg.NormNumGroups, ch[0], cfg.NormEps)
	m.convOut = w.conv("conv_out", ch[0], cfg.OutChannels, 3, 1, 1)
	children = append(children, nn.NamedModule{Name: "conv_norm_out", Module: m.normOut}, nn.NamedModule{Name: "conv_out", Module: m.convOut})
	w.register(&m.Base, nil, children...)
	m.timeFreqs = timestepFreqs(ch[0], cfg.FreqShift)
	return m
}

// Device is where the weights live; Forward takes its inputs there.
func (m *UNet2DConditionModel) Device() core.Device { return m.dev }

// DType is the weights' dtype; Forward takes inputs of it.
func (m *UNet2DConditionModel) DType() core.DType { return m.dtype }

// Forward predicts the model output (noise, for an epsilon model) for
// sample (B, in_channels, H, W) at timestep t, the same for every batch
// element, conditioned on encoderHiddenStates (B, sequence,
// cross_attention_dim), e.g. CLIP's last hidden state for B prompts. H and
// W must be divisible by 2^(len(block_out_channels)-1). As in UNet2DModel,
// t is used as given (pass integer timesteps for an integer schedule), and
// nothing is recorded for autograd.
func (m *UNet2DConditionModel) Forward(sample *core.Tensor, t float64, encoderHiddenStates *core.Tensor) (*core.Tensor, error) {
	if err := m.checkInputs(sample, encoderHiddenStates); err != nil {
		return nil, err
	}
	ts := make([]float64, dimOf(sample, 0))
	for i := range ts {
		ts[i] = t
	}
	return m.forward(sample, ts, encoderHiddenStates, nil)
}

// ForwardControlled is Forward with a ControlNet's residuals added, as
// diffusers' down_block_additional_residuals and
// mid_block_additional_residual are: each down residual to the matching
// skip connection before the up path reads it, the mid residual to the
// mid block's output. They must be the ControlNet's for this sample (the
// same batch and shapes); res nil is Forward.
func (m *UNet2DConditionModel) ForwardControlled(sample *core.Tensor, t float64, encoderHiddenStates *core.Tensor, res *ControlResiduals) (*core.Tensor, error) {
	if err := m.checkInputs(sample, encoderHiddenStates); err != nil {
		return nil, err
	}
	ts := make([]float64, dimOf(sample, 0))
	for i := range ts {
		ts[i] = t
	}
	return m.forward(sample, ts, encoderHiddenStates, res)
}

// ForwardTimesteps is Forward with the timesteps as a tensor: 0-dim (one
// for the batch) or (B) (one per batch element), on any device; their
// values are read to the host for the sinusoidal embedding.
func (m *UNet2DConditionModel) ForwardTimesteps(sample, timesteps, encoderHiddenStates *core.Tensor) (*core.Tensor, error) {
	if err := m.checkInputs(sample, encoderHiddenStates); err != nil {
		return nil, err
	}
	vals, err := batchTimesteps("diffuse: UNet2DConditionModel.Forward", timesteps, dimOf(sample, 0))
	if err != nil {
		return nil, err
	}
	return m.forward(sample, vals, encoderHiddenStates, nil)
}

func (m *UNet2DConditionModel) checkInputs(x, ctx *core.Tensor) error {
	const op = "diffuse: UNet2DConditionModel.Forward"
	if err := x.Err(); err != nil {
		return fmt.Errorf("%s: sample: %w", op, err)
	}
	if ctx == nil {
		return fmt.Errorf("%s: encoder hidden states are nil (the model is conditional)", op)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: encoder hidden states: %w", op, err)
	}
	s, c := x.Shape(), ctx.Shape()
	if len(s) != 4 || s[1] != m.Config.InChannels {
		return fmt.Errorf("%s: sample has shape %v, want (batch, %d, height, width) (in_channels %d)",
			op, s, m.Config.InChannels, m.Config.InChannels)
	}
	f := 1 << (len(m.Config.BlockOutChannels) - 1)
	if s[2]%f != 0 || s[3]%f != 0 || s[2] == 0 || s[3] == 0 {
		return fmt.Errorf("%s: sample is %d×%d; height and width must be positive multiples of %d (%d downsamplings)",
			op, s[2], s[3], f, len(m.Config.BlockOutChannels)-1)
	}
	if len(c) != 3 || c[0] != s[0] || c[1] < 1 || c[2] != m.Config.CrossAttentionDim {
		return fmt.Errorf("%s: encoder hidden states have shape %v, want (%d, sequence, %d) (the sample's batch, cross_attention_dim %d)",
			op, c, s[0], m.Config.CrossAttentionDim, m.Config.CrossAttentionDim)
	}
	for _, in := range []struct {
		what, has, is string
		t             *core.Tensor
	}{{"sample", "has", "is", x}, {"encoder hidden states", "have", "are", ctx}} {
		if in.t.DType() != m.dtype {
			return fmt.Errorf("%s: %s %s dtype %s, the model %s", op, in.what, in.has, in.t.DType(), m.dtype)
		}
		if in.t.Device() != m.dev {
			return fmt.Errorf("%s: %s %s on %s, the model on %s", op, in.what, in.is, in.t.Device(), m.dev)
		}
	}
	return nil
}

func (m *UNet2DConditionModel) forward(x *core.Tensor, ts []float64, ctx *core.Tensor, res *ControlResiduals) (*core.Tensor, error) {
	return m.denoise(x, m.embedTimesteps(ts), ctx, res)
}

// embedTimesteps is the sinusoidal embedding of ts (B rows), computed on
// the host: the part of the forward pass that is not tensor ops.
func (m *UNet2DConditionModel) embedTimesteps(ts []float64) *core.Tensor {
	return timestepEmbedding(m.timeFreqs, m.Config.BlockOutChannels[0], m.Config.FlipSinToCos, ts, m.dtype, m.dev)
}

// denoise is the forward pass from the timestep embedding on: tensor ops
// only, so CompiledUNet can trace it into a graph.
func (m *UNet2DConditionModel) denoise(x, emb, ctx *core.Tensor, res *ControlResiduals) (*core.Tensor, error) {
	defer core.NoGradScope()()
	if m.Config.CenterInputSample {
		x = mul(x, 2).Sub(scalarLike(x, 1))
	}
	// With streamed weights each stage's are loaded just before it runs
	// and released after (use and done do nothing otherwise).
	if err := m.use(m.time1, m.time2, m.convIn); err != nil {
		return nil, err
	}
	embAct := m.time2.Forward(m.time1.Forward(emb).SiLU()).SiLU()
	h := m.convIn.Forward(x)
	m.done(m.time1, m.time2, m.convIn)
	skips := []*core.Tensor{h}
	for _, d := range m.downs {
		if err := m.use(d.module()); err != nil {
			return nil, err
		}
		var outs []*core.Tensor
		h, outs = d.forward(h, embAct, ctx)
		skips = append(skips, outs...)
		m.done(d.module())
	}
	if res != nil {
		if err := addResiduals(skips, res); err != nil {
			return nil, fmt.Errorf("diffuse: UNet2DConditionModel.Forward: %w", err)
		}
	}
	if m.mid != nil {
		if err := m.use(m.mid); err != nil {
			return nil, err
		}
		h = m.mid.forward(h, embAct, ctx)
		m.done(m.mid)
	}
	// diffusers adds the mid residual whether or not there is a mid block.
	if res != nil {
		if !res.Mid.Shape().Equal(h.Shape()) {
			return nil, fmt.Errorf("diffuse: UNet2DConditionModel.Forward: mid residual has shape %v, the mid block's output %v", res.Mid.Shape(), h.Shape())
		}
		h = h.Add(res.Mid)
	}
	for _, u := range m.ups {
		if err := m.use(u.module()); err != nil {
			return nil, err
		}
		k := u.layers()
		h = u.forward(h, skips[len(skips)-k:], embAct, ctx)
		skips = skips[:len(skips)-k]
		m.done(u.module())
	}
	if err := m.use(m.normOut, m.convOut); err != nil {
		return nil, err
	}
	defer m.done(m.normOut, m.convOut)
	act := m.normOut.ForwardSiLU(h)
	out := m.convOut.Forward(act)
	nn.ReleaseDead(nil, h, act) // h is the last up block's output
	h = out
	if err := h.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: UNet2DConditionModel.Forward: %w", err)
	}
	return h, nil
}
