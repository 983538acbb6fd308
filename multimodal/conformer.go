package multimodal

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Wav2Vec2ConformerModel is transformers' Wav2Vec2ConformerModel, a
// Conformer speech encoder: a convolutional feature encoder over the raw
// waveform (1-D convs, with a GroupNorm after the first or a LayerNorm
// after each, per feat_extract_norm), a LayerNorm and linear feature
// projection, then Conformer blocks (a half-step feed-forward module,
// self-attention with relative or rotary positions, a convolution module,
// another half-step feed-forward module and a LayerNorm) and a final
// LayerNorm. Its StateDict holds the names save_pretrained writes.
type Wav2Vec2ConformerModel struct {
	nn.Base
	Config Wav2Vec2ConformerConfig

	dev      core.Device
	dtype    core.DType
	convs    []*conformerFeatureConv
	projNorm *nn.LayerNorm
	proj     *nn.Linear
	layers   []*conformerLayer
	norm     *nn.LayerNorm
	invFreq  []float32 // rotary: the checkpoint's inv_freq, or the one the config gives
}

// conformerFeatureConv is one feature-encoder layer: a conv, its norm
// (a GroupNorm, a LayerNorm over the channels, or none) and activation.
type conformerFeatureConv struct {
	nn.Base
	conv  *nn.Conv1d
	group *nn.GroupNorm
	layer *nn.LayerNorm
	act   string
}

// conformerFFN is Wav2Vec2ConformerFeedForward.
type conformerFFN struct {
	nn.Base
	in, out *nn.Linear
	act     string
}

// conformerAttention is Wav2Vec2ConformerSelfAttention; pos, biasU and
// biasV exist with relative positions only.
type conformerAttention struct {
	nn.Base
	q, k, v, o, pos *nn.Linear
	biasU, biasV    *nn.Parameter
	heads, headDim  int
}

// conformerConvModule is Wav2Vec2ConformerConvolutionModule.
type conformerConvModule struct {
	nn.Base
	norm          *nn.LayerNorm
	pw1, dw, pw2  *nn.Conv1d
	bn            *nn.BatchNorm
	act           string
	hidden, width int
}

// conformerLayer is Wav2Vec2ConformerEncoderLayer.
type conformerLayer struct {
	nn.Base
	ffn1Norm, attnNorm, ffn2Norm, final *nn.LayerNorm
	ffn1, ffn2                          *conformerFFN
	attn                                *conformerAttention
	conv                                *conformerConvModule
}

// torchLayerNormEps is nn.LayerNorm's default, which the Conformer blocks,
// the convolution module and a "layer" feature encoder use whatever
// layer_norm_eps says; GroupNorm and BatchNorm default to it too.
const torchLayerNormEps = 1e-5

func (w *weights) conv1dOpts(name string, in, out, k, stride, pad, groups int, bias bool) *nn.Conv1d {
	c := &nn.Conv1d{ConvGeometry: nn.ConvGeometry{In: in, Out: out, Kernel: []int{k}, Stride: []int{stride},
		Padding: []int{pad}, Dilation: []int{1}, Groups: groups}}
	c.Weight = w.param(name+".weight", out, in/groups, k)
	params := []nn.NamedParameter{{Name: "weight", Param: c.Weight}}
	if bias {
		c.Bias = w.param(name+".bias", out)
		params = append(params, nn.NamedParameter{Name: "bias", Param: c.Bias})
	}
	w.register(&c.Base, params)
	return c
}

func (w *weights) conformerFFN(name string, c Wav2Vec2ConformerConfig) *conformerFFN {
	f := &conformerFFN{act: c.HiddenAct}
	f.in = w.linear(name+".intermediate_dense", c.HiddenSize, c.IntermediateSize)
	f.out = w.linear(name+".output_dense", c.IntermediateSize, c.HiddenSize)
	w.register(&f.Base, nil, nn.NamedModule{Name: "intermediate_dense", Module: f.in}, nn.NamedModule{Name: "output_dense", Module: f.out})
	return f
}

