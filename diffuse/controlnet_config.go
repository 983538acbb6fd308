package diffuse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// ControlNetConfig holds a ControlNetModel's options, spelled as
// diffusers' config.json spells them. The options a ControlNet shares
// with the UNet it steers (its encoder half: block types and widths,
// attention, normalisation, time embedding) are UNet2DConditionConfig's
// fields with the same meaning; the up-path fields (UpBlockTypes,
// OutChannels, SampleSize) are not part of a ControlNet and are left
// derived or zero.
type ControlNetConfig struct {
	UNet2DConditionConfig
	// ConditioningChannels is conditioning_channels: the control image's
	// channels (3 for RGB edges or poses, 1 for depth).
	ConditioningChannels int
	// ConditioningEmbeddingOutChannels is conditioning_embedding_out_channels:
	// the widths of the conditioning embedding's levels; each level after
	// the first halves the image, so the control image is
	// 2^(len-1) times the latents' size.
	ConditioningEmbeddingOutChannels []int
	// BGR is controlnet_conditioning_channel_order "bgr": the control
	// image's channels are reversed before the embedding.
	BGR bool
}

// controlNetOnly are the ControlNet's own keys; every other key it shares
// with UNet2DConditionModel and is read by condKeys' reader.
var controlNetOnly = map[string]strictconfig.Key[ControlNetConfig]{
	"_class_name": func(_ *ControlNetConfig, raw json.RawMessage) error {
		return strictconfig.OnlyValue(raw, `"ControlNetModel"`)
	},
	"conditioning_channels": func(c *ControlNetConfig, raw json.RawMessage) error {
		return condInto(func(*UNet2DConditionConfig) *int { return &c.ConditioningChannels })(nil, raw)
	},
	"conditioning_embedding_out_channels": func(c *ControlNetConfig, raw json.RawMessage) error {
		return condInto(func(*UNet2DConditionConfig) *[]int { return &c.ConditioningEmbeddingOutChannels })(nil, raw)
	},
	"controlnet_conditioning_channel_order": func(c *ControlNetConfig, raw json.RawMessage) error {
		if err := strictconfig.OnlyValue(raw, `"rgb"`, `"bgr"`); err != nil {
			return err
		}
		c.BGR = string(bytes.TrimSpace(raw)) == `"bgr"`
		return nil
	},
	// global_pool_conditions averages the residuals over the image and
	// forces guess mode in the pipelines, which webtensor does not run.
	"global_pool_conditions": func(_ *ControlNetConfig, raw json.RawMessage) error { return strictconfig.OnlyValue(raw, "false") },
	// UNetMidBlock2D (a mid block without attention) is diffusers' other
	// choice; webtensor implements the cross-attention one.
	"mid_block_type": func(_ *ControlNetConfig, raw json.RawMessage) error {
		return strictconfig.OnlyValue(raw, `"UNetMidBlock2DCrossAttn"`)
	},
	// diffusers' ControlNetModel iterates range(layers_per_block): one
	// number for every block, never a list.
	"layers_per_block": func(c *ControlNetConfig, raw json.RawMessage) error {
		var v int
		if err := condInto(func(*UNet2DConditionConfig) *int { return &v })(nil, raw); err != nil {
			return err
		}
		c.LayersPerBlock, c.scalars["layers_per_block"] = []int{v}, true
		return nil
	},
}

// controlNetShared are the keys of diffusers 0.42's ControlNetModel
// config that UNet2DConditionModel has too, with the same meaning.
var controlNetShared = []string{
	"_diffusers_version", "_name_or_path", "_use_default_values", "in_channels", "flip_sin_to_cos",
	"freq_shift", "down_block_types", "only_cross_attention", "block_out_channels", "downsample_padding",
	"mid_block_scale_factor", "act_fn", "norm_num_groups", "norm_eps", "cross_attention_dim",
	"transformer_layers_per_block", "encoder_hid_dim", "encoder_hid_dim_type", "attention_head_dim",
	"num_attention_heads", "use_linear_projection", "class_embed_type", "addition_embed_type",
	"addition_time_embed_dim", "num_class_embeds", "upcast_attention", "resnet_time_scale_shift",
	"projection_class_embeddings_input_dim", "addition_embed_type_num_heads",
}

// controlNetKeys are the ControlNet's own keys and the shared ones, read
// into its UNet2DConditionConfig by condKeys' readers.
func controlNetKeys() map[string]strictconfig.Key[ControlNetConfig] {
	keys := maps.Clone(controlNetOnly)
	for _, k := range controlNetShared {
		read := condKeys[k]
		keys[k] = func(c *ControlNetConfig, raw json.RawMessage) error { return read(&c.UNet2DConditionConfig, raw) }
	}
	return keys
}

// ParseControlNetConfig reads a ControlNetModel config.json. As with the
// UNet's, a key webtensor does not know, or a value it does not
// implement, fails naming the key.
func ParseControlNetConfig(data []byte) (ControlNetConfig, error) {
	c := ControlNetConfig{UNet2DConditionConfig: condDefaults(), ConditioningChannels: 3,
		ConditioningEmbeddingOutChannels: []int{16, 32, 96, 256}}
	return parseModelConfig("ControlNetModel", data, c, controlNetKeys(), (*ControlNetConfig).validate)
}

// validate checks the shared options as the UNet's are checked (with the
// up path mirroring the down path, which the ControlNet lacks but the
// check expects) and the conditioning embedding's.
func (c *ControlNetConfig) validate() error {
	c.MidBlock = true
	c.TimeEmbeddingDim = 0 // diffusers' ControlNet always uses 4·block_out_channels[0]
	n := len(c.DownBlockTypes)
	c.UpBlockTypes = make([]string, n)
	for i, t := range c.DownBlockTypes {
		c.UpBlockTypes[n-1-i] = "UpBlock2D"
		if t == "CrossAttnDownBlock2D" {
			c.UpBlockTypes[n-1-i] = "CrossAttnUpBlock2D"
		}
	}
	if c.OutChannels < 1 {
		c.OutChannels = c.InChannels
	}
	if err := c.UNet2DConditionConfig.validateAs("ControlNetModel"); err != nil {
		return err
	}
	switch {
	case c.ConditioningChannels < 1:
		return fmt.Errorf("diffuse: ControlNetModel config: conditioning_channels: %d, want >= 1", c.ConditioningChannels)
	case len(c.ConditioningEmbeddingOutChannels) == 0:
		return fmt.Errorf("diffuse: ControlNetModel config: conditioning_embedding_out_channels: empty, want at least one width")
	}
	for i, ch := range c.ConditioningEmbeddingOutChannels {
		if ch < 1 {
			return fmt.Errorf("diffuse: ControlNetModel config: conditioning_embedding_out_channels: %v: entry %d is %d, want >= 1",
				c.ConditioningEmbeddingOutChannels, i, ch)
		}
	}
	return nil
}

// ControlScale is how many image pixels one latent pixel spans for the
// conditioning embedding: 2^(len(conditioning_embedding_out_channels)-1).
func (c *ControlNetConfig) ControlScale() int {
	return 1 << (len(c.ConditioningEmbeddingOutChannels) - 1)
}
