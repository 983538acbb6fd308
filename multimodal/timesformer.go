package multimodal

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// TimesformerModel is transformers' TimesformerModel: every frame cut
// into patches by ViT's strided conv, a [CLS] token, spatial position
// embeddings and, unless space_only, time embeddings; then pre-norm layers
// whose attention is divided (over the frames of each patch, then over the
// patches of each frame), joint or per frame, and a final LayerNorm. Its
// StateDict holds the names save_pretrained writes (embeddings.…,
// encoder.layer.N.…, layernorm.…).
type TimesformerModel struct {
	nn.Base
	Config TimesformerConfig

	dev    core.Device
	dtype  core.DType
	cls    *nn.Parameter
	pos    *nn.Parameter
	time   *nn.Parameter // nil for space_only
	patch  *nn.Conv2d
	layers []*timesformerLayer
	norm   *nn.LayerNorm
}

// TimesformerForVideoClassification is a TimesformerModel and a linear
// classifier on the final [CLS] token.
type TimesformerForVideoClassification struct {
	nn.Base
	Timesformer *TimesformerModel
	Classifier  *nn.Linear
}

// timesformerAttention is TimeSformerAttention: one fused q, k, v
// projection (attention.qkv) and the output projection (output.dense).
type timesformerAttention struct {
	nn.Base
	qkv, out *nn.Linear
	heads    int
}

// timesformerLayer is TimesformerLayer. The temporal parts exist only for
// divided_space_time.
type timesformerLayer struct {
	nn.Base
	temporalNorm  *nn.LayerNorm
	temporal      *timesformerAttention
	temporalDense *nn.Linear
	norm1, norm2  *nn.LayerNorm
	spatial       *timesformerAttention
	fc1, fc2      *nn.Linear
	act           string
	divided       bool
}

func (w *weights) timesformerAttention(prefix string, cfg TimesformerConfig) *timesformerAttention {
	h := cfg.HiddenSize
	a := &timesformerAttention{heads: cfg.NumAttentionHeads}
	a.qkv = w.linearBias(prefix+".attention.qkv", h, 3*h, cfg.QKVBias)
	a.out = w.linear(prefix+".output.dense", h, h)
	w.register(&a.Base, nil, nn.NamedModule{Name: "attention", Module: w.group(nn.NamedModule{Name: "qkv", Module: a.qkv})},
		nn.NamedModule{Name: "output", Module: w.group(nn.NamedModule{Name: "dense", Module: a.out})})
	return a
}

func (w *weights) timesformerLayer(prefix string, cfg TimesformerConfig) *timesformerLayer {
	h := cfg.HiddenSize
	l := &timesformerLayer{act: cfg.HiddenAct, divided: cfg.AttentionType == DividedSpaceTime}
	var c []nn.NamedModule
	if l.divided {
		l.temporalNorm = w.layerNorm(prefix+".temporal_layernorm", h, cfg.LayerNormEps)
		l.temporal = w.timesformerAttention(prefix+".temporal_attention", cfg)
		l.temporalDense = w.linear(prefix+".temporal_dense", h, h)
		c = append(c, nn.NamedModule{Name: "temporal_layernorm", Module: l.temporalNorm},
			nn.NamedModule{Name: "temporal_attention", Module: l.temporal}, nn.NamedModule{Name: "temporal_dense", Module: l.temporalDense})
	}
	l.spatial = w.timesformerAttention(prefix+".attention", cfg)
	l.norm1 = w.layerNorm(prefix+".layernorm_before", h, cfg.LayerNormEps)
	l.norm2 = w.layerNorm(prefix+".layernorm_after", h, cfg.LayerNormEps)
	l.fc1 = w.linear(prefix+".intermediate.dense", h, cfg.IntermediateSize)
	l.fc2 = w.linear(prefix+".output.dense", cfg.IntermediateSize, h)
	c = append(c, nn.NamedModule{Name: "attention", Module: l.spatial},
		nn.NamedModule{Name: "intermediate", Module: w.group(nn.NamedModule{Name: "dense", Module: l.fc1})},
		nn.NamedModule{Name: "output", Module: w.group(nn.NamedModule{Name: "dense", Module: l.fc2})},
		nn.NamedModule{Name: "layernorm_before", Module: l.norm1}, nn.NamedModule{Name: "layernorm_after", Module: l.norm2})
	w.register(&l.Base, nil, c...)
	return l
}