func (w *weights) conformerAttention(name string, c Wav2Vec2ConformerConfig) *conformerAttention {
	h := c.HiddenSize
	a := &conformerAttention{heads: c.NumAttentionHeads, headDim: c.headSize()}
	a.q, a.k, a.v, a.o = w.linear(name+".linear_q", h, h), w.linear(name+".linear_k", h, h), w.linear(name+".linear_v", h, h), w.linear(name+".linear_out", h, h)
	children := []nn.NamedModule{{Name: "linear_q", Module: a.q}, {Name: "linear_k", Module: a.k}, {Name: "linear_v", Module: a.v},
		{Name: "linear_out", Module: a.o}}
	var params []nn.NamedParameter
	if c.PositionEmbeddingsType == "relative" {
		a.pos = w.linearBias(name+".linear_pos", h, h, false)
		a.biasU, a.biasV = w.param(name+".pos_bias_u", a.heads, a.headDim), w.param(name+".pos_bias_v", a.heads, a.headDim)
		children = append(children, nn.NamedModule{Name: "linear_pos", Module: a.pos})
		params = []nn.NamedParameter{{Name: "pos_bias_u", Param: a.biasU}, {Name: "pos_bias_v", Param: a.biasV}}
	}
	w.register(&a.Base, params, children...)
	return a
}

func (w *weights) conformerConvModule(name string, c Wav2Vec2ConformerConfig) *conformerConvModule {
	h, k := c.HiddenSize, c.ConvDepthwiseKernelSize
	m := &conformerConvModule{act: c.HiddenAct, hidden: h, width: k}
	m.norm = w.layerNorm(name+".layer_norm", h, torchLayerNormEps)
	m.pw1 = w.conv1dOpts(name+".pointwise_conv1", h, 2*h, 1, 1, 0, 1, false)
	m.dw = w.conv1dOpts(name+".depthwise_conv", h, h, k, 1, (k-1)/2, h, false)
	m.bn = w.batchNorm(name+".batch_norm", h, torchLayerNormEps)
	m.pw2 = w.conv1dOpts(name+".pointwise_conv2", h, h, 1, 1, 0, 1, false)
	w.register(&m.Base, nil, nn.NamedModule{Name: "layer_norm", Module: m.norm}, nn.NamedModule{Name: "pointwise_conv1", Module: m.pw1},
		nn.NamedModule{Name: "depthwise_conv", Module: m.dw}, nn.NamedModule{Name: "batch_norm", Module: m.bn},
		nn.NamedModule{Name: "pointwise_conv2", Module: m.pw2})
	return m
}

func (w *weights) conformerLayer(name string, c Wav2Vec2ConformerConfig) *conformerLayer {
	h := c.HiddenSize
	l := &conformerLayer{}
	l.ffn1Norm, l.ffn1 = w.layerNorm(name+".ffn1_layer_norm", h, torchLayerNormEps), w.conformerFFN(name+".ffn1", c)
	l.attnNorm, l.attn = w.layerNorm(name+".self_attn_layer_norm", h, torchLayerNormEps), w.conformerAttention(name+".self_attn", c)
	l.conv = w.conformerConvModule(name+".conv_module", c)
	l.ffn2Norm, l.ffn2 = w.layerNorm(name+".ffn2_layer_norm", h, torchLayerNormEps), w.conformerFFN(name+".ffn2", c)
	l.final = w.layerNorm(name+".final_layer_norm", h, torchLayerNormEps)
	w.register(&l.Base, nil, nn.NamedModule{Name: "ffn1_layer_norm", Module: l.ffn1Norm}, nn.NamedModule{Name: "ffn1", Module: l.ffn1},
		nn.NamedModule{Name: "self_attn_layer_norm", Module: l.attnNorm}, nn.NamedModule{Name: "self_attn", Module: l.attn},
		nn.NamedModule{Name: "conv_module", Module: l.conv}, nn.NamedModule{Name: "ffn2_layer_norm", Module: l.ffn2Norm},
		nn.NamedModule{Name: "ffn2", Module: l.ffn2}, nn.NamedModule{Name: "final_layer_norm", Module: l.final})
	return l
}

