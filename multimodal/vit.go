package multimodal

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// ViTConfig holds a ViT's options, spelled as transformers' config.json
// spells them.
type ViTConfig struct {
	HiddenSize        int     `json:"hidden_size"`
	NumHiddenLayers   int     `json:"num_hidden_layers"`
	NumAttentionHeads int     `json:"num_attention_heads"`
	IntermediateSize  int     `json:"intermediate_size"`
	HiddenAct         string  `json:"hidden_act"`
	LayerNormEps      float64 `json:"layer_norm_eps"`
	ImageSize         int     `json:"image_size"` // height = width
	PatchSize         int     `json:"patch_size"`
	NumChannels       int     `json:"num_channels"`
	QKVBias           bool    `json:"qkv_bias"`
	PoolerOutputSize  int     `json:"pooler_output_size"` // the pooler of ViTModel
	// Labels are id2label's names by id; ViTForImageClassification has
	// one logit per label.
	Labels []string
}

func vitDefaults() ViTConfig {
	return ViTConfig{HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12, IntermediateSize: 3072,
		HiddenAct: "gelu", LayerNormEps: 1e-12, ImageSize: 224, PatchSize: 16, NumChannels: 3, QKVBias: true,
		Labels: []string{"LABEL_0", "LABEL_1"}}
}

var vitKeys = taggedKeys(map[string]configKey[ViTConfig]{
	"model_type":     only[ViTConfig](`"vit"`),
	"pooler_act":     only[ViTConfig](`"tanh"`),
	"encoder_stride": func(*ViTConfig, json.RawMessage) error { return nil }, // ViTForMaskedImageModeling's decoder
	"id2label": func(c *ViTConfig, raw json.RawMessage) error {
		labels, err := readLabels(raw)
		c.Labels = labels
		return err
	},
})

// readLabels turns id2label ({"0": "cat", ...}) into names by id; the ids
// must be 0..n-1.
func readLabels(raw json.RawMessage) ([]string, error) {
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(m))
	for k := range m {
		id, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("id %q is not an integer", k)
		}
		ids = append(ids, id)
	}
	sort.Ints(ids)
	labels := make([]string, len(ids))
	for i, id := range ids {
		if id != i {
			return nil, fmt.Errorf("ids are not 0..%d (missing %d)", len(ids)-1, i)
		}
		labels[i] = m[strconv.Itoa(id)]
	}
	return labels, nil
}

