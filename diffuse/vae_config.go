package diffuse

import (
	"encoding/json"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// AutoencoderKLConfig holds an AutoencoderKL's options, spelled as
// diffusers' config.json spells them. ParseAutoencoderKLConfig fills it
// from a file.
type AutoencoderKLConfig struct {
	InChannels       int      // in_channels: the images' channels
	OutChannels      int      // out_channels: the decoded images' channels
	DownBlockTypes   []string // down_block_types: DownEncoderBlock2D
	UpBlockTypes     []string // up_block_types: UpDecoderBlock2D
	BlockOutChannels []int    // block_out_channels
	LayersPerBlock   int      // layers_per_block (the decoder's blocks have one more)
	LatentChannels   int      // latent_channels
	NormNumGroups    int      // norm_num_groups
	SampleSize       int      // sample_size (height = width; diffusers' default tile size)
	// ScalingFactor (scaling_factor) is what pipelines multiply the
	// latents by after encoding and divide them by before decoding; the
	// model itself does not apply it, as diffusers' does not.
	ScalingFactor float64
	// ForceUpcast (force_upcast) tells diffusers' pipelines to run the VAE
	// in float32 when the rest runs in float16; informational here, where
	// the caller picks the dtype (WithDType).
	ForceUpcast          bool
	UseQuantConv         bool // use_quant_conv: a 1×1 conv on the encoder's moments
	UsePostQuantConv     bool // use_post_quant_conv: a 1×1 conv on the latents before decoding
	MidBlockAddAttention bool // mid_block_add_attention: self-attention in both mid blocks
}

// vaeDefaults are AutoencoderKL's __init__ defaults.
func vaeDefaults() AutoencoderKLConfig {
	return AutoencoderKLConfig{InChannels: 3, OutChannels: 3,
		DownBlockTypes: []string{"DownEncoderBlock2D"}, UpBlockTypes: []string{"UpDecoderBlock2D"},
		BlockOutChannels: []int{64}, LayersPerBlock: 1, LatentChannels: 4, NormNumGroups: 32,
		SampleSize: 32, ScalingFactor: 0.18215, ForceUpcast: true, UseQuantConv: true,
		UsePostQuantConv: true, MidBlockAddAttention: true}
}

type vaeKey = strictconfig.Key[AutoencoderKLConfig]

// vaeField reads a key into the field p points at; null is refused, these
// keys have no None in diffusers.
var vaeField = strictconfig.Field[AutoencoderKLConfig]

// vaeOnly accepts a key at the values webtensor implements.
var vaeOnly = strictconfig.Only[AutoencoderKLConfig]

var vaeKeys = diffusersKeys("AutoencoderKL", map[string]vaeKey{
	"in_channels":        vaeField(func(c *AutoencoderKLConfig) any { return &c.InChannels }),
	"out_channels":       vaeField(func(c *AutoencoderKLConfig) any { return &c.OutChannels }),
	"down_block_types":   vaeField(func(c *AutoencoderKLConfig) any { return &c.DownBlockTypes }),
	"up_block_types":     vaeField(func(c *AutoencoderKLConfig) any { return &c.UpBlockTypes }),
	"block_out_channels": vaeField(func(c *AutoencoderKLConfig) any { return &c.BlockOutChannels }),
	"layers_per_block":   vaeField(func(c *AutoencoderKLConfig) any { return &c.LayersPerBlock }),
	"act_fn":             vaeOnly(`"silu"`, `"swish"`),
	"latent_channels":    vaeField(func(c *AutoencoderKLConfig) any { return &c.LatentChannels }),
	"norm_num_groups":    vaeField(func(c *AutoencoderKLConfig) any { return &c.NormNumGroups }),
	"sample_size": func(c *AutoencoderKLConfig, raw json.RawMessage) error {
		// The UNet's reader: an int, or a pair of equal sides.
		var u UNet2DConfig
		err := sampleSize(&u, raw)
		c.SampleSize = u.SampleSize
		return err
	},
	"scaling_factor": vaeField(func(c *AutoencoderKLConfig) any { return &c.ScalingFactor }),
	// A shift (Flux's and SD3's VAEs) and per-channel latent statistics
	// are pipeline-side normalisations webtensor does not carry yet;
	// refusing them keeps a caller from silently mis-scaling latents.
	"shift_factor":            vaeOnly("null"),
	"latents_mean":            vaeOnly("null"),
	"latents_std":             vaeOnly("null"),
	"force_upcast":            vaeField(func(c *AutoencoderKLConfig) any { return &c.ForceUpcast }),
	"use_quant_conv":          vaeField(func(c *AutoencoderKLConfig) any { return &c.UseQuantConv }),
	"use_post_quant_conv":     vaeField(func(c *AutoencoderKLConfig) any { return &c.UsePostQuantConv }),
	"mid_block_add_attention": vaeField(func(c *AutoencoderKLConfig) any { return &c.MidBlockAddAttention }),
})

// ParseAutoencoderKLConfig reads an AutoencoderKL config.json. A key
// webtensor does not know, or a value of one it does not implement
// (another block type or activation, a shift factor, latent statistics),
// fails naming the key.
func ParseAutoencoderKLConfig(data []byte) (AutoencoderKLConfig, error) {
	return parseModelConfig("AutoencoderKL", data, vaeDefaults(), vaeKeys, (*AutoencoderKLConfig).validate)
}

// validate checks what the model's construction relies on.
func (c *AutoencoderKLConfig) validate() error {
	fail := failIn("AutoencoderKL")
	if err := checkLevels(fail, c.BlockOutChannels, c.DownBlockTypes, c.UpBlockTypes, c.InChannels, c.OutChannels); err != nil {
		return err
	}
	if err := checkCounts(fail, count{"latent_channels", c.LatentChannels, false},
		count{"layers_per_block", c.LayersPerBlock, false}, count{"norm_num_groups", c.NormNumGroups, false}); err != nil {
		return err
	}
	if err := checkGroupMultiples(fail, c.BlockOutChannels, c.NormNumGroups); err != nil {
		return err
	}
	return checkBlockTypes(fail, c.DownBlockTypes, c.UpBlockTypes, []string{"DownEncoderBlock2D"}, []string{"UpDecoderBlock2D"})
}

// scale is the ratio of image to latent side: one halving per level
// below the last.
func (c *AutoencoderKLConfig) scale() int { return 1 << (len(c.BlockOutChannels) - 1) }