// featureEncoder builds feature_extractor.conv_layers.
func (w *weights) featureEncoder(m *Wav2Vec2ConformerModel) nn.Module {
	c := m.Config
	var items []nn.Module
	in := 1
	for i, out := range c.ConvDim {
		name := fmt.Sprintf("feature_extractor.conv_layers.%d", i)
		f := &conformerFeatureConv{act: c.FeatExtractActivation}
		f.conv = w.conv1dOpts(name+".conv", in, out, c.ConvKernel[i], c.ConvStride[i], 0, 1, c.ConvBias)
		children := []nn.NamedModule{{Name: "conv", Module: f.conv}}
		switch {
		case c.FeatExtractNorm == "layer":
			f.layer = w.layerNorm(name+".layer_norm", out, torchLayerNormEps)
			children = append(children, nn.NamedModule{Name: "layer_norm", Module: f.layer})
		case i == 0:
			// One group per channel: each channel normalised over time.
			g := &nn.GroupNorm{Groups: out, Channels: out, Eps: torchLayerNormEps}
			g.Weight, g.Bias = w.param(name+".layer_norm.weight", out), w.param(name+".layer_norm.bias", out)
			w.register(&g.Base, []nn.NamedParameter{{Name: "weight", Param: g.Weight}, {Name: "bias", Param: g.Bias}})
			f.group = g
			children = append(children, nn.NamedModule{Name: "layer_norm", Module: g})
		}
		w.register(&f.Base, nil, children...)
		m.convs = append(m.convs, f)
		items = append(items, f)
		in = out
	}
	return w.group(nn.NamedModule{Name: "conv_layers", Module: w.list(items...)})
}

// posConvEmbed loads encoder.pos_conv_embed: transformers builds this
// weight-normed conv but its Wav2Vec2ConformerEncoder never applies it,
// so it is checked and kept for StateDict, and unused. The weight is
// parametrizations.weight.original0/1 (torch's parametrize) or, in older
// checkpoints, weight_g and weight_v.
func (w *weights) posConvEmbed(c Wav2Vec2ConformerConfig) nn.Module {
	const name = "encoder.pos_conv_embed.conv"
	h, k := c.HiddenSize, c.NumConvPosEmbeddings
	bias := w.param(name+".bias", h)
	conv := &module{}
	if w.has(name+".weight_g") || w.has(name+".weight_v") {
		w.register(&conv.Base, []nn.NamedParameter{{Name: "bias", Param: bias},
			{Name: "weight_g", Param: w.param(name+".weight_g", 1, 1, k)},
			{Name: "weight_v", Param: w.param(name+".weight_v", h, h/c.NumConvPosEmbeddingGroups, k)}})
	} else {
		weight := &module{}
		w.register(&weight.Base, []nn.NamedParameter{
			{Name: "original0", Param: w.param(name+".parametrizations.weight.original0", 1, 1, k)},
			{Name: "original1", Param: w.param(name+".parametrizations.weight.original1", h, h/c.NumConvPosEmbeddingGroups, k)}})
		w.register(&conv.Base, []nn.NamedParameter{{Name: "bias", Param: bias}},
			nn.NamedModule{Name: "parametrizations", Module: w.group(nn.NamedModule{Name: "weight", Module: weight})})
	}
	return w.group(nn.NamedModule{Name: "conv", Module: conv})
}

