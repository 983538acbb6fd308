package multimodal

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// CLIPTextModelConfig is a standalone CLIP text tower's config.json
// (model_type clip_text_model): text_config's keys at the top level, as
// transformers' CLIPTextConfig saves them, and projection_dim, which
// only CLIPTextModelWithProjection uses.
type CLIPTextModelConfig struct {
	CLIPTextConfig
	ProjectionDim int // projection_dim
}

// ParseCLIPTextModelConfig reads a CLIPTextModel or
// CLIPTextModelWithProjection config.json, with transformers'
// CLIPTextConfig defaults for absent keys. An unknown key fails naming it.
func ParseCLIPTextModelConfig(data []byte) (CLIPTextModelConfig, error) {
	c := CLIPTextModelConfig{CLIPTextConfig: clipTextDefaults(), ProjectionDim: 512}
	keys := clipTowerKeys[CLIPTextConfig]("clip_text_model")
	keys["projection_dim"] = field(func(*CLIPTextConfig) any { return &c.ProjectionDim })
	if err := parseConfig("CLIP text", data, &c.CLIPTextConfig, keys); err != nil {
		return CLIPTextModelConfig{}, err
	}
	if err := positive("CLIP text", map[string]int{"projection_dim": c.ProjectionDim}); err != nil {
		return CLIPTextModelConfig{}, err
	}
	if err := checkCLIPText("CLIP text", "", c.CLIPTextConfig); err != nil {
		return CLIPTextModelConfig{}, err
	}
	return c, nil
}

// CLIPTextModel is transformers' CLIPTextModel: CLIP's causal text tower
// alone, the text encoder Stable Diffusion conditions on (a diffusers
// pipeline's text_encoder/ folder). Its StateDict holds the file's names:
// text_model.… as transformers 4 saved them (Stable Diffusion's
// repositories), or the same names without the prefix as transformers 5
// saves them; either way the tower is the one CLIPModel has.
type CLIPTextModel struct {
	nn.Base
	Config CLIPTextModelConfig

	dev   core.Device
	dtype core.DType
	text  *clipText
}

// LoadCLIPTextModel loads a CLIPTextModel saved by save_pretrained
// (config.json and model.safetensors), as strictly as LoadCLIPModel: the
// file must hold exactly the tower's tensors, all with the text_model.
// prefix or all without it (a position_ids buffer that older
// transformers saved is accepted and unused).
func LoadCLIPTextModel(dir string, opts ...LoadOption) (*CLIPTextModel, error) {
	m := &CLIPTextModel{}
	w, path, err := m.load("LoadCLIPTextModel", dir, true, opts)
	if err != nil {
		return nil, err
	}
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// load reads the checkpoint into m and builds the tower; the caller adds
// its own tensors and checks the file.
// bare allows the tower's names without the text_model. prefix.
func (m *CLIPTextModel) load(op, dir string, bare bool, opts []LoadOption) (*weights, string, error) {
	cfg, w, path, err := readCheckpoint(op, dir, ParseCLIPTextModelConfig, opts)
	if err != nil {
		return nil, "", err
	}
	m.Config, m.dev, m.dtype = cfg, w.dev, w.dtype
	// transformers 4 nested the tower as text_model in every CLIP text
	// model; transformers 5's CLIPTextModel is the tower itself, and it
	// saves the names bare. The file's names decide, and StateDict gives
	// them back.
	if !bare || w.has("text_model.embeddings.token_embedding.weight") {
		m.text = w.clipText(cfg.CLIPTextConfig, "text_model.")
		w.register(&m.Base, nil, nn.NamedModule{Name: "text_model", Module: m.text})
		return w, path, nil
	}
	m.text = w.clipText(cfg.CLIPTextConfig, "")
	w.register(&m.Base, nil, m.text.Children()...)
	return w, path, nil
}

// Device is where the weights live; inputs must be there.
func (m *CLIPTextModel) Device() core.Device { return m.dev }

// DType is the weights' dtype; the outputs have it.
func (m *CLIPTextModel) DType() core.DType { return m.dtype }

// EncodeText runs the tower on ids (B, S) and an optional attention mask
// (B, S; 0 marks padding), integer tensors on the model's device, as
// CLIPModel.EncodeText does. LastHiddenState is what Stable Diffusion's
// UNet attends to; diffusers passes no mask (the padding tokens' states
// are part of the conditioning), so pass nil to match it.
func (m *CLIPTextModel) EncodeText(ids, mask *core.Tensor) (*CLIPTextOutput, error) {
	return m.text.encode("CLIPTextModel.EncodeText", ids, mask, m.dev)
}

// CLIPTextModelWithProjection is transformers' CLIPTextModelWithProjection:
// the text tower and text_projection (no bias), whose output, text_embeds,
// is the projected pooled state (SDXL's second text encoder is one).
type CLIPTextModelWithProjection struct {
	CLIPTextModel
	proj *nn.Linear
}

// LoadCLIPTextModelWithProjection loads a CLIPTextModelWithProjection
// saved by save_pretrained, as strictly as LoadCLIPTextModel.
func LoadCLIPTextModelWithProjection(dir string, opts ...LoadOption) (*CLIPTextModelWithProjection, error) {
	p := &CLIPTextModelWithProjection{}
	w, path, err := p.load("LoadCLIPTextModelWithProjection", dir, false, opts)
	if err != nil {
		return nil, err
	}
	c := p.Config
	p.proj = w.linearBias("text_projection", c.HiddenSize, c.ProjectionDim, false)
	w.register(&p.Base, nil, nn.NamedModule{Name: "text_projection", Module: p.proj})
	if err := w.check(path); err != nil {
		return nil, err
	}
	return p, nil
}

// EncodeText is CLIPTextModel.EncodeText with TextEmbeds set: the pooled
// state projected (B, projection_dim), not normalized.
func (m *CLIPTextModelWithProjection) EncodeText(ids, mask *core.Tensor) (*CLIPTextOutput, error) {
	out, err := m.text.encode("CLIPTextModelWithProjection.EncodeText", ids, mask, m.dev)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	out.TextEmbeds = m.proj.Forward(out.PoolerOutput)
	if err := out.TextEmbeds.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: CLIPTextModelWithProjection.EncodeText: %w", err)
	}
	return out, nil
}
