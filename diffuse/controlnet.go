package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// ControlNetModel is diffusers' ControlNetModel: a trainable copy of a
// UNet2DConditionModel's encoder half (conv_in, time embedding, down
// blocks, mid block) whose input is the noisy latents plus an embedding
// of a control image (edges, depth, a pose), and whose outputs, through
// a 1×1 convolution per state ("zero convolutions", zero at the start of
// training), are residuals added to the UNet's skip connections and mid
// block. Its StateDict holds diffusers' parameter names.
type ControlNetModel struct {
	nn.Base
	Config ControlNetConfig

	dev        core.Device
	dtype      core.DType
	convIn     *convLayer
	time1      *linearLayer
	time2      *linearLayer
	condIn     *convLayer   // controlnet_cond_embedding.conv_in
	condBlocks []*convLayer // controlnet_cond_embedding.blocks: pairs of a conv and a stride-2 conv
	condOut    *convLayer   // controlnet_cond_embedding.conv_out
	downs      []condDown
	zeroDown   []*convLayer // controlnet_down_blocks, one per down-path state
	mid        *crossMidBlock
	zeroMid    *convLayer // controlnet_mid_block
	timeFreqs  []float32
}

// ControlResiduals are a ControlNet's outputs for one UNet call: Down
// holds one tensor per state of the UNet's down path (conv_in's output,
// then each down block's ResNet or Transformer outputs and its
// downsampler's), in order, each added to the skip connection the up
// path concatenates; Mid is added to the mid block's output.
type ControlResiduals struct {
	Down []*core.Tensor
	Mid  *core.Tensor
}

// LoadControlNet loads a ControlNetModel saved by diffusers'
// save_pretrained: dir holds config.json and
// diffusion_pytorch_model.safetensors. As with LoadUNet2DCondition, every
// tensor the config implies must be in the file with its shape, the file
// may hold no other, and the error lists each that is missing, misshaped
// or unexpected.
func LoadControlNet(dir string, opts ...LoadOption) (*ControlNetModel, error) {
	m, o, err := loadWhole("diffuse: LoadControlNet", dir, opts, ParseControlNetConfig, buildControlNet)
	if err != nil {
		return nil, err
	}
	m.dev, m.dtype = o.dev, o.dtype
	return m, nil
}

// condBlockOf is what the cross-attention blocks of a conditional UNet
// (or its ControlNet) take from the config.
func condBlockOf(cfg *UNet2DConditionConfig) condBlock {
	return condBlock{unetBlock: unetBlock{groups: cfg.NormNumGroups, eps: cfg.NormEps, temb: cfg.timeEmbedDim(),
		scaleShift: cfg.ResnetTimeScaleShift == "scale_shift"},
		ctxDim: cfg.CrossAttentionDim, layers: cfg.TransformerLayers, linearProj: cfg.UseLinearProjection,
		upcast: cfg.UpcastAttention}
}

// buildCondDowns builds a conditional UNet's down blocks (the ControlNet's
// are the same), returning them and their modules for registration.
func buildCondDowns(cfg *UNet2DConditionConfig, w *weights) ([]condDown, []nn.Module) {
	ch, n, b := cfg.BlockOutChannels, len(cfg.BlockOutChannels), condBlockOf(cfg)
	var downs []condDown
	mods := make([]nn.Module, n)
	for i, kind := range cfg.DownBlockTypes {
		in, name := ch[max(i-1, 0)], fmt.Sprintf("down_blocks.%d", i)
		var d condDown
		if kind == "CrossAttnDownBlock2D" {
			d.cross = w.crossDownBlock(name, b, in, ch[i], cfg.LayersPerBlock[i], cfg.heads(i), i < n-1, cfg.DownsamplePadding)
			mods[i] = d.cross
		} else {
			d.plain = w.downBlock(name, b.unetBlock, false, in, ch[i], cfg.LayersPerBlock[i], 0, i < n-1, cfg.DownsamplePadding)
			mods[i] = d.plain
		}
		downs = append(downs, d)
	}
	return downs, mods
}