// rotaryInvFreq is encoder.embed_positions.inv_freq, a buffer
// save_pretrained writes and from_pretrained loads: the file's values when
// it has them, else 1 / base^(2i/head_size) as transformers computes it.
func (w *weights) rotaryInvFreq(m *Wav2Vec2ConformerModel) nn.Module {
	const name = "encoder.embed_positions.inv_freq"
	d := m.Config.headSize()
	if !w.has(name) {
		m.invFreq = make([]float32, d/2)
		for i := range m.invFreq {
			// float32 steps, as torch: the exponent, the power, the reciprocal.
			p := float32(math.Pow(m.Config.RotaryEmbeddingBase, float64(float32(2*i)/float32(d))))
			m.invFreq[i] = 1 / p
		}
		return nil
	}
	p := w.param(name, d/2)
	buf, err := nn.NewBuffer(p.Tensor())
	if err != nil {
		w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
		return nil
	}
	if p != w.dummy {
		if m.invFreq, err = p.Tensor().Float32s(); err != nil {
			w.problems = append(w.problems, fmt.Sprintf("tensor %s: %v", name, err))
		}
	}
	pos := &module{}
	if err := pos.RegisterBuffer("inv_freq", buf); err != nil {
		w.problems = append(w.problems, err.Error())
	}
	return pos
}

// buildWav2Vec2Conformer builds the model from the checkpoint's tensors.
func buildWav2Vec2Conformer(c Wav2Vec2ConformerConfig, w *weights) *Wav2Vec2ConformerModel {
	m := &Wav2Vec2ConformerModel{Config: c, dev: w.dev, dtype: w.dtype}
	last, h := c.ConvDim[len(c.ConvDim)-1], c.HiddenSize
	children := []nn.NamedModule{{Name: "feature_extractor", Module: w.featureEncoder(m)}}
	m.projNorm = w.layerNorm("feature_projection.layer_norm", last, c.LayerNormEps)
	m.proj = w.linear("feature_projection.projection", last, h)
	children = append(children, nn.NamedModule{Name: "feature_projection", Module: w.group(
		nn.NamedModule{Name: "layer_norm", Module: m.projNorm}, nn.NamedModule{Name: "projection", Module: m.proj})})

	encoder := []nn.NamedModule{{Name: "pos_conv_embed", Module: w.posConvEmbed(c)}}
	if c.PositionEmbeddingsType == "rotary" {
		if pos := w.rotaryInvFreq(m); pos != nil {
			encoder = append(encoder, nn.NamedModule{Name: "embed_positions", Module: pos})
		}
	}
	var layers []nn.Module
	for i := range c.NumHiddenLayers {
		l := w.conformerLayer(fmt.Sprintf("encoder.layers.%d", i), c)
		m.layers = append(m.layers, l)
		layers = append(layers, l)
	}
	m.norm = w.layerNorm("encoder.layer_norm", h, c.LayerNormEps)
	encoder = append(encoder, nn.NamedModule{Name: "layer_norm", Module: m.norm}, nn.NamedModule{Name: "layers", Module: w.list(layers...)})
	children = append(children, nn.NamedModule{Name: "encoder", Module: w.group(encoder...)})

	var params []nn.NamedParameter
	if c.MaskTimeProb > 0 || c.MaskFeatureProb > 0 {
		// SpecAugment's learned mask vector: training only.
		params = append(params, nn.NamedParameter{Name: "masked_spec_embed", Param: w.param("masked_spec_embed", h)})
	}
	w.register(&m.Base, params, children...)
	return m
}