// LoadTimesformerModel loads a TimesformerModel saved by save_pretrained
// (config.json and model.safetensors), as strictly as LoadBertModel: a
// missing, misshaped or unexpected tensor fails naming it.
func LoadTimesformerModel(dir string, opts ...LoadOption) (*TimesformerModel, error) {
	cfg, w, path, err := readCheckpoint("LoadTimesformerModel", dir, ParseTimesformerConfig, opts)
	if err != nil {
		return nil, err
	}
	m := buildTimesformer(cfg, w, "")
	w.register(&m.Base, nil, m.children(w)...)
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// LoadTimesformerForVideoClassification loads a
// TimesformerForVideoClassification saved by save_pretrained:
// timesformer.… and classifier.…
func LoadTimesformerForVideoClassification(dir string, opts ...LoadOption) (*TimesformerForVideoClassification, error) {
	cfg, w, path, err := readCheckpoint("LoadTimesformerForVideoClassification", dir, ParseTimesformerConfig, opts)
	if err != nil {
		return nil, err
	}
	m := &TimesformerForVideoClassification{Timesformer: buildTimesformer(cfg, w, "timesformer.")}
	w.register(&m.Timesformer.Base, nil, m.Timesformer.children(w)...)
	m.Classifier = w.linear("classifier", cfg.HiddenSize, len(cfg.Labels))
	w.register(&m.Base, nil, nn.NamedModule{Name: "timesformer", Module: m.Timesformer},
		nn.NamedModule{Name: "classifier", Module: m.Classifier})
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// NewTimesformerForVideoClassification is a model of cfg with weights
// drawn from N(0, 0.02²) by a seeded stream (no checkpoint): for timing
// and for exercising the code at sizes no test checkpoint has.
func NewTimesformerForVideoClassification(cfg TimesformerConfig, seed int64, opts ...LoadOption) (*TimesformerForVideoClassification, error) {
	const op = "NewTimesformerForVideoClassification"
	o, err := buildLoadOptions(op, opts)
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	if len(cfg.Labels) == 0 {
		return nil, fmt.Errorf("multimodal: %s: the config has no labels", op)
	}
	w, err := drawnWeights(seed, o)
	if err != nil {
		return nil, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	m := &TimesformerForVideoClassification{Timesformer: buildTimesformer(cfg, w, "timesformer."),
		Classifier: w.linear("classifier", cfg.HiddenSize, len(cfg.Labels))}
	w.register(&m.Timesformer.Base, nil, m.Timesformer.children(w)...)
	w.register(&m.Base, nil, nn.NamedModule{Name: "timesformer", Module: m.Timesformer},
		nn.NamedModule{Name: "classifier", Module: m.Classifier})
	if err := w.check(op); err != nil {
		return nil, err
	}
	return m, nil
}

func buildTimesformer(cfg TimesformerConfig, w *weights, prefix string) *TimesformerModel {
	h := cfg.HiddenSize
	m := &TimesformerModel{Config: cfg, dev: w.dev, dtype: w.dtype}
	m.cls = w.param(prefix+"embeddings.cls_token", 1, 1, h)
	m.pos = w.param(prefix+"embeddings.position_embeddings", 1, cfg.grid()*cfg.grid()+1, h)
	if cfg.AttentionType != SpaceOnly {
		m.time = w.param(prefix+"embeddings.time_embeddings", 1, cfg.NumFrames, h)
	}
	m.patch = w.patchConv(prefix+"embeddings.patch_embeddings.projection", cfg.NumChannels, h, cfg.PatchSize, true)
	for i := range cfg.NumHiddenLayers {
		m.layers = append(m.layers, w.timesformerLayer(fmt.Sprintf("%sencoder.layer.%d", prefix, i), cfg))
	}
	m.norm = w.layerNorm(prefix+"layernorm", h, cfg.LayerNormEps)
	return m
}

// children is the module tree under TimesformerModel, for StateDict.
func (m *TimesformerModel) children(w *weights) []nn.NamedModule {
	emb := w.group(nn.NamedModule{Name: "patch_embeddings", Module: w.group(nn.NamedModule{Name: "projection", Module: m.patch})})
	params := []nn.NamedParameter{{Name: "cls_token", Param: m.cls}, {Name: "position_embeddings", Param: m.pos}}
	if m.time != nil {
		params = append(params, nn.NamedParameter{Name: "time_embeddings", Param: m.time})
	}
	w.register(&emb.Base, params)
	layers := make([]nn.Module, len(m.layers))
	for i, l := range m.layers {
		layers[i] = l
	}
	return []nn.NamedModule{{Name: "embeddings", Module: emb},
		{Name: "encoder", Module: w.group(nn.NamedModule{Name: "layer", Module: w.list(layers...)})},
		{Name: "layernorm", Module: m.norm}}
}

// Device is where the weights live; Forward takes pixels there.
func (m *TimesformerModel) Device() core.Device { return m.dev }

// Forward encodes pixel values (B, frames, num_channels, H, W), each frame
// normalized as the model's image processor does (ImageProcessor's
// PreprocessVideos), without recording for autograd.
//
// LastHiddenState is (B, 1 + patches·frames, hidden) for divided and
// joint attention: the [CLS] token, then every patch's frames in turn, as
// transformers orders them. For space_only it is (B·frames, 1 + patches,
// hidden): transformers encodes each frame as its own sequence and leaves
// them so. HiddenStates are the embeddings' and every layer's output.
//
// Divided attention takes num_frames frames whose patch grid is the
// config's wide (transformers' layer reshapes by both); a frame of another
// height, and for joint and space_only any size and frame count, gets the
// position and time embeddings resized by nearest neighbour, as
// transformers resizes them.
func (m *TimesformerModel) Forward(pixels *core.Tensor) (*VisionOutput, error) {
	const op = "TimesformerModel.Forward"
	g, err := m.checkVideo(op, pixels)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	h := m.embed(pixels, g)
	out := &VisionOutput{HiddenStates: []*core.Tensor{h}}
	for _, l := range m.layers {
		h = l.forward(h, g)
		out.HiddenStates = append(out.HiddenStates, h)
	}
	out.LastHiddenState = m.norm.Forward(h)
	if err := out.LastHiddenState.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	return out, nil
}

// Forward gives the logits of pixel values: (B, len(Labels)), or for
// space_only (B·frames, len(Labels)), one row per frame, as transformers
// gives them.
func (m *TimesformerForVideoClassification) Forward(pixels *core.Tensor) (*core.Tensor, error) {
	out, err := m.Timesformer.Forward(pixels)
	if err != nil {
		return nil, fmt.Errorf("multimodal: TimesformerForVideoClassification.Forward: %w", err)
	}
	return m.Logits(out)
}

// Logits are the classifier's logits of the [CLS] tokens of out, the
// Timesformer's output: Forward without encoding again, for a caller that
// wants the hidden states too.
func (m *TimesformerForVideoClassification) Logits(out *VisionOutput) (*core.Tensor, error) {
	if out == nil || out.LastHiddenState == nil {
		return nil, fmt.Errorf("multimodal: TimesformerForVideoClassification.Logits: no last hidden state")
	}
	defer core.NoGradScope()()
	logits := m.Classifier.Forward(firstToken(out.LastHiddenState))
	if err := logits.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: TimesformerForVideoClassification.Logits: %w", err)
	}
	return logits, nil
}

// videoGeom is one Forward's sizes: batch, frames, the patch grid.
type videoGeom struct{ b, t, ph, pw int }

func (g videoGeom) patches() int { return g.ph * g.pw }

// checkVideo checks a (B, frames, channels, H, W) batch against what
// transformers' TimeSformer computes correctly for the config.
func (m *TimesformerModel) checkVideo(op string, x *core.Tensor) (videoGeom, error) {
	c := m.Config
	if x == nil {
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels are nil", op)
	}
	if err := x.Err(); err != nil {
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels: %w", op, err)
	}
	s := x.Shape()
	switch {
	case len(s) != 5 || s[0] < 1 || s[1] < 1 || s[2] != c.NumChannels || s[3] < c.PatchSize || s[4] < c.PatchSize:
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels have shape %v, want (batch, frames, %d, height, width) with height and width >= patch_size %d",
			op, s, c.NumChannels, c.PatchSize)
	case x.DType() != m.dtype:
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels have dtype %s, the model %s", op, x.DType(), m.dtype)
	case x.Device() != m.dev:
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels are on %s, the model on %s", op, x.Device(), m.dev)
	}
	g := videoGeom{b: s[0], t: s[1], ph: s[3] / c.PatchSize, pw: s[4] / c.PatchSize}
	if g.pw == 1 && g.patches() != c.grid()*c.grid() {
		// transformers takes the resized grid's height as (1+patches) //
		// width, one too many for a one-patch-wide frame, and fails.
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels are %d wide, one patch: transformers cannot resize the position embeddings to a %dx1 grid",
			op, s[4], g.ph)
	}
	if c.AttentionType != DividedSpaceTime {
		return g, nil
	}
	// transformers' divided layer splits the sequence with the config's
	// num_frames and grid width, whatever the input: other values would
	// mix patches of different frames, so they are refused.
	switch {
	case g.t != c.NumFrames:
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels have %d frames; divided_space_time attention takes num_frames %d", op, g.t, c.NumFrames)
	case g.pw != c.grid():
		return videoGeom{}, fmt.Errorf("multimodal: %s: pixels are %d wide, %d patches; divided_space_time attention takes %d patches across (image_size %d / patch_size %d)",
			op, s[4], g.pw, c.grid(), c.ImageSize, c.PatchSize)
	}
	return g, nil
}

