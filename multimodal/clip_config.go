package multimodal

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CLIPConfig holds a CLIPModel's options, spelled as transformers'
// config.json spells them: the two towers' configs and the width of the
// shared embedding space.
type CLIPConfig struct {
	Text          CLIPTextConfig   // text_config, read strictly by clipTowerKeys
	Vision        CLIPVisionConfig // vision_config, read strictly by clipTowerKeys
	ProjectionDim int              `json:"projection_dim"`
}

// CLIPTextConfig is text_config.
type CLIPTextConfig struct {
	VocabSize             int     `json:"vocab_size"`
	HiddenSize            int     `json:"hidden_size"`
	IntermediateSize      int     `json:"intermediate_size"`
	NumHiddenLayers       int     `json:"num_hidden_layers"`
	NumAttentionHeads     int     `json:"num_attention_heads"`
	MaxPositionEmbeddings int     `json:"max_position_embeddings"`
	HiddenAct             string  `json:"hidden_act"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
	// EOSTokenID (eos_token_id) marks the token whose state is the text's
	// pooled output: its first occurrence, or, for the legacy value 2,
	// the largest id (original CLIP's end token has the largest id).
	EOSTokenID int `json:"eos_token_id"`
}

// CLIPVisionConfig is vision_config.
type CLIPVisionConfig struct {
	HiddenSize        int     `json:"hidden_size"`
	IntermediateSize  int     `json:"intermediate_size"`
	NumHiddenLayers   int     `json:"num_hidden_layers"`
	NumAttentionHeads int     `json:"num_attention_heads"`
	NumChannels       int     `json:"num_channels"`
	ImageSize         int     `json:"image_size"`
	PatchSize         int     `json:"patch_size"`
	HiddenAct         string  `json:"hidden_act"`
	LayerNormEps      float64 `json:"layer_norm_eps"`
}

// clipTowerKeys are a tower config's keys: its tagged fields, its
// model_type, and the keys that only training reads or that CLIPModel
// overrides (each tower's projection_dim; the top-level one is used).
func clipTowerKeys[C any](modelType string) map[string]configKey[C] {
	return taggedKeys(map[string]configKey[C]{"model_type": only[C](strconv.Quote(modelType)),
		"attention_dropout": skipKey[C], "dropout": skipKey[C], "projection_dim": skipKey[C]})
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
	keys := taggedKeys(map[string]configKey[CLIPConfig]{
		"model_type":             only[CLIPConfig](`"clip"`),
		"logit_scale_init_value": func(*CLIPConfig, json.RawMessage) error { return nil }, // the checkpoint holds logit_scale
		"text_config": func(c *CLIPConfig, raw json.RawMessage) error {
			return parseConfig("CLIP text_config", raw, &c.Text, clipTowerKeys[CLIPTextConfig]("clip_text_model"))
		},
		"vision_config": func(c *CLIPConfig, raw json.RawMessage) error {
			return parseConfig("CLIP vision_config", raw, &c.Vision, clipTowerKeys[CLIPVisionConfig]("clip_vision_model"))
		},
	})
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