// LoadWav2Vec2ConformerModel loads a Wav2Vec2ConformerModel saved by
// save_pretrained (config.json and model.safetensors), as strictly as
// LoadBertModel: every tensor the config implies must be there with its
// shape, and no other.
func LoadWav2Vec2ConformerModel(dir string, opts ...LoadOption) (*Wav2Vec2ConformerModel, error) {
	cfg, w, path, err := readCheckpoint("LoadWav2Vec2ConformerModel", dir, ParseWav2Vec2ConformerConfig, opts)
	if err != nil {
		return nil, err
	}
	m := buildWav2Vec2Conformer(cfg, w)
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// Device is where the weights live; inputs must be there.
func (m *Wav2Vec2ConformerModel) Device() core.Device { return m.dev }

// DType is the weights' dtype, which input values must have.
func (m *Wav2Vec2ConformerModel) DType() core.DType { return m.dtype }

// Wav2Vec2ConformerOutput is Forward's result.
type Wav2Vec2ConformerOutput struct {
	LastHiddenState *core.Tensor // (B, frames, hidden_size), after the encoder's final LayerNorm
	// ExtractFeatures (B, frames, conv_dim[-1]) is the feature encoder's
	// output after the projection's LayerNorm, transformers'
	// extract_features.
	ExtractFeatures *core.Tensor
	// FrameMask (B, frames) bool marks the frames of real samples, for
	// pooling; nil when Forward had no attention mask.
	FrameMask *core.Tensor
}

// Forward encodes input values (B, samples), as Wav2Vec2FeatureExtractor
// makes them, without recording for autograd. attentionMask (B, samples),
// 1 or true at real samples, may be nil; as in transformers each row's
// count of real samples (its sum) sets how many frames attention sees,
// and frames past it are zeroed before the encoder.
func (m *Wav2Vec2ConformerModel) Forward(inputValues, attentionMask *core.Tensor) (*Wav2Vec2ConformerOutput, error) {
	frameMask, err := m.checkInput(inputValues, attentionMask)
	if err != nil {
		return nil, fmt.Errorf("multimodal: Wav2Vec2ConformerModel.Forward: %w", err)
	}
	defer core.NoGradScope()()
	s := inputValues.Shape()
	x := inputValues.Reshape(core.Shape{s[0], 1, s[1]})
	for _, f := range m.convs {
		x = f.forward(x)
	}
	feats := m.projNorm.Forward(x.Permute(core.Attrs{"dims": []int{0, 2, 1}}))
	h := m.proj.Forward(feats)
	out := &Wav2Vec2ConformerOutput{ExtractFeatures: feats, FrameMask: frameMask}
	var keep *core.Tensor
	if frameMask != nil {
		b, n := frameMask.Shape()[0], frameMask.Shape()[1]
		h = frameMask.Reshape(core.Shape{b, n, 1}).Where(h, core.Scalar(0, m.dtype, m.dev))
		keep = frameMask.Reshape(core.Shape{b, 1, 1, n})
	}
	pos := m.positions(h.Shape()[1])
	for _, l := range m.layers {
		h = l.forward(h, pos, keep)
	}
	out.LastHiddenState = m.norm.Forward(h)
	if err := out.LastHiddenState.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: Wav2Vec2ConformerModel.Forward: %w", err)
	}
	return out, nil
}

// checkInput checks the inputs and makes the frame mask (nil without an
// attention mask): transformers' _get_feature_vector_attention_mask.
func (m *Wav2Vec2ConformerModel) checkInput(x, mask *core.Tensor) (*core.Tensor, error) {
	if x == nil {
		return nil, fmt.Errorf("input values are nil")
	}
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("input values: %w", err)
	}
	s := x.Shape()
	switch {
	case len(s) != 2 || s[0] < 1:
		return nil, fmt.Errorf("input values have shape %v, want (batch, samples)", s)
	case x.DType() != m.dtype:
		return nil, fmt.Errorf("input values have dtype %s, the model %s", x.DType(), m.dtype)
	case x.Device() != m.dev:
		return nil, fmt.Errorf("input values are on %s, the model on %s", x.Device(), m.dev)
	case m.Config.FeatureLength(s[1]) < 1:
		return nil, fmt.Errorf("input values have %d samples, fewer than the feature encoder's receptive field %d", s[1], m.receptiveField())
	}
	if mask == nil {
		return nil, nil
	}
	if err := mask.Err(); err != nil {
		return nil, fmt.Errorf("attention mask: %w", err)
	}
	if !mask.Shape().Equal(s) || !(mask.DType() == core.Bool || mask.DType().IsInt()) {
		return nil, fmt.Errorf("attention mask has shape %v and dtype %s, want the input values' shape %v and an integer or bool dtype", mask.Shape(), mask.DType(), s)
	}
	vals, err := mask.Int64s()
	if err != nil {
		return nil, fmt.Errorf("attention mask: %w", err)
	}
	lengths := make([]int, s[0])
	for b := range s[0] {
		for _, v := range vals[b*s[1] : (b+1)*s[1]] {
			lengths[b] += int(v)
		}
	}
	return m.FrameMask(lengths, s[1])
}

