package diffuse

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// UNet2DConditionConfig holds a UNet2DConditionModel's options, spelled as
// diffusers' config.json spells them. ParseUNet2DConditionConfig fills it
// from a file; the per-block lists are expanded to one entry per block
// whether the file holds one number or a list.
type UNet2DConditionConfig struct {
	SampleSize          int      // sample_size (height = width of the latents; the pipeline's default)
	InChannels          int      // in_channels
	OutChannels         int      // out_channels
	CenterInputSample   bool     // center_input_sample: the model sees 2·sample - 1
	FlipSinToCos        bool     // flip_sin_to_cos
	FreqShift           float64  // freq_shift
	TimeEmbeddingDim    int      // time_embedding_dim: 0 (null) means 4·block_out_channels[0]
	DownBlockTypes      []string // down_block_types: CrossAttnDownBlock2D, DownBlock2D
	MidBlock            bool     // mid_block_type: UNetMidBlock2DCrossAttn (true) or null
	UpBlockTypes        []string // up_block_types: CrossAttnUpBlock2D, UpBlock2D
	BlockOutChannels    []int    // block_out_channels
	LayersPerBlock      []int    // layers_per_block, one per down block
	DownsamplePadding   int      // downsample_padding
	MidBlockScaleFactor float64  // mid_block_scale_factor
	NormNumGroups       int      // norm_num_groups
	NormEps             float64  // norm_eps
	CrossAttentionDim   int      // cross_attention_dim: the encoder states' width
	// TransformerLayers is transformer_layers_per_block: BasicTransformerBlocks
	// in every Transformer2DModel.
	TransformerLayers int
	// AttentionHeadDim is attention_head_dim, one per down block. In this
	// model it is the number of heads (diffusers' historical misnomer,
	// diffusers issue 2011), unless NumAttentionHeads is set.
	AttentionHeadDim []int
	// NumAttentionHeads is num_attention_heads, one per down block, nil for
	// null. diffusers 0.42 itself refuses a non-null value; webtensor takes
	// it as the head count the name says, which is what diffusers intends.
	NumAttentionHeads    []int
	UseLinearProjection  bool   // use_linear_projection: proj_in/proj_out are Linear, not 1×1 Conv2d
	UpcastAttention      bool   // upcast_attention: attention in float32 for half-precision models
	ResnetTimeScaleShift string // resnet_time_scale_shift: default or scale_shift

	scalars map[string]bool // per-block keys the file gave as one number
}

// condDefaults are UNet2DConditionModel's __init__ defaults (Stable
// Diffusion 1.x's layout).
func condDefaults() UNet2DConditionConfig {
	return UNet2DConditionConfig{InChannels: 4, OutChannels: 4, FlipSinToCos: true,
		DownBlockTypes:   []string{"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"},
		UpBlockTypes:     []string{"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"},
		BlockOutChannels: []int{320, 640, 1280, 1280}, LayersPerBlock: []int{2}, MidBlock: true,
		DownsamplePadding: 1, MidBlockScaleFactor: 1, NormNumGroups: 32, NormEps: 1e-5,
		CrossAttentionDim: 1280, TransformerLayers: 1, AttentionHeadDim: []int{8},
		ResnetTimeScaleShift: "default",
		scalars:              map[string]bool{"layers_per_block": true, "attention_head_dim": true}}
}

type condKey = strictconfig.Key[UNet2DConditionConfig]

// condOnly accepts a key only at the values webtensor implements.
var condOnly = strictconfig.Only[UNet2DConditionConfig]

// condInto reads a key that must hold a value: JSON null would leave the
// default in place silently (norm_num_groups null means no output norm in
// diffusers, which webtensor does not implement), so it is refused.
func condInto[T any](field func(*UNet2DConditionConfig) *T) condKey {
	return strictconfig.Field(func(c *UNet2DConditionConfig) any { return field(c) })
}

// oneNumber reads an int for keys diffusers also takes per block (a list,
// or nested lists for SDXL's asymmetric UNets), which webtensor does not.
func oneNumber(field func(*UNet2DConditionConfig) *int) condKey {
	return func(c *UNet2DConditionConfig, raw json.RawMessage) error {
		if string(bytes.TrimSpace(raw)) == "null" || json.Unmarshal(raw, field(c)) != nil {
			return fmt.Errorf("value %s is not supported (webtensor takes one number for every block)", bytes.TrimSpace(raw))
		}
		return nil
	}
}

// perBlock reads an int or a list of ints; a single number is expanded to
// every block once block_out_channels is known.
func perBlock(key string, field func(*UNet2DConditionConfig) *[]int, nullable bool) condKey {
	return func(c *UNet2DConditionConfig, raw json.RawMessage) error {
		var list []int
		if json.Unmarshal(raw, &list) == nil && list != nil {
			*field(c), c.scalars[key] = list, false
			return nil
		}
		var v *int
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		if v == nil {
			if !nullable {
				return fmt.Errorf("value null is not supported (webtensor needs a number or a list)")
			}
			*field(c), c.scalars[key] = nil, false
			return nil
		}
		*field(c), c.scalars[key] = []int{*v}, true
		return nil
	}
}