// buildControlNet builds the modules in diffusers' registration order, so
// StateDict lists the tensors as torch's state_dict does.
func buildControlNet(cfg ControlNetConfig, w *weights) *ControlNetModel {
	m := &ControlNetModel{Config: cfg}
	ch := cfg.BlockOutChannels
	n := len(ch)
	temb := cfg.timeEmbedDim()
	m.convIn = w.conv("conv_in", cfg.InChannels, ch[0], 3, 1, 1)
	m.time1 = w.linear("time_embedding.linear_1", ch[0], temb)
	m.time2 = w.linear("time_embedding.linear_2", temb, temb)
	timeEmb := &list{}
	w.register(&timeEmb.Base, nil, nn.NamedModule{Name: "linear_1", Module: m.time1}, nn.NamedModule{Name: "linear_2", Module: m.time2})

	ce := cfg.ConditioningEmbeddingOutChannels
	m.condIn = w.conv("controlnet_cond_embedding.conv_in", cfg.ConditioningChannels, ce[0], 3, 1, 1)
	var blocks []nn.Module
	for i := range len(ce) - 1 {
		k := len(m.condBlocks)
		m.condBlocks = append(m.condBlocks,
			w.conv(fmt.Sprintf("controlnet_cond_embedding.blocks.%d", k), ce[i], ce[i], 3, 1, 1),
			w.conv(fmt.Sprintf("controlnet_cond_embedding.blocks.%d", k+1), ce[i], ce[i+1], 3, 2, 1))
		blocks = append(blocks, m.condBlocks[k], m.condBlocks[k+1])
	}
	m.condOut = w.conv("controlnet_cond_embedding.conv_out", ce[len(ce)-1], ch[0], 3, 1, 1)
	condEmb := &list{}
	w.register(&condEmb.Base, nil, nn.NamedModule{Name: "conv_in", Module: m.condIn},
		nn.NamedModule{Name: "blocks", Module: w.list(blocks...)}, nn.NamedModule{Name: "conv_out", Module: m.condOut})

	var downMods []nn.Module
	m.downs, downMods = buildCondDowns(&cfg.UNet2DConditionConfig, w)
	// One zero convolution per down-path state: conv_in's output, each
	// layer of each block, and each downsampler.
	zero := func(c int) {
		conv := w.conv(fmt.Sprintf("controlnet_down_blocks.%d", len(m.zeroDown)), c, c, 1, 1, 0)
		m.zeroDown = append(m.zeroDown, conv)
	}
	zero(ch[0])
	for i := range n {
		for range cfg.LayersPerBlock[i] {
			zero(ch[i])
		}
		if i < n-1 {
			zero(ch[i])
		}
	}
	zeroMods := make([]nn.Module, len(m.zeroDown))
	for i, z := range m.zeroDown {
		zeroMods[i] = z
	}
	m.zeroMid = w.conv("controlnet_mid_block", ch[n-1], ch[n-1], 1, 1, 0)
	m.mid = w.crossMidBlock("mid_block", condBlockOf(&cfg.UNet2DConditionConfig), ch[n-1], cfg.heads(n-1), cfg.MidBlockScaleFactor)
	w.register(&m.Base, nil, nn.NamedModule{Name: "conv_in", Module: m.convIn}, nn.NamedModule{Name: "time_embedding", Module: timeEmb},
		nn.NamedModule{Name: "controlnet_cond_embedding", Module: condEmb}, nn.NamedModule{Name: "down_blocks", Module: w.list(downMods...)},
		nn.NamedModule{Name: "controlnet_down_blocks", Module: w.list(zeroMods...)},
		nn.NamedModule{Name: "controlnet_mid_block", Module: m.zeroMid}, nn.NamedModule{Name: "mid_block", Module: m.mid})
	m.timeFreqs = timestepFreqs(ch[0], cfg.FreqShift)
	return m
}

// Device is where the weights live; Forward takes its inputs there.
func (m *ControlNetModel) Device() core.Device { return m.dev }

// DType is the weights' dtype; Forward takes inputs of it.
func (m *ControlNetModel) DType() core.DType { return m.dtype }