// FrameMask is the (B, frames) bool mask of the frames that waveforms of
// the given sample counts fill in a batch padded to samples: the frames
// attention sees, as Forward's FrameMask with an attention mask.
func (m *Wav2Vec2ConformerModel) FrameMask(lengths []int, samples int) (*core.Tensor, error) {
	frames := m.Config.FeatureLength(samples)
	keep := make([]bool, len(lengths)*frames)
	for b, real := range lengths {
		n := m.Config.FeatureLength(real)
		if n < 1 || real > samples {
			return nil, fmt.Errorf("row %d has %d real samples; want from the feature encoder's receptive field %d to the %d samples", b, real, m.receptiveField(), samples)
		}
		for j := range n {
			keep[b*frames+j] = true
		}
	}
	return core.FromSlice(keep, core.Shape{len(lengths), frames}, m.dev), nil
}

// receptiveField is the fewest samples that make one frame.
func (m *Wav2Vec2ConformerModel) receptiveField() int {
	c := m.Config
	n := 1
	for i := len(c.ConvKernel) - 1; i >= 0; i-- {
		n = (n-1)*c.ConvStride[i] + c.ConvKernel[i]
	}
	return n
}

func (f *conformerFeatureConv) forward(x *core.Tensor) *core.Tensor {
	x = f.conv.Forward(x)
	switch {
	case f.layer != nil:
		x = f.layer.Forward(x.Permute(core.Attrs{"dims": []int{0, 2, 1}})).Permute(core.Attrs{"dims": []int{0, 2, 1}})
	case f.group != nil:
		x = f.group.Forward(x)
	}
	return activate(x, f.act)
}

// conformerPositions are the encoder's position inputs for n frames: the
// relative table (1, 2n-1, hidden) or the rotary cos and sin (n, 1, head
// size).
type conformerPositions struct{ rel, cos, sin *core.Tensor }

// positions builds them on the host, in float32 steps as torch computes
// them (the angle rounded to float32 before its sine), then casts.
func (m *Wav2Vec2ConformerModel) positions(n int) conformerPositions {
	c := m.Config
	put := func(v []float32, shape core.Shape) *core.Tensor {
		return core.FromSlice(v, shape, core.CPU).Cast(m.dtype).To(m.dev)
	}
	if c.PositionEmbeddingsType == "rotary" {
		d := c.headSize()
		cos, sin := make([]float32, n*d), make([]float32, n*d)
		for t := range n {
			for i, f := range m.invFreq {
				a := float64(float32(t) * f)
				// torch.cat((freqs, freqs)): each frequency twice.
				for _, j := range []int{t*d + i, t*d + i + d/2} {
					cos[j], sin[j] = float32(math.Cos(a)), float32(math.Sin(a))
				}
			}
		}
		return conformerPositions{cos: put(cos, core.Shape{n, 1, d}), sin: put(sin, core.Shape{n, 1, d})}
	}
	// Wav2Vec2ConformerRelPositionalEmbedding: row r is relative position
	// n-1-r, sines at even and cosines at odd features.
	h := c.HiddenSize
	step := float32(-(math.Log(10000) / float64(h)))
	rel := make([]float32, (2*n-1)*h)
	for i := 0; i < h; i += 2 {
		div := float32(math.Exp(float64(float32(i) * step)))
		for r := range 2*n - 1 {
			a := float64(float32(n-1-r) * div)
			rel[r*h+i] = float32(math.Sin(a))
			if i+1 < h {
				rel[r*h+i+1] = float32(math.Cos(a))
			}
		}
	}
	return conformerPositions{rel: put(rel, core.Shape{1, 2*n - 1, h})}
}

