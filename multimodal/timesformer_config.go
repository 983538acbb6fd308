package multimodal

import (
	"encoding/json"
	"fmt"
)

// TimeSformer's attention types (config.json's attention_type).
const (
	// DividedSpaceTime is the paper's and the Hub checkpoints' layer:
	// attention over the frames of each patch, then over the patches of
	// each frame.
	DividedSpaceTime = "divided_space_time"
	// JointSpaceTime attends over every patch of every frame at once.
	JointSpaceTime = "joint_space_time"
	// SpaceOnly encodes every frame on its own, without time embeddings.
	SpaceOnly = "space_only"
)

// TimesformerConfig holds a TimeSformer's options, spelled as
// transformers' config.json spells them.
type TimesformerConfig struct {
	ImageSize         int     `json:"image_size"` // height = width
	PatchSize         int     `json:"patch_size"`
	NumChannels       int     `json:"num_channels"`
	NumFrames         int     `json:"num_frames"`
	HiddenSize        int     `json:"hidden_size"`
	NumHiddenLayers   int     `json:"num_hidden_layers"`
	NumAttentionHeads int     `json:"num_attention_heads"`
	IntermediateSize  int     `json:"intermediate_size"`
	HiddenAct         string  `json:"hidden_act"` // see activationNames
	LayerNormEps      float64 `json:"layer_norm_eps"`
	QKVBias           bool    `json:"qkv_bias"`
	AttentionType     string  `json:"attention_type"` // DividedSpaceTime, JointSpaceTime or SpaceOnly
	// Labels are id2label's names by id; TimesformerForVideoClassification
	// has one logit per label.
	Labels []string
}

// timesformerDefaults are TimesformerConfig's defaults in transformers
// (facebook/timesformer-base-finetuned-k400's shape).
func timesformerDefaults() TimesformerConfig {
	return TimesformerConfig{ImageSize: 224, PatchSize: 16, NumChannels: 3, NumFrames: 8, HiddenSize: 768,
		NumHiddenLayers: 12, NumAttentionHeads: 12, IntermediateSize: 3072, HiddenAct: "gelu", LayerNormEps: 1e-6,
		QKVBias: true, AttentionType: DividedSpaceTime, Labels: []string{"LABEL_0", "LABEL_1"}}
}

var timesformerKeys = taggedKeys(map[string]configKey[TimesformerConfig]{
	"model_type": only[TimesformerConfig](`"timesformer"`),
	// Stochastic depth drops residual branches only while training; at
	// inference every rate computes the same.
	"drop_path_rate": func(_ *TimesformerConfig, raw json.RawMessage) error {
		var r float64
		return json.Unmarshal(raw, &r)
	},
	"id2label": func(c *TimesformerConfig, raw json.RawMessage) error {
		labels, err := readLabels(raw)
		c.Labels = labels
		return err
	},
})

// ParseTimesformerConfig reads a TimeSformer config.json. A key webtensor
// does not know, or a value it does not implement (a list image size, an
// attention type transformers does not have), fails naming the key.
func ParseTimesformerConfig(data []byte) (TimesformerConfig, error) {
	c := timesformerDefaults()
	if err := parseConfig("TimeSformer", data, &c, timesformerKeys); err != nil {
		return TimesformerConfig{}, err
	}
	if err := c.validate(); err != nil {
		return TimesformerConfig{}, err
	}
	return c, nil
}

// validate checks the sizes and choices ParseTimesformerConfig and
// NewTimesformerForVideoClassification take.
func (c TimesformerConfig) validate() error {
	if err := positive("TimeSformer", map[string]int{"image_size": c.ImageSize, "patch_size": c.PatchSize,
		"num_channels": c.NumChannels, "num_frames": c.NumFrames, "hidden_size": c.HiddenSize,
		"num_hidden_layers": c.NumHiddenLayers, "num_attention_heads": c.NumAttentionHeads,
		"intermediate_size": c.IntermediateSize}); err != nil {
		return err
	}
	switch {
	case c.AttentionType != DividedSpaceTime && c.AttentionType != JointSpaceTime && c.AttentionType != SpaceOnly:
		return fmt.Errorf("multimodal: TimeSformer config: key \"attention_type\": %q is not supported (supported: %s, %s, %s)",
			c.AttentionType, DividedSpaceTime, JointSpaceTime, SpaceOnly)
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return fmt.Errorf("multimodal: TimeSformer config: hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	case c.ImageSize < c.PatchSize:
		return fmt.Errorf("multimodal: TimeSformer config: image_size %d is smaller than patch_size %d", c.ImageSize, c.PatchSize)
	case !activations[c.HiddenAct]:
		return fmt.Errorf("multimodal: TimeSformer config: key \"hidden_act\": %q is not supported (supported: %s)", c.HiddenAct, activationNames)
	}
	return nil
}

// grid is the config's patch grid side (image_size // patch_size, as the
// conv floors it).
func (c TimesformerConfig) grid() int { return c.ImageSize / c.PatchSize }
