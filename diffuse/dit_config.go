package diffuse

import (
	"encoding/json"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// DiTConfig holds a DiTTransformer2DModel's options, spelled as diffusers'
// config.json spells them. ParseDiTConfig fills it from a file.
type DiTConfig struct {
	NumAttentionHeads int // num_attention_heads
	AttentionHeadDim  int // attention_head_dim: the model's width is heads × head dim
	InChannels        int // in_channels
	// OutChannels (out_channels; null means in_channels) is twice
	// in_channels in DiT's checkpoints: the noise prediction, then the
	// learned variance (see LearnedSigma).
	OutChannels   int
	NumLayers     int // num_layers: transformer blocks
	SampleSize    int // sample_size: the latent side the positional table is made for
	PatchSize     int // patch_size
	AttentionBias bool
	// ActivationFn is activation_fn: "gelu-approximate" (the tanh GELU,
	// DiT's) or "gelu" in the feed-forward.
	ActivationFn string
	// NumEmbedsAdaNorm (num_embeds_ada_norm) is the number of classes;
	// the label table has one row more, the null class classifier-free
	// guidance conditions on.
	NumEmbedsAdaNorm      int
	UpcastAttention       bool    // upcast_attention: half-precision scores computed in float32
	NormElementwiseAffine bool    // norm_elementwise_affine: the feed-forward's norm has weights
	NormEps               float64 // norm_eps: the feed-forward's norm (adaLN's is fixed at 1e-6)
}

// ditDefaults are DiTTransformer2DModel's __init__ defaults.
func ditDefaults() DiTConfig {
	return DiTConfig{NumAttentionHeads: 16, AttentionHeadDim: 72, InChannels: 4, NumLayers: 28,
		SampleSize: 32, PatchSize: 2, AttentionBias: true, ActivationFn: "gelu-approximate",
		NumEmbedsAdaNorm: 1000, NormEps: 1e-5}
}

type ditKey = strictconfig.Key[DiTConfig]

// ditField reads a key into the field p points at; null is refused, these
// keys have no None in diffusers (out_channels is read separately).
var ditField = strictconfig.Field[DiTConfig]

var ditOnly = strictconfig.Only[DiTConfig]

var ditIgnore = strictconfig.Ignore[DiTConfig]

var ditKeys = diffusersKeys("DiTTransformer2DModel", map[string]ditKey{
	"num_attention_heads": ditField(func(c *DiTConfig) any { return &c.NumAttentionHeads }),
	"attention_head_dim":  ditField(func(c *DiTConfig) any { return &c.AttentionHeadDim }),
	"in_channels":         ditField(func(c *DiTConfig) any { return &c.InChannels }),
	"out_channels": func(c *DiTConfig, raw json.RawMessage) error {
		var v *int
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		c.OutChannels = 0
		if v != nil {
			c.OutChannels = *v
		}
		return nil
	},
	"num_layers": ditField(func(c *DiTConfig) any { return &c.NumLayers }),
	// Dropout acts only in training; inference ignores its rate.
	"dropout": ditIgnore,
	// diffusers stores it but no DiT layer uses group norm.
	"norm_num_groups":         ditIgnore,
	"attention_bias":          ditField(func(c *DiTConfig) any { return &c.AttentionBias }),
	"sample_size":             ditField(func(c *DiTConfig) any { return &c.SampleSize }),
	"patch_size":              ditField(func(c *DiTConfig) any { return &c.PatchSize }),
	"activation_fn":           ditField(func(c *DiTConfig) any { return &c.ActivationFn }),
	"num_embeds_ada_norm":     ditField(func(c *DiTConfig) any { return &c.NumEmbedsAdaNorm }),
	"upcast_attention":        ditField(func(c *DiTConfig) any { return &c.UpcastAttention }),
	"norm_type":               ditOnly(`"ada_norm_zero"`),
	"norm_elementwise_affine": ditField(func(c *DiTConfig) any { return &c.NormElementwiseAffine }),
	"norm_eps":                ditField(func(c *DiTConfig) any { return &c.NormEps }),
})

// ParseDiTConfig reads a DiTTransformer2DModel config.json. A key webtensor
// does not know, or a value it does not implement (another norm_type or
// activation), fails naming the key.
func ParseDiTConfig(data []byte) (DiTConfig, error) {
	return parseModelConfig("DiTTransformer2DModel", data, ditDefaults(), ditKeys, (*DiTConfig).validate)
}

// validate fills out_channels (null: in_channels) and checks what the
// model's construction relies on.
func (c *DiTConfig) validate() error {
	if c.OutChannels == 0 {
		c.OutChannels = c.InChannels
	}
	fail := failIn("DiTTransformer2DModel")
	// num_layers >= 1: the final layer reads the first block's conditioning embedding.
	if err := checkCounts(fail, count{"num_attention_heads", c.NumAttentionHeads, false},
		count{"attention_head_dim", c.AttentionHeadDim, false}, count{"in_channels", c.InChannels, false},
		count{"out_channels", c.OutChannels, true}, count{"num_layers", c.NumLayers, false},
		count{"patch_size", c.PatchSize, false}); err != nil {
		return err
	}
	switch {
	case c.SampleSize < c.PatchSize || c.SampleSize%c.PatchSize != 0:
		return fail("sample_size", "%d is not a positive multiple of patch_size %d", c.SampleSize, c.PatchSize)
	case c.NumEmbedsAdaNorm < 1:
		return fail("num_embeds_ada_norm", "%d, want >= 1 (adaLN-Zero needs class embeddings)", c.NumEmbedsAdaNorm)
	case c.ActivationFn != "gelu-approximate" && c.ActivationFn != "gelu":
		return fail("activation_fn", "%q is not supported (webtensor implements gelu-approximate and gelu)", c.ActivationFn)
	case c.NormEps <= 0:
		return fail("norm_eps", "%v, want > 0", c.NormEps)
	case (c.NumAttentionHeads*c.AttentionHeadDim)%4 != 0:
		// The 2-D sin-cos table splits the width in four (sin and cos of rows and columns).
		return fail("attention_head_dim", "width %d×%d = %d is not a multiple of 4, which the positional table needs",
			c.NumAttentionHeads, c.AttentionHeadDim, c.NumAttentionHeads*c.AttentionHeadDim)
	}
	return nil
}

// Width is the transformer's hidden width, heads × head dim.
func (c *DiTConfig) Width() int { return c.NumAttentionHeads * c.AttentionHeadDim }

// LearnedSigma says whether the output carries the learned variance after
// the noise prediction (out_channels twice in_channels), as DiT's
// checkpoints do; DiTPipeline then keeps the first in_channels channels
// for the scheduler.
func (c *DiTConfig) LearnedSigma() bool { return c.OutChannels == 2*c.InChannels }