// forward maps h (B, n, hidden) to (B, n, hidden); keep (B, 1, 1, n),
// bool or nil, says which keys attention sees.
func (l *conformerLayer) forward(h *core.Tensor, pos conformerPositions, keep *core.Tensor) *core.Tensor {
	if h.Err() != nil {
		return h
	}
	half := core.Scalar(0.5, h.DType(), h.Device())
	h = l.ffn1.forward(l.ffn1Norm.Forward(h)).Mul(half).Add(h)
	h = l.attn.forward(l.attnNorm.Forward(h), pos, keep).Add(h)
	h = h.Add(l.conv.forward(h))
	h = l.ffn2.forward(l.ffn2Norm.Forward(h)).Mul(half).Add(h)
	return l.final.Forward(h)
}

func (f *conformerFFN) forward(x *core.Tensor) *core.Tensor {
	return f.out.Forward(linearActivated(f.in, x, f.act))
}

// forward is the convolution module on h (B, n, hidden): LayerNorm,
// pointwise conv to twice the width and GLU, the depthwise conv, batch
// norm with the running statistics, the activation, the second pointwise
// conv.
func (m *conformerConvModule) forward(h *core.Tensor) *core.Tensor {
	x := m.pw1.Forward(m.norm.Forward(h).Permute(core.Attrs{"dims": []int{0, 2, 1}}))
	a := x.Slice(core.Attrs{"axis": 1, "start": 0, "stop": m.hidden})
	gate := x.Slice(core.Attrs{"axis": 1, "start": m.hidden, "stop": 2 * m.hidden})
	x = m.dw.Forward(a.Mul(gate.Sigmoid()))
	x = m.pw2.Forward(activate(m.bn.Forward(x), m.act))
	return x.Permute(core.Attrs{"dims": []int{0, 2, 1}})
}

// forward is self-attention on x (B, n, hidden), the block's normed input.
func (a *conformerAttention) forward(x *core.Tensor, pos conformerPositions, keep *core.Tensor) *core.Tensor {
	s := x.Shape()
	b, n := s[0], s[1]
	split := func(t *core.Tensor) *core.Tensor {
		return t.Reshape(core.Shape{b, n, a.heads, a.headDim}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	}
	qk := x
	if pos.cos != nil {
		// transformers rotates the layer's input, per head, before the
		// query and key projections (not the projected queries and keys).
		r := x.Reshape(core.Shape{b, n, a.heads, a.headDim})
		lo := r.Slice(core.Attrs{"axis": 3, "start": 0, "stop": a.headDim / 2})
		hi := r.Slice(core.Attrs{"axis": 3, "start": a.headDim / 2, "stop": a.headDim})
		rot := core.Concat([]*core.Tensor{hi.Neg(), lo}, core.Attrs{"axis": 3})
		qk = r.Mul(pos.cos).Add(rot.Mul(pos.sin)).Reshape(s)
	}
	q, k, v := split(a.q.Forward(qk)), split(a.k.Forward(qk)), split(a.v.Forward(x))
	scale := 1 / math.Sqrt(float64(a.headDim))
	var o *core.Tensor
	if pos.rel != nil {
		o = a.relative(q, k, v, pos.rel, keep, scale)
	} else {
		o = q.ScaledDotProductAttention(k, v, keep, core.Attrs{"scale": scale})
	}
	o = o.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{b, n, a.heads * a.headDim})
	return a.o.Forward(o)
}