// embed is TimesformerEmbeddings: (B·T, 1+P, hidden) for space_only, else
// (B, 1+P·T, hidden) with each patch's T frames together.
func (m *TimesformerModel) embed(pixels *core.Tensor, g videoGeom) *core.Tensor {
	c := m.Config
	s := pixels.Shape()
	x := patchEmbed(m.patch, pixels.Reshape(core.Shape{g.b * g.t, s[2], s[3], s[4]}))
	h := c.HiddenSize
	pos := m.positions(g)
	if c.AttentionType == SpaceOnly {
		return prependToken(m.cls.Tensor(), x).Add(pos)
	}
	// The [CLS] token is the same for every frame (cls + its position), so
	// it is added once; the patches get their positions, then their
	// frame's time embedding.
	cls := m.cls.Tensor().Add(pos.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}))
	x = x.Add(pos.Slice(core.Attrs{"axis": 1, "start": 1}))
	x = x.Reshape(core.Shape{g.b, g.t, g.patches(), h}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	x = x.Add(m.times(g.t).Reshape(core.Shape{1, 1, g.t, h}))
	return prependToken(cls, x.Reshape(core.Shape{g.b, g.patches() * g.t, h}))
}

// positions are the position embeddings (1, 1+P, hidden) for g's patch
// grid: the config's own when the patch count is the config's (as
// transformers tests it: by count, not by grid), else the config's grid
// resized by nearest neighbour, the [CLS] position kept.
func (m *TimesformerModel) positions(g videoGeom) *core.Tensor {
	c := m.Config
	pos := m.pos.Tensor()
	n := c.grid()
	if g.patches() == n*n {
		return pos
	}
	h := c.HiddenSize
	grid := pos.Slice(core.Attrs{"axis": 1, "start": 1}).Permute(core.Attrs{"dims": []int{0, 2, 1}}).Reshape(core.Shape{1, h, n, n})
	grid = grid.Interpolate(core.Attrs{"size": []int{g.ph, g.pw}, "mode": "nearest"})
	grid = grid.Reshape(core.Shape{1, h, g.patches()}).Permute(core.Attrs{"dims": []int{0, 2, 1}})
	return core.Concat([]*core.Tensor{pos.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}), grid}, core.Attrs{"axis": 1})
}