// Forward computes the residuals for sample (B, in_channels, H, W) at
// timestep t (the same for the batch), conditioned on encoderHiddenStates
// (B, sequence, cross_attention_dim) and on the control image cond (B,
// conditioning_channels, H·s, W·s), s = Config.ControlScale(), in the
// range the ControlNet was trained on ([0, 1] for diffusers' pipelines,
// which do not normalise it). Every residual is multiplied by scale,
// diffusers' conditioning_scale (1 leaves them as they are).
func (m *ControlNetModel) Forward(sample *core.Tensor, t float64, encoderHiddenStates, cond *core.Tensor, scale float64) (*ControlResiduals, error) {
	const op = "diffuse: ControlNetModel.Forward"
	if err := m.checkInputs(sample, encoderHiddenStates, cond); err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	ts := make([]float64, dimOf(sample, 0))
	for i := range ts {
		ts[i] = t
	}
	emb := timestepEmbedding(m.timeFreqs, m.Config.BlockOutChannels[0], m.Config.FlipSinToCos, ts, m.dtype, m.dev)
	embAct := m.time2.Forward(m.time1.Forward(emb).SiLU()).SiLU()

	if m.Config.BGR {
		cond = cond.Flip(core.Attrs{"axes": []int{1}})
	}
	c := m.condIn.Forward(cond).SiLU()
	for _, b := range m.condBlocks {
		c = b.Forward(c).SiLU()
	}
	h := m.convIn.Forward(sample).Add(m.condOut.Forward(c))
	states := []*core.Tensor{h}
	for _, d := range m.downs {
		var outs []*core.Tensor
		h, outs = d.forward(h, embAct, encoderHiddenStates)
		states = append(states, outs...)
	}
	h = m.mid.forward(h, embAct, encoderHiddenStates)
	res := &ControlResiduals{Down: make([]*core.Tensor, len(states)), Mid: m.zeroMid.Forward(h)}
	for i, s := range states {
		res.Down[i] = m.zeroDown[i].Forward(s)
	}
	// diffusers multiplies even at scale 1; x·1 is x, so that is skipped.
	if scale != 1 {
		for i, d := range res.Down {
			res.Down[i] = mul(d, scale)
		}
		res.Mid = mul(res.Mid, scale)
	}
	for i, d := range append(res.Down, res.Mid) {
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("%s: residual %d: %w", op, i, err)
		}
	}
	return res, nil
}

func (m *ControlNetModel) checkInputs(x, ctx, cond *core.Tensor) error {
	const op = "diffuse: ControlNetModel.Forward"
	// The sample and encoder states are checked as the UNet checks them
	// (the ControlNet shares its config).
	u := UNet2DConditionModel{Config: m.Config.UNet2DConditionConfig, dev: m.dev, dtype: m.dtype}
	if err := u.checkInputs(x, ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if cond == nil {
		return fmt.Errorf("%s: no control image (nil)", op)
	}
	if err := cond.Err(); err != nil {
		return fmt.Errorf("%s: control image: %w", op, err)
	}
	s, c := x.Shape(), cond.Shape()
	f := m.Config.ControlScale()
	if len(c) != 4 || c[0] != s[0] || c[1] != m.Config.ConditioningChannels || c[2] != s[2]*f || c[3] != s[3]*f {
		return fmt.Errorf("%s: control image has shape %v, want [%d %d %d %d] (the sample's batch, conditioning_channels %d, %d times the sample's %d×%d)",
			op, c, s[0], m.Config.ConditioningChannels, s[2]*f, s[3]*f, m.Config.ConditioningChannels, f, s[2], s[3])
	}
	if cond.DType() != m.dtype || cond.Device() != m.dev {
		return fmt.Errorf("%s: control image is %s on %s, the model %s on %s", op, cond.DType(), cond.Device(), m.dtype, m.dev)
	}
	return nil
}

// addResiduals adds a ControlNet's residuals to the UNet's down-path
// states and checks that they fit: one per state, each of its shape (a
// broadcast would hide a ControlNet made for another UNet).
func addResiduals(skips []*core.Tensor, res *ControlResiduals) error {
	if len(res.Down) != len(skips) {
		return fmt.Errorf("%d down residuals for the UNet's %d down-path states (a ControlNet for another UNet?)", len(res.Down), len(skips))
	}
	for i, r := range res.Down {
		if r == nil {
			return fmt.Errorf("down residual %d is nil", i)
		}
		if !r.Shape().Equal(skips[i].Shape()) {
			return fmt.Errorf("down residual %d has shape %v, the UNet's state %v", i, r.Shape(), skips[i].Shape())
		}
		skips[i] = skips[i].Add(r)
	}
	if res.Mid == nil {
		return fmt.Errorf("mid residual is nil")
	}
	return nil
}
