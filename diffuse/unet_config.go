package diffuse

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// UNet2DConfig holds a UNet2DModel's options, spelled as diffusers'
// config.json spells them. ParseUNet2DConfig fills it from a file; the
// zero values of the optional fields mean diffusers' defaults.
type UNet2DConfig struct {
	SampleSize           int      // sample_size (height = width; informational, the pipeline's default)
	InChannels           int      // in_channels
	OutChannels          int      // out_channels
	CenterInputSample    bool     // center_input_sample: the model sees 2·sample - 1
	TimeEmbeddingDim     int      // time_embedding_dim: 0 means 4·block_out_channels[0]
	FreqShift            float64  // freq_shift
	FlipSinToCos         bool     // flip_sin_to_cos
	DownBlockTypes       []string // down_block_types: DownBlock2D, AttnDownBlock2D
	MidBlock             bool     // mid_block_type: UNetMidBlock2D (true) or null
	UpBlockTypes         []string // up_block_types: UpBlock2D, AttnUpBlock2D
	BlockOutChannels     []int    // block_out_channels
	LayersPerBlock       int      // layers_per_block
	MidBlockScaleFactor  float64  // mid_block_scale_factor
	DownsamplePadding    int      // downsample_padding: 0 pads right and bottom by one, as diffusers does
	NormNumGroups        int      // norm_num_groups
	AttnNormNumGroups    int      // attn_norm_num_groups: 0 (null) means norm_num_groups, none with scale_shift
	NormEps              float64  // norm_eps
	AttentionHeadDim     int      // attention_head_dim: 0 (null) means one head over all channels
	ResnetTimeScaleShift string   // resnet_time_scale_shift: default or scale_shift
	AddAttention         bool     // add_attention (the mid block's)
}

// DefaultUNet2DConfig is UNet2DModel's __init__ defaults (a 256-pixel
// DDPM's UNet), to shrink for NewUNet2D.
func DefaultUNet2DConfig() UNet2DConfig { return unetDefaults() }

// unetDefaults are UNet2DModel's __init__ defaults.
func unetDefaults() UNet2DConfig {
	return UNet2DConfig{InChannels: 3, OutChannels: 3, FlipSinToCos: true,
		DownBlockTypes:   []string{"DownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D"},
		UpBlockTypes:     []string{"AttnUpBlock2D", "AttnUpBlock2D", "AttnUpBlock2D", "UpBlock2D"},
		BlockOutChannels: []int{224, 448, 672, 896}, LayersPerBlock: 2, MidBlock: true,
		MidBlockScaleFactor: 1, DownsamplePadding: 1, NormNumGroups: 32, NormEps: 1e-5,
		AttentionHeadDim: 8, ResnetTimeScaleShift: "default", AddAttention: true}
}

// unetKey reads one config.json key into c, or refuses its value.
type unetKey = strictconfig.Key[UNet2DConfig]

// only accepts a key at the values webtensor implements (JSON null stands
// for Python's None).
var only = strictconfig.Only[UNet2DConfig]

var unetKeys = diffusersKeys("UNet2DModel", map[string]unetKey{
	"sample_size":         sampleSize,
	"in_channels":         strictconfig.Into(func(c *UNet2DConfig) *int { return &c.InChannels }),
	"out_channels":        strictconfig.Into(func(c *UNet2DConfig) *int { return &c.OutChannels }),
	"center_input_sample": strictconfig.Into(func(c *UNet2DConfig) *bool { return &c.CenterInputSample }),
	"time_embedding_type": only(`"positional"`),
	"time_embedding_dim":  strictconfig.NullableInt(func(c *UNet2DConfig) *int { return &c.TimeEmbeddingDim }),
	"freq_shift":          strictconfig.Into(func(c *UNet2DConfig) *float64 { return &c.FreqShift }),
	"flip_sin_to_cos":     strictconfig.Into(func(c *UNet2DConfig) *bool { return &c.FlipSinToCos }),
	"down_block_types":    strictconfig.Into(func(c *UNet2DConfig) *[]string { return &c.DownBlockTypes }),
	"up_block_types":      strictconfig.Into(func(c *UNet2DConfig) *[]string { return &c.UpBlockTypes }),
	"mid_block_type": func(c *UNet2DConfig, raw json.RawMessage) error {
		if err := strictconfig.OnlyValue(raw, `"UNetMidBlock2D"`, "null"); err != nil {
			return err
		}
		c.MidBlock = string(bytes.TrimSpace(raw)) != "null"
		return nil
	},
	"block_out_channels":     strictconfig.Into(func(c *UNet2DConfig) *[]int { return &c.BlockOutChannels }),
	"layers_per_block":       strictconfig.Into(func(c *UNet2DConfig) *int { return &c.LayersPerBlock }),
	"mid_block_scale_factor": strictconfig.Into(func(c *UNet2DConfig) *float64 { return &c.MidBlockScaleFactor }),
	"downsample_padding":     strictconfig.Into(func(c *UNet2DConfig) *int { return &c.DownsamplePadding }),
	"downsample_type":        only(`"conv"`),
	"upsample_type":          only(`"conv"`),
	// Dropout acts only in training; inference ignores its rate.
	"dropout":                 strictconfig.Ignore[UNet2DConfig],
	"act_fn":                  only(`"silu"`, `"swish"`),
	"attention_head_dim":      strictconfig.NullableInt(func(c *UNet2DConfig) *int { return &c.AttentionHeadDim }),
	"norm_num_groups":         strictconfig.Into(func(c *UNet2DConfig) *int { return &c.NormNumGroups }),
	"attn_norm_num_groups":    strictconfig.NullableInt(func(c *UNet2DConfig) *int { return &c.AttnNormNumGroups }),
	"norm_eps":                strictconfig.Into(func(c *UNet2DConfig) *float64 { return &c.NormEps }),
	"resnet_time_scale_shift": strictconfig.Into(func(c *UNet2DConfig) *string { return &c.ResnetTimeScaleShift }),
	"add_attention":           strictconfig.Into(func(c *UNet2DConfig) *bool { return &c.AddAttention }),
	"class_embed_type":        only("null"),
	"num_class_embeds":        only("null"),
	// Used only by the "learned" time embedding, which is refused above.
	"num_train_timesteps": strictconfig.Ignore[UNet2DConfig],
})