// times are the time embeddings (1, t, hidden): the config's, or resized
// to t frames by nearest neighbour as transformers resizes them.
func (m *TimesformerModel) times(t int) *core.Tensor {
	c := m.Config
	tm := m.time.Tensor()
	if t == c.NumFrames {
		return tm
	}
	h := c.HiddenSize
	// A 1-D nearest resize is the 2-D one of a height-1 image.
	x := tm.Permute(core.Attrs{"dims": []int{0, 2, 1}}).Reshape(core.Shape{1, h, 1, c.NumFrames})
	x = x.Interpolate(core.Attrs{"size": []int{1, t}, "mode": "nearest"})
	return x.Reshape(core.Shape{1, h, t}).Permute(core.Attrs{"dims": []int{0, 2, 1}})
}

// rows applies f, which maps (rows, d) to (rows, e), to every vector of x
// (..., d). A Linear on a 3-D input is a batched matmul that repacks its
// weight once per batch, and the temporal attention's batch is every patch
// of every video: as one (rows, d) matrix the weight is packed once.
func rows(f func(*core.Tensor) *core.Tensor, x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	s := x.Shape()
	d := s[len(s)-1]
	y := f(x.Reshape(core.Shape{x.Numel() / d, d}))
	if y.Err() != nil {
		return y
	}
	s[len(s)-1] = y.Shape()[1]
	return y.Reshape(s)
}

