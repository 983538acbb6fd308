package multimodal

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CLIPConfig holds a CLIPModel's options, spelled as transformers'
// config.json spells them: the two towers' configs and the width of the
// shared embedding space.
type CLIPConfig struct {
	Text          CLIPTextConfig   // text_config
	Vision        CLIPVisionConfig // vision_config
	ProjectionDim int              // projection_dim
}

// CLIPTextConfig is text_config.
type CLIPTextConfig struct {
	VocabSize             int     // vocab_size
	HiddenSize            int     // hidden_size
	IntermediateSize      int     // intermediate_size
	NumHiddenLayers       int     // num_hidden_layers
	NumAttentionHeads     int     // num_attention_heads
	MaxPositionEmbeddings int     // max_position_embeddings
	HiddenAct             string  // hidden_act
	LayerNormEps          float64 // layer_norm_eps
	// EOSTokenID (eos_token_id) marks the token whose state is the text's
	// pooled output: its first occurrence, or, for the legacy value 2,
	// the largest id (original CLIP's end token has the largest id).
	EOSTokenID int
}

// CLIPVisionConfig is vision_config.
type CLIPVisionConfig struct {
	HiddenSize        int     // hidden_size
	IntermediateSize  int     // intermediate_size
	NumHiddenLayers   int     // num_hidden_layers
	NumAttentionHeads int     // num_attention_heads
	NumChannels       int     // num_channels
	ImageSize         int     // image_size
	PatchSize         int     // patch_size
	HiddenAct         string  // hidden_act
	LayerNormEps      float64 // layer_norm_eps
}

// Sub-config keys that only training reads, or that CLIPModel overrides
// (each tower's projection_dim; the top-level one is used).
func clipIgnored[C any]() map[string]configKey[C] {
	skip := func(*C, json.RawMessage) error { return nil }
	return map[string]configKey[C]{"attention_dropout": skip, "dropout": skip, "projection_dim": skip}
}

func clipTextKeys() map[string]configKey[CLIPTextConfig] {
	k := clipIgnored[CLIPTextConfig]()
	k["model_type"] = only[CLIPTextConfig](`"clip_text_model"`)
	k["vocab_size"] = field(func(c *CLIPTextConfig) any { return &c.VocabSize })
	k["hidden_size"] = field(func(c *CLIPTextConfig) any { return &c.HiddenSize })
	k["intermediate_size"] = field(func(c *CLIPTextConfig) any { return &c.IntermediateSize })
	k["num_hidden_layers"] = field(func(c *CLIPTextConfig) any { return &c.NumHiddenLayers })
	k["num_attention_heads"] = field(func(c *CLIPTextConfig) any { return &c.NumAttentionHeads })
	k["max_position_embeddings"] = field(func(c *CLIPTextConfig) any { return &c.MaxPositionEmbeddings })
	k["hidden_act"] = field(func(c *CLIPTextConfig) any { return &c.HiddenAct })
	k["layer_norm_eps"] = field(func(c *CLIPTextConfig) any { return &c.LayerNormEps })
	k["eos_token_id"] = field(func(c *CLIPTextConfig) any { return &c.EOSTokenID })
	return k
}

func clipVisionKeys() map[string]configKey[CLIPVisionConfig] {
	k := clipIgnored[CLIPVisionConfig]()
	k["model_type"] = only[CLIPVisionConfig](`"clip_vision_model"`)
	k["hidden_size"] = field(func(c *CLIPVisionConfig) any { return &c.HiddenSize })
	k["intermediate_size"] = field(func(c *CLIPVisionConfig) any { return &c.IntermediateSize })
	k["num_hidden_layers"] = field(func(c *CLIPVisionConfig) any { return &c.NumHiddenLayers })
	k["num_attention_heads"] = field(func(c *CLIPVisionConfig) any { return &c.NumAttentionHeads })
	k["num_channels"] = field(func(c *CLIPVisionConfig) any { return &c.NumChannels })
	k["image_size"] = field(func(c *CLIPVisionConfig) any { return &c.ImageSize })
	k["patch_size"] = field(func(c *CLIPVisionConfig) any { return &c.PatchSize })
	k["hidden_act"] = field(func(c *CLIPVisionConfig) any { return &c.HiddenAct })
	k["layer_norm_eps"] = field(func(c *CLIPVisionConfig) any { return &c.LayerNormEps })
	return k
}

// clipTextDefaults are transformers' CLIPTextConfig defaults
// (openai/clip-vit-base-patch32's text tower).
func clipTextDefaults() CLIPTextConfig {
	return CLIPTextConfig{VocabSize: 49408, HiddenSize: 512, IntermediateSize: 2048, NumHiddenLayers: 12,
		NumAttentionHeads: 8, MaxPositionEmbeddings: 77, HiddenAct: "quick_gelu", LayerNormEps: 1e-5, EOSTokenID: 49407}
}