// sampleSize takes an int or a [h, w] pair of equal sides.
func sampleSize(c *UNet2DConfig, raw json.RawMessage) error {
	var pair []int
	if json.Unmarshal(raw, &pair) == nil && pair != nil {
		if len(pair) != 2 || pair[0] != pair[1] {
			return fmt.Errorf("value %s is not supported (webtensor takes one side or two equal ones)", raw)
		}
		c.SampleSize = pair[0]
		return nil
	}
	var v *int
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	c.SampleSize = 0
	if v != nil {
		c.SampleSize = *v
	}
	return nil
}

// ParseUNet2DConfig reads a UNet2DModel config.json. A key webtensor does
// not know, or a value of one it does not implement (a Fourier time
// embedding, class embeddings, ResNet up/downsamplers, another block
// type), fails naming the key.
func ParseUNet2DConfig(data []byte) (UNet2DConfig, error) {
	return parseModelConfig("UNet2DModel", data, unetDefaults(), unetKeys, (*UNet2DConfig).validate)
}

// validate checks what the model's construction relies on.
func (c *UNet2DConfig) validate() error {
	fail := failIn("UNet2DModel")
	if err := checkLevels(fail, c.BlockOutChannels, c.DownBlockTypes, c.UpBlockTypes, c.InChannels, c.OutChannels); err != nil {
		return err
	}
	if err := checkCounts(fail, count{"layers_per_block", c.LayersPerBlock, false},
		count{"attn_norm_num_groups", c.AttnNormNumGroups, true}, count{"attention_head_dim", c.AttentionHeadDim, true}); err != nil {
		return err
	}
	opts := unetOptions{normGroups: c.NormNumGroups, normEps: c.NormEps, midScale: c.MidBlockScaleFactor,
		timeEmbedDim: c.TimeEmbeddingDim, downPadding: c.DownsamplePadding, timeScaleShift: c.ResnetTimeScaleShift}
	if err := opts.check(fail); err != nil {
		return err
	}
	if err := checkGroupMultiples(fail, c.BlockOutChannels, c.NormNumGroups); err != nil {
		return err
	}
	for i, ch := range c.BlockOutChannels {
		if c.AttentionHeadDim > ch {
			return fail("attention_head_dim", "%d is wider than block_out_channels[%d] = %d (no whole head fits)", c.AttentionHeadDim, i, ch)
		}
	}
	return checkBlockTypes(fail, c.DownBlockTypes, c.UpBlockTypes,
		[]string{"DownBlock2D", "AttnDownBlock2D"}, []string{"UpBlock2D", "AttnUpBlock2D"})
}

// timeEmbedDim is the width of the time embedding the ResNets take.
func (c *UNet2DConfig) timeEmbedDim() int {
	if c.TimeEmbeddingDim > 0 {
		return c.TimeEmbeddingDim
	}
	return 4 * c.BlockOutChannels[0]
}

// headDim is the attention head width of a block of ch channels.
func (c *UNet2DConfig) headDim(ch int) int {
	if c.AttentionHeadDim > 0 {
		return c.AttentionHeadDim
	}
	return ch
}