// forward is attention over the sequences of x (N, S, hidden), already
// normed, with the output projection.
func (a *timesformerAttention) forward(x *core.Tensor) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	h := x.Shape()[2]
	qkv := rows(a.qkv.Forward, x)
	part := func(i int) *core.Tensor { return qkv.Slice(core.Attrs{"axis": 2, "start": i * h, "stop": (i + 1) * h}) }
	o := attend(part(0), part(1), part(2), nil, a.heads)
	nn.ReleaseDead(nil, qkv)
	y := rows(a.out.Forward, o)
	nn.ReleaseDead(nil, o)
	return y
}

// mlp is the layer's feed-forward block on h, without the residual.
func (l *timesformerLayer) mlp(h *core.Tensor) *core.Tensor {
	x := l.norm2.Forward(h)
	y := rows(func(x *core.Tensor) *core.Tensor { return mlp(x, l.fc1, l.fc2, l.act) }, x)
	nn.ReleaseDead(nil, x)
	return y
}

// forward is TimesformerLayer's; drop path is the identity at inference.
func (l *timesformerLayer) forward(h *core.Tensor, g videoGeom) *core.Tensor {
	if h.Err() != nil {
		return h
	}
	if !l.divided {
		h = h.Add(l.spatial.forward(l.norm1.Forward(h)))
		return h.Add(l.mlp(h))
	}
	hid := h.Shape()[2]
	p, t := g.patches(), g.t
	cls := h.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}) // (B, 1, hidden)
	tokens := h.Slice(core.Attrs{"axis": 1, "start": 1})         // (B, P·T, hidden)

	// Temporal: each patch attends over its T frames.
	x := l.temporalNorm.Forward(tokens).Reshape(core.Shape{g.b * p, t, hid})
	y := l.temporal.forward(x).Reshape(core.Shape{g.b, p * t, hid})
	nn.ReleaseDead(nil, x)
	x = rows(l.temporalDense.Forward, y)
	nn.ReleaseDead(nil, y)
	tokens = tokens.Add(x)
	nn.ReleaseDead(nil, x)

	// Spatial: each frame's patches, with the [CLS] token put before every
	// frame, attend over each other.
	frames := tokens.Reshape(core.Shape{g.b, p, t, hid}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{g.b * t, p, hid})
	clsRep := cls.Expand(core.Attrs{"shape": []int{g.b, t, hid}}).Reshape(core.Shape{g.b * t, 1, hid})
	x = l.spatial.forward(l.norm1.Forward(core.Concat([]*core.Tensor{clsRep, frames}, core.Attrs{"axis": 1})))
	// The [CLS] token's result is its frames' mean; the patches go back to
	// patch-major order.
	clsRes := x.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}).Reshape(core.Shape{g.b, t, hid}).Mean(core.Attrs{"axes": []int{1}, "keepdim": true})
	res := x.Slice(core.Attrs{"axis": 1, "start": 1}).Reshape(core.Shape{g.b, t, p, hid}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{g.b, p * t, hid})
	h = core.Concat([]*core.Tensor{cls.Add(clsRes), tokens.Add(res)}, core.Attrs{"axis": 1})
	return h.Add(l.mlp(h))
}