// ParseCLIPConfig reads a CLIPModel config.json, with the defaults of
// transformers' CLIPConfig (openai/clip-vit-base-patch32's towers) for
// absent keys. An unknown key, at the top or in a tower's config, fails
// naming it.
func ParseCLIPConfig(data []byte) (CLIPConfig, error) {
	c := CLIPConfig{ProjectionDim: 512, Text: clipTextDefaults(),
		Vision: CLIPVisionConfig{HiddenSize: 768, IntermediateSize: 3072, NumHiddenLayers: 12, NumAttentionHeads: 12,
			NumChannels: 3, ImageSize: 224, PatchSize: 32, HiddenAct: "quick_gelu", LayerNormEps: 1e-5}}
	keys := map[string]configKey[CLIPConfig]{
		"model_type":             only[CLIPConfig](`"clip"`),
		"projection_dim":         field(func(c *CLIPConfig) any { return &c.ProjectionDim }),
		"logit_scale_init_value": func(*CLIPConfig, json.RawMessage) error { return nil }, // the checkpoint holds logit_scale
		"text_config": func(c *CLIPConfig, raw json.RawMessage) error {
			return parseConfig("CLIP text_config", raw, &c.Text, clipTextKeys())
		},
		"vision_config": func(c *CLIPConfig, raw json.RawMessage) error {
			return parseConfig("CLIP vision_config", raw, &c.Vision, clipVisionKeys())
		},
	}
	if err := parseConfig("CLIP", data, &c, keys); err != nil {
		return CLIPConfig{}, err
	}
	if err := positive("CLIP", map[string]int{"projection_dim": c.ProjectionDim}); err != nil {
		return CLIPConfig{}, err
	}
	if err := checkCLIPText("CLIP", "text_config.", c.Text); err != nil {
		return CLIPConfig{}, err
	}
	v := c.Vision
	if err := positive("CLIP", map[string]int{"vision_config.hidden_size": v.HiddenSize,
		"vision_config.intermediate_size": v.IntermediateSize, "vision_config.num_hidden_layers": v.NumHiddenLayers,
		"vision_config.num_attention_heads": v.NumAttentionHeads, "vision_config.num_channels": v.NumChannels,
		"vision_config.image_size": v.ImageSize, "vision_config.patch_size": v.PatchSize}); err != nil {
		return CLIPConfig{}, err
	}
	switch {
	case v.HiddenSize%v.NumAttentionHeads != 0:
		return CLIPConfig{}, fmt.Errorf("multimodal: CLIP config: vision_config.hidden_size %d is not a multiple of num_attention_heads %d", v.HiddenSize, v.NumAttentionHeads)
	case v.ImageSize%v.PatchSize != 0:
		return CLIPConfig{}, fmt.Errorf("multimodal: CLIP config: vision_config.image_size %d is not a multiple of patch_size %d", v.ImageSize, v.PatchSize)
	case !activations[v.HiddenAct]:
		return CLIPConfig{}, fmt.Errorf("multimodal: CLIP config: vision_config key \"hidden_act\": %q is not supported (supported: %s)", v.HiddenAct, activationNames)
	}
	return c, nil
}

// checkCLIPText checks a text tower's sizes and activation; what names the
// config and prefix the keys' place in it ("text_config." in a CLIPModel's).
func checkCLIPText(what, prefix string, t CLIPTextConfig) error {
	if err := positive(what, map[string]int{prefix + "vocab_size": t.VocabSize, prefix + "hidden_size": t.HiddenSize,
		prefix + "intermediate_size": t.IntermediateSize, prefix + "num_hidden_layers": t.NumHiddenLayers,
		prefix + "num_attention_heads":     t.NumAttentionHeads,
		prefix + "max_position_embeddings": t.MaxPositionEmbeddings}); err != nil {
		return err
	}
	if t.HiddenSize%t.NumAttentionHeads != 0 {
		return fmt.Errorf("multimodal: %s config: %shidden_size %d is not a multiple of num_attention_heads %d", what, prefix, t.HiddenSize, t.NumAttentionHeads)
	}
	if !activations[t.HiddenAct] {
		where := "key"
		if prefix != "" {
			where = strings.TrimSuffix(prefix, ".") + " key"
		}
		return fmt.Errorf("multimodal: %s config: %s \"hidden_act\": %q is not supported (supported: %s)", what, where, t.HiddenAct, activationNames)
	}
	return nil
}