// relativeScoreBytes bounds one chunk of relative position scores (heads
// of one batch row, n × 2n each): the whole (B, heads, n, 2n-1) tensor of
// a few seconds of audio passes WebGPU's largest binding (128 MiB).
const relativeScoreBytes = 1 << 26

// relative is attention with Transformer-XL relative positions on q, k, v
// (B, heads, n, head size), rel the sinusoid table (1, 2n-1, hidden): the
// position term (q + pos_bias_v) · R_{i-j}, scaled, joins the content
// scores (q + pos_bias_u) · k_j as an additive mask, in which padding keys
// get the dtype's lowest value, as transformers' SDPA path builds it. It
// runs over chunks of heads so no chunk's scores pass relativeScoreBytes.
func (a *conformerAttention) relative(q, k, v, rel, keep *core.Tensor, scale float64) *core.Tensor {
	s := q.Shape()
	b, n := s[0], s[2]
	dt, dev := q.DType(), q.Device()
	p := a.pos.Forward(rel).Reshape(core.Shape{2*n - 1, a.heads, a.headDim}).Permute(core.Attrs{"dims": []int{1, 2, 0}})
	bu := a.biasU.Tensor().Reshape(core.Shape{a.heads, 1, a.headDim})
	bv := a.biasV.Tensor().Reshape(core.Shape{a.heads, 1, a.headDim})
	group := max(1, min(a.heads, relativeScoreBytes/(2*n*n*dt.Size())))
	rows := make([]*core.Tensor, b)
	for i := range b {
		var parts []*core.Tensor
		for h0 := 0; h0 < a.heads; h0 += group {
			h1 := min(h0+group, a.heads)
			heads := func(t *core.Tensor, axis int) *core.Tensor {
				return t.Slice(core.Attrs{"axis": axis, "start": h0, "stop": h1})
			}
			row := func(t *core.Tensor) *core.Tensor {
				return heads(t.Slice(core.Attrs{"axis": 0, "start": i, "stop": i + 1}), 1)
			}
			qi := row(q)
			bd := skew(qi.Add(heads(bv, 0)).Matmul(heads(p, 0)), n).Mul(core.Scalar(scale, dt, dev))
			if keep != nil {
				m := keep.Slice(core.Attrs{"axis": 0, "start": i, "stop": i + 1})
				bd = m.Where(bd, core.Scalar(lowest(dt), dt, dev))
			}
			parts = append(parts, qi.Add(heads(bu, 0)).ScaledDotProductAttention(row(k), row(v), bd, core.Attrs{"scale": scale}))
		}
		rows[i] = core.Concat(parts, core.Attrs{"axis": 1})
	}
	return core.Concat(rows, core.Attrs{"axis": 0})
}

// skew turns scores against the 2n-1 relative positions (B, heads, n,
// 2n-1), column c being position n-1-c, into scores against the n keys
// (B, heads, n, n): query i and key j take column n-1-i+j. It is
// Transformer-XL's shift, as transformers writes it: pad one column on
// the left, read the rows as (2n, n), drop the first, read back as
// (n, 2n-1) and keep the first n columns.
func skew(bd *core.Tensor, n int) *core.Tensor {
	if bd.Err() != nil {
		return bd
	}
	s := bd.Shape()
	b, h := s[0], s[1]
	x := bd.Pad(core.Attrs{"pads": []int{1, 0}}).Reshape(core.Shape{b, h, 2 * n, n})
	x = x.Slice(core.Attrs{"axis": 2, "start": 1, "stop": 2 * n}).Reshape(core.Shape{b, h, n, 2*n - 1})
	return x.Slice(core.Attrs{"axis": 3, "start": 0, "stop": n})
}

// lowest is torch.finfo(dtype).min.
func lowest(d core.DType) float64 {
	switch d {
	case core.F64:
		return -math.MaxFloat64
	case core.F16:
		return -65504
	case core.BF16:
		return -3.3895313892515355e38
	}
	return -math.MaxFloat32
}