// condKeys lists every key of diffusers 0.42's UNet2DConditionModel config.
// The features webtensor leaves out (class and addition embeddings, an
// encoder projection, dual or cross-only attention, GLIGEN, other kernels
// and activations) are accepted only at the value that disables them.
var condKeys = diffusersKeys("UNet2DConditionModel", map[string]condKey{
	"_use_default_values": strictconfig.Ignore[UNet2DConditionConfig],
	"sample_size": func(c *UNet2DConditionConfig, raw json.RawMessage) error {
		var u UNet2DConfig
		err := sampleSize(&u, raw)
		c.SampleSize = u.SampleSize
		return err
	},
	"in_channels":         condInto(func(c *UNet2DConditionConfig) *int { return &c.InChannels }),
	"out_channels":        condInto(func(c *UNet2DConditionConfig) *int { return &c.OutChannels }),
	"center_input_sample": condInto(func(c *UNet2DConditionConfig) *bool { return &c.CenterInputSample }),
	"flip_sin_to_cos":     condInto(func(c *UNet2DConditionConfig) *bool { return &c.FlipSinToCos }),
	"freq_shift":          condInto(func(c *UNet2DConditionConfig) *float64 { return &c.FreqShift }),
	"time_embedding_type": condOnly(`"positional"`),
	"time_embedding_dim":  strictconfig.NullableInt(func(c *UNet2DConditionConfig) *int { return &c.TimeEmbeddingDim }),
	"down_block_types":    condInto(func(c *UNet2DConditionConfig) *[]string { return &c.DownBlockTypes }),
	"up_block_types":      condInto(func(c *UNet2DConditionConfig) *[]string { return &c.UpBlockTypes }),
	"mid_block_type": func(c *UNet2DConditionConfig, raw json.RawMessage) error {
		if err := strictconfig.OnlyValue(raw, `"UNetMidBlock2DCrossAttn"`, "null"); err != nil {
			return err
		}
		c.MidBlock = string(bytes.TrimSpace(raw)) != "null"
		return nil
	},
	"block_out_channels":           condInto(func(c *UNet2DConditionConfig) *[]int { return &c.BlockOutChannels }),
	"layers_per_block":             perBlock("layers_per_block", func(c *UNet2DConditionConfig) *[]int { return &c.LayersPerBlock }, false),
	"downsample_padding":           condInto(func(c *UNet2DConditionConfig) *int { return &c.DownsamplePadding }),
	"mid_block_scale_factor":       condInto(func(c *UNet2DConditionConfig) *float64 { return &c.MidBlockScaleFactor }),
	"norm_num_groups":              condInto(func(c *UNet2DConditionConfig) *int { return &c.NormNumGroups }),
	"norm_eps":                     condInto(func(c *UNet2DConditionConfig) *float64 { return &c.NormEps }),
	"cross_attention_dim":          oneNumber(func(c *UNet2DConditionConfig) *int { return &c.CrossAttentionDim }),
	"transformer_layers_per_block": oneNumber(func(c *UNet2DConditionConfig) *int { return &c.TransformerLayers }),
	"attention_head_dim":           perBlock("attention_head_dim", func(c *UNet2DConditionConfig) *[]int { return &c.AttentionHeadDim }, true),
	"num_attention_heads":          perBlock("num_attention_heads", func(c *UNet2DConditionConfig) *[]int { return &c.NumAttentionHeads }, true),
	"use_linear_projection":        condInto(func(c *UNet2DConditionConfig) *bool { return &c.UseLinearProjection }),
	"upcast_attention":             condInto(func(c *UNet2DConditionConfig) *bool { return &c.UpcastAttention }),
	"resnet_time_scale_shift":      condInto(func(c *UNet2DConditionConfig) *string { return &c.ResnetTimeScaleShift }),
	"act_fn":                       condOnly(`"silu"`, `"swish"`),
	// Dropout acts only in training; inference ignores its rate.
	"dropout":                               strictconfig.Ignore[UNet2DConditionConfig],
	"only_cross_attention":                  condOnly("false"),
	"mid_block_only_cross_attention":        condOnly("null", "false"),
	"dual_cross_attention":                  condOnly("false"),
	"reverse_transformer_layers_per_block":  condOnly("null"),
	"encoder_hid_dim":                       condOnly("null"),
	"encoder_hid_dim_type":                  condOnly("null"),
	"class_embed_type":                      condOnly("null"),
	"num_class_embeds":                      condOnly("null"),
	"class_embeddings_concat":               condOnly("false"),
	"projection_class_embeddings_input_dim": condOnly("null"),
	"addition_embed_type":                   condOnly("null"),
	"addition_time_embed_dim":               condOnly("null"),
	// Used only by addition_embed_type "text", refused above.
	"addition_embed_type_num_heads": strictconfig.Ignore[UNet2DConditionConfig],
	"resnet_skip_time_act":          condOnly("false"),
	"resnet_out_scale_factor":       condOnly("1", "1.0"),
	"time_embedding_act_fn":         condOnly("null"),
	"timestep_post_act":             condOnly("null"),
	"time_cond_proj_dim":            condOnly("null"),
	"conv_in_kernel":                condOnly("3"),
	"conv_out_kernel":               condOnly("3"),
	"attention_type":                condOnly(`"default"`),
	"cross_attention_norm":          condOnly("null"),
})