// ParseViTConfig reads a ViT config.json. A key webtensor does not know,
// or a value it does not implement (a list image size, another pooler
// activation), fails naming the key.
func ParseViTConfig(data []byte) (ViTConfig, error) {
	c := vitDefaults()
	if err := parseConfig("ViT", data, &c, vitKeys); err != nil {
		return ViTConfig{}, err
	}
	if c.PoolerOutputSize == 0 {
		c.PoolerOutputSize = c.HiddenSize
	}
	if err := positive("ViT", map[string]int{"hidden_size": c.HiddenSize, "num_hidden_layers": c.NumHiddenLayers,
		"num_attention_heads": c.NumAttentionHeads, "intermediate_size": c.IntermediateSize, "image_size": c.ImageSize,
		"patch_size": c.PatchSize, "num_channels": c.NumChannels, "pooler_output_size": c.PoolerOutputSize}); err != nil {
		return ViTConfig{}, err
	}
	switch {
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return ViTConfig{}, fmt.Errorf("multimodal: ViT config: hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	case c.ImageSize%c.PatchSize != 0:
		return ViTConfig{}, fmt.Errorf("multimodal: ViT config: image_size %d is not a multiple of patch_size %d", c.ImageSize, c.PatchSize)
	case !activations[c.HiddenAct]:
		return ViTConfig{}, fmt.Errorf("multimodal: ViT config: key \"hidden_act\": %q is not supported (supported: %s)", c.HiddenAct, activationNames)
	}
	return c, nil
}

// ViTModel is transformers' ViTModel: the image cut into patches by a
// strided conv, a [CLS] token and learned position embeddings, pre-norm
// encoder layers, a final LayerNorm and, when the checkpoint has one, a
// tanh pooler on the [CLS] token. Its StateDict holds the names
// save_pretrained writes (embeddings.…, encoder.layer.N.…, layernorm.…).
type ViTModel struct {
	nn.Base
	Config ViTConfig

	dev    core.Device
	dtype  core.DType
	cls    *nn.Parameter
	pos    *nn.Parameter
	patch  *nn.Conv2d
	layers []*preNormLayer
	norm   *nn.LayerNorm
	pooler *nn.Linear // nil without one
}

// ViTForImageClassification is a ViTModel (without pooler) and a linear
// classifier on the final [CLS] token.
type ViTForImageClassification struct {
	nn.Base
	ViT        *ViTModel
	Classifier *nn.Linear
}

// vitLayerNames are the names save_pretrained writes for a ViT layer (the
// Hub's layout; transformers 5 renames them only in memory).
var vitLayerNames = layerNames{
	q: ".attention.attention.query", k: ".attention.attention.key", v: ".attention.attention.value",
	o: ".attention.output.dense", fc1: ".intermediate.dense", fc2: ".output.dense",
	norm1: ".layernorm_before", norm2: ".layernorm_after",
	nest: func(w *weights, l *preNormLayer) []nn.NamedModule {
		self := w.group(nn.NamedModule{Name: "query", Module: l.q}, nn.NamedModule{Name: "key", Module: l.k},
			nn.NamedModule{Name: "value", Module: l.v})
		out := w.group(nn.NamedModule{Name: "dense", Module: l.o})
		return []nn.NamedModule{
			{Name: "attention", Module: w.group(nn.NamedModule{Name: "attention", Module: self}, nn.NamedModule{Name: "output", Module: out})},
			{Name: "intermediate", Module: w.group(nn.NamedModule{Name: "dense", Module: l.fc1})},
			{Name: "output", Module: w.group(nn.NamedModule{Name: "dense", Module: l.fc2})},
			{Name: "layernorm_before", Module: l.norm1}, {Name: "layernorm_after", Module: l.norm2}}
	},
}

// readCheckpoint reads dir's config.json with parse and its
// model.safetensors.
func readCheckpoint[C any](op, dir string, parse func([]byte) (C, error), opts []LoadOption) (C, *weights, string, error) {
	var zero C
	o, err := buildLoadOptions(op, opts)
	if err != nil {
		return zero, nil, "", err
	}
	d, err := o.folder(op, dir)
	if err != nil {
		return zero, nil, "", err
	}
	raw, err := d.ReadFile("config.json")
	if err != nil {
		return zero, nil, "", fmt.Errorf("multimodal: %s: %w", op, err)
	}
	cfg, err := parse(raw)
	if err != nil {
		return zero, nil, "", fmt.Errorf("%w (in %s)", err, d.Path("config.json"))
	}
	path := d.Path("model.safetensors")
	buf, err := d.ReadFile("model.safetensors")
	if err != nil {
		return zero, nil, "", fmt.Errorf("multimodal: %s: %w", op, err)
	}
	f, err := safetensors.Decode(buf)
	if err != nil {
		return zero, nil, "", fmt.Errorf("multimodal: %s: %s: %w", op, path, err)
	}
	w, err := newWeights(f, o)
	if err != nil {
		return zero, nil, "", fmt.Errorf("multimodal: %s: %w", op, err)
	}
	w.dir = d
	return cfg, w, path, nil
}

// LoadViTModel loads a ViTModel saved by save_pretrained (config.json and
// model.safetensors), as strictly as LoadBertModel.
func LoadViTModel(dir string, opts ...LoadOption) (*ViTModel, error) {
	cfg, w, path, err := readCheckpoint("LoadViTModel", dir, ParseViTConfig, opts)
	if err != nil {
		return nil, err
	}
	m := buildViT(cfg, w, "", w.has("pooler.dense.weight") || w.has("pooler.dense.bias"))
	w.register(&m.Base, nil, m.children(w)...)
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// LoadViTForImageClassification loads a ViTForImageClassification saved
// by save_pretrained: vit.… without a pooler, and classifier.…
func LoadViTForImageClassification(dir string, opts ...LoadOption) (*ViTForImageClassification, error) {
	cfg, w, path, err := readCheckpoint("LoadViTForImageClassification", dir, ParseViTConfig, opts)
	if err != nil {
		return nil, err
	}
	m := &ViTForImageClassification{ViT: buildViT(cfg, w, "vit.", false)}
	w.register(&m.ViT.Base, nil, m.ViT.children(w)...)
	m.Classifier = w.linear("classifier", cfg.HiddenSize, len(cfg.Labels))
	w.register(&m.Base, nil, nn.NamedModule{Name: "vit", Module: m.ViT}, nn.NamedModule{Name: "classifier", Module: m.Classifier})
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

func buildViT(cfg ViTConfig, w *weights, prefix string, pooler bool) *ViTModel {
	h := cfg.HiddenSize
	n := (cfg.ImageSize / cfg.PatchSize) * (cfg.ImageSize / cfg.PatchSize)
	m := &ViTModel{Config: cfg, dev: w.dev, dtype: w.dtype}
	m.cls = w.param(prefix+"embeddings.cls_token", 1, 1, h)
	m.pos = w.param(prefix+"embeddings.position_embeddings", 1, n+1, h)
	m.patch = w.patchConv(prefix+"embeddings.patch_embeddings.projection", cfg.NumChannels, h, cfg.PatchSize, true)
	d := layerDims{hidden: h, inter: cfg.IntermediateSize, heads: cfg.NumAttentionHeads, eps: cfg.LayerNormEps,
		act: cfg.HiddenAct, qkvBias: cfg.QKVBias}
	for i := range cfg.NumHiddenLayers {
		m.layers = append(m.layers, w.preNormLayer(fmt.Sprintf("%sencoder.layer.%d", prefix, i), d, vitLayerNames))
	}
	m.norm = w.layerNorm(prefix+"layernorm", h, cfg.LayerNormEps)
	if pooler {
		m.pooler = w.linear(prefix+"pooler.dense", h, cfg.PoolerOutputSize)
	}
	return m
}

// children is the module tree under ViTModel, for StateDict.
func (m *ViTModel) children(w *weights) []nn.NamedModule {
	emb := w.group(nn.NamedModule{Name: "patch_embeddings", Module: w.group(nn.NamedModule{Name: "projection", Module: m.patch})})
	w.register(&emb.Base, []nn.NamedParameter{{Name: "cls_token", Param: m.cls}, {Name: "position_embeddings", Param: m.pos}})
	layers := make([]nn.Module, len(m.layers))
	for i, l := range m.layers {
		layers[i] = l
	}
	c := []nn.NamedModule{{Name: "embeddings", Module: emb}, {Name: "encoder", Module: w.group(nn.NamedModule{Name: "layer", Module: w.list(layers...)})},
		{Name: "layernorm", Module: m.norm}}
	if m.pooler != nil {
		c = append(c, nn.NamedModule{Name: "pooler", Module: w.group(nn.NamedModule{Name: "dense", Module: m.pooler})})
	}
	return c
}

// Device is where the weights live; Forward takes pixels there.
func (m *ViTModel) Device() core.Device { return m.dev }

// VisionOutput is a vision encoder's result.
type VisionOutput struct {
	LastHiddenState *core.Tensor   // (B, patches+1, hidden), after the final LayerNorm
	PoolerOutput    *core.Tensor   // (B, pooler size); nil when the model has no pooler
	HiddenStates    []*core.Tensor // the embeddings' and every layer's output (before the final norm)
}

// Forward encodes pixel values (B, num_channels, image_size, image_size),
// normalized as the model's image processor does, without recording for
// autograd.
func (m *ViTModel) Forward(pixels *core.Tensor) (*VisionOutput, error) {
	c := m.Config
	if err := checkPixels("ViTModel.Forward", pixels, c.NumChannels, c.ImageSize, m.dev, m.dtype); err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	h := prependToken(m.cls.Tensor(), patchEmbed(m.patch, pixels)).Add(m.pos.Tensor())
	out := &VisionOutput{HiddenStates: []*core.Tensor{h}}
	for _, l := range m.layers {
		h = l.forward(h, nil)
		out.HiddenStates = append(out.HiddenStates, h)
	}
	out.LastHiddenState = m.norm.Forward(h)
	if m.pooler != nil {
		out.PoolerOutput = m.pooler.Forward(firstToken(out.LastHiddenState)).Tanh()
	}
	for _, t := range []*core.Tensor{out.LastHiddenState, out.PoolerOutput} {
		if t != nil && t.Err() != nil {
			return nil, fmt.Errorf("multimodal: ViTModel.Forward: %w", t.Err())
		}
	}
	return out, nil
}

// Forward gives the logits (B, len(Labels)) of pixel values.
func (m *ViTForImageClassification) Forward(pixels *core.Tensor) (*core.Tensor, error) {
	out, err := m.ViT.Forward(pixels)
	if err != nil {
		return nil, fmt.Errorf("multimodal: ViTForImageClassification.Forward: %w", err)
	}
	defer core.NoGradScope()()
	logits := m.Classifier.Forward(firstToken(out.LastHiddenState))
	if err := logits.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: ViTForImageClassification.Forward: %w", err)
	}
	return logits, nil
}

// checkPixels checks a (B, channels, size, size) image batch.
func checkPixels(op string, x *core.Tensor, channels, size int, dev core.Device, dtype core.DType) error {
	if x == nil {
		return fmt.Errorf("multimodal: %s: pixels are nil", op)
	}
	if err := x.Err(); err != nil {
		return fmt.Errorf("multimodal: %s: pixels: %w", op, err)
	}
	s := x.Shape()
	switch {
	case len(s) != 4 || s[0] < 1 || s[1] != channels || s[2] != size || s[3] != size:
		return fmt.Errorf("multimodal: %s: pixels have shape %v, want (batch, %d, %d, %d) (num_channels, image_size)", op, s, channels, size, size)
	case x.DType() != dtype:
		return fmt.Errorf("multimodal: %s: pixels have dtype %s, the model %s", op, x.DType(), dtype)
	case x.Device() != dev:
		return fmt.Errorf("multimodal: %s: pixels are on %s, the model on %s", op, x.Device(), dev)
	}
	return nil
}