// ParseUNet2DConditionConfig reads a UNet2DConditionModel config.json. A
// key webtensor does not know, or a value it does not implement, fails
// naming the key.
func ParseUNet2DConditionConfig(data []byte) (UNet2DConditionConfig, error) {
	return parseModelConfig("UNet2DConditionModel", data, condDefaults(), condKeys, (*UNet2DConditionConfig).validate)
}

// validate expands the per-block keys and checks what the model's
// construction relies on.
func (c *UNet2DConditionConfig) validate() error { return c.validateAs("UNet2DConditionModel") }

// validateAs is validate with errors naming model's config (a ControlNet
// shares these options).
func (c *UNet2DConditionConfig) validateAs(model string) error {
	fail := failIn(model)
	n := len(c.BlockOutChannels)
	if n == 0 {
		return fail("block_out_channels", "empty")
	}
	for _, key := range []string{"layers_per_block", "attention_head_dim", "num_attention_heads"} {
		field := map[string]*[]int{"layers_per_block": &c.LayersPerBlock, "attention_head_dim": &c.AttentionHeadDim,
			"num_attention_heads": &c.NumAttentionHeads}[key]
		switch {
		case *field == nil:
		case c.scalars[key]:
			v := (*field)[0]
			*field = make([]int, n)
			for i := range *field {
				(*field)[i] = v
			}
			c.scalars[key] = false
		case len(*field) != n:
			return fail(key, "%v has %d entries for %d block_out_channels", *field, len(*field), n)
		}
	}
	if err := checkLevels(fail, c.BlockOutChannels, c.DownBlockTypes, c.UpBlockTypes, c.InChannels, c.OutChannels); err != nil {
		return err
	}
	opts := unetOptions{normGroups: c.NormNumGroups, normEps: c.NormEps, midScale: c.MidBlockScaleFactor,
		timeEmbedDim: c.TimeEmbeddingDim, downPadding: c.DownsamplePadding, timeScaleShift: c.ResnetTimeScaleShift}
	if err := opts.check(fail); err != nil {
		return err
	}
	switch {
	case c.CrossAttentionDim < 1:
		return fail("cross_attention_dim", "%d, want >= 1", c.CrossAttentionDim)
	case c.TransformerLayers < 1:
		return fail("transformer_layers_per_block", "%d, want >= 1", c.TransformerLayers)
	case c.AttentionHeadDim == nil && c.NumAttentionHeads == nil:
		return fail("attention_head_dim", "null with num_attention_heads null leaves the head count unset")
	}
	if err := checkGroupMultiples(fail, c.BlockOutChannels, c.NormNumGroups); err != nil {
		return err
	}
	for i, ch := range c.BlockOutChannels {
		if c.LayersPerBlock[i] < 1 {
			return fail("layers_per_block", "%v: entry %d is %d, want >= 1", c.LayersPerBlock, i, c.LayersPerBlock[i])
		}
		key := "attention_head_dim"
		if c.NumAttentionHeads != nil {
			key = "num_attention_heads"
		}
		if h := c.heads(i); h < 1 || h > ch {
			return fail(key, "entry %d is %d heads for %d channels (want 1 to %d)", i, h, ch, ch)
		}
	}
	return checkBlockTypes(fail, c.DownBlockTypes, c.UpBlockTypes,
		[]string{"CrossAttnDownBlock2D", "DownBlock2D"}, []string{"CrossAttnUpBlock2D", "UpBlock2D"})
}

// heads is the attention head count of down block i (the up path's block
// i uses heads(n-1-i), the mid block heads(n-1)). diffusers takes
// num_attention_heads, or else attention_head_dim, as the count.
func (c *UNet2DConditionConfig) heads(i int) int {
	if c.NumAttentionHeads != nil {
		return c.NumAttentionHeads[i]
	}
	return c.AttentionHeadDim[i]
}

func (c *UNet2DConditionConfig) timeEmbedDim() int {
	if c.TimeEmbeddingDim > 0 {
		return c.TimeEmbeddingDim
	}
	return 4 * c.BlockOutChannels[0]
}
