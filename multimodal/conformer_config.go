package multimodal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Wav2Vec2ConformerConfig holds a Wav2Vec2ConformerModel's options,
// spelled as transformers' config.json spells them.
type Wav2Vec2ConformerConfig struct {
	HiddenSize        int     `json:"hidden_size"`
	NumHiddenLayers   int     `json:"num_hidden_layers"`
	NumAttentionHeads int     `json:"num_attention_heads"`
	IntermediateSize  int     `json:"intermediate_size"`
	HiddenAct         string  `json:"hidden_act"`     // the feed-forward and convolution modules' activation
	LayerNormEps      float64 `json:"layer_norm_eps"` // the feature projection's and the encoder's final LayerNorm
	// FeatExtractNorm (feat_extract_norm) is "group" (a GroupNorm of one
	// group per channel after the first conv only) or "layer" (a LayerNorm
	// over the channels after every conv).
	FeatExtractNorm       string
	FeatExtractActivation string `json:"feat_extract_activation"`
	ConvDim               []int  `json:"conv_dim"` // each feature-encoder conv's output channels
	ConvStride            []int  `json:"conv_stride"`
	ConvKernel            []int  `json:"conv_kernel"`
	ConvBias              bool   `json:"conv_bias"`
	// NumConvPosEmbeddings and NumConvPosEmbeddingGroups
	// (num_conv_pos_embeddings, num_conv_pos_embedding_groups) size the
	// encoder's pos_conv_embed, which the checkpoint holds and
	// transformers' Wav2Vec2ConformerEncoder never applies.
	NumConvPosEmbeddings      int `json:"num_conv_pos_embeddings"`
	NumConvPosEmbeddingGroups int `json:"num_conv_pos_embedding_groups"`
	// PositionEmbeddingsType (position_embeddings_type) is "relative"
	// (Transformer-XL: linear_pos, pos_bias_u and pos_bias_v in every
	// attention) or "rotary".
	PositionEmbeddingsType  string
	RotaryEmbeddingBase     float64 `json:"rotary_embedding_base"`
	MaxSourcePositions      int     `json:"max_source_positions"`       // the relative table's precomputed length
	ConvDepthwiseKernelSize int     `json:"conv_depthwise_kernel_size"` // odd, for "same" padding
	// MaskTimeProb and MaskFeatureProb (mask_time_prob, mask_feature_prob)
	// drive SpecAugment, which runs in training only; either above 0 gives
	// the checkpoint masked_spec_embed, which inference loads and ignores.
	MaskTimeProb    float64 `json:"mask_time_prob"`
	MaskFeatureProb float64 `json:"mask_feature_prob"`

	numFeatExtractLayers *int // num_feat_extract_layers when written: must be len(conv_dim)
}

func wav2vec2ConformerDefaults() Wav2Vec2ConformerConfig {
	return Wav2Vec2ConformerConfig{HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12, IntermediateSize: 3072,
		HiddenAct: "gelu", LayerNormEps: 1e-5, FeatExtractNorm: "group", FeatExtractActivation: "gelu",
		ConvDim: []int{512, 512, 512, 512, 512, 512, 512}, ConvStride: []int{5, 2, 2, 2, 2, 2, 2},
		ConvKernel: []int{10, 3, 3, 3, 3, 2, 2}, NumConvPosEmbeddings: 128, NumConvPosEmbeddingGroups: 16,
		PositionEmbeddingsType: "relative", RotaryEmbeddingBase: 10000, MaxSourcePositions: 5000,
		ConvDepthwiseKernelSize: 31, MaskTimeProb: 0.05}
}

// oneOf reads a string key that takes one of the named values.
func oneOf(p func(*Wav2Vec2ConformerConfig) *string, values ...string) configKey[Wav2Vec2ConformerConfig] {
	return func(c *Wav2Vec2ConformerConfig, raw json.RawMessage) error {
		var v *string
		if err := json.Unmarshal(raw, &v); err != nil || v == nil || !slices.Contains(values, *v) {
			return fmt.Errorf("value %s is not supported (supported: \"%s\")", bytes.TrimSpace(raw), strings.Join(values, `", "`))
		}
		*p(c) = *v
		return nil
	}
}

var wav2vec2ConformerKeys = taggedKeys(map[string]configKey[Wav2Vec2ConformerConfig]{
	"model_type":        only[Wav2Vec2ConformerConfig](`"wav2vec2-conformer"`),
	"feat_extract_norm": oneOf(func(c *Wav2Vec2ConformerConfig) *string { return &c.FeatExtractNorm }, "group", "layer"),
	// null (no positions) and any other type are refused.
	"position_embeddings_type": oneOf(func(c *Wav2Vec2ConformerConfig) *string { return &c.PositionEmbeddingsType },
		"relative", "rotary"),
	// The adapter (a conv stack for speech encoder-decoders) is not
	// implemented; its sizes matter only with it.
	"add_adapter":         only[Wav2Vec2ConformerConfig]("false"),
	"adapter_kernel_size": skipKey[Wav2Vec2ConformerConfig], "adapter_stride": skipKey[Wav2Vec2ConformerConfig],
	"num_adapter_layers": skipKey[Wav2Vec2ConformerConfig], "output_hidden_size": skipKey[Wav2Vec2ConformerConfig],
	// num_feat_extract_layers is len(conv_dim), checked after parsing.
	"num_feat_extract_layers": field(func(c *Wav2Vec2ConformerConfig) any { return &c.numFeatExtractLayers }),
	// Dropout, layer drop and SpecAugment change training only; the
	// quantizer, CTC, classification and x-vector settings belong to the
	// heads of other Wav2Vec2Conformer models.
	"hidden_dropout": skipKey[Wav2Vec2ConformerConfig], "activation_dropout": skipKey[Wav2Vec2ConformerConfig],
	"attention_dropout": skipKey[Wav2Vec2ConformerConfig], "feat_proj_dropout": skipKey[Wav2Vec2ConformerConfig],
	"feat_quantizer_dropout": skipKey[Wav2Vec2ConformerConfig], "final_dropout": skipKey[Wav2Vec2ConformerConfig],
	"layerdrop": skipKey[Wav2Vec2ConformerConfig], "conformer_conv_dropout": skipKey[Wav2Vec2ConformerConfig],
	"apply_spec_augment": skipKey[Wav2Vec2ConformerConfig], "mask_time_length": skipKey[Wav2Vec2ConformerConfig],
	"mask_time_min_masks": skipKey[Wav2Vec2ConformerConfig], "mask_feature_length": skipKey[Wav2Vec2ConformerConfig],
	"mask_feature_min_masks": skipKey[Wav2Vec2ConformerConfig], "num_codevectors_per_group": skipKey[Wav2Vec2ConformerConfig],
	"num_codevector_groups": skipKey[Wav2Vec2ConformerConfig], "contrastive_logits_temperature": skipKey[Wav2Vec2ConformerConfig],
	"num_negatives": skipKey[Wav2Vec2ConformerConfig], "codevector_dim": skipKey[Wav2Vec2ConformerConfig],
	"proj_codevector_dim": skipKey[Wav2Vec2ConformerConfig], "diversity_loss_weight": skipKey[Wav2Vec2ConformerConfig],
	"ctc_loss_reduction": skipKey[Wav2Vec2ConformerConfig], "ctc_zero_infinity": skipKey[Wav2Vec2ConformerConfig],
	"use_weighted_layer_sum": skipKey[Wav2Vec2ConformerConfig], "classifier_proj_size": skipKey[Wav2Vec2ConformerConfig],
	"tdnn_dim": skipKey[Wav2Vec2ConformerConfig], "tdnn_kernel": skipKey[Wav2Vec2ConformerConfig],
	"tdnn_dilation": skipKey[Wav2Vec2ConformerConfig], "xvector_output_dim": skipKey[Wav2Vec2ConformerConfig],
	"vocab_size": skipKey[Wav2Vec2ConformerConfig],
})

// ParseWav2Vec2ConformerConfig reads a Wav2Vec2Conformer config.json. A key
// webtensor does not know, or a value it does not implement (null or
// another position_embeddings_type, the adapter, an activation it lacks),
// fails naming the key.
func ParseWav2Vec2ConformerConfig(data []byte) (Wav2Vec2ConformerConfig, error) {
	const what = "Wav2Vec2Conformer"
	c := wav2vec2ConformerDefaults()
	if err := parseConfig(what, data, &c, wav2vec2ConformerKeys); err != nil {
		return Wav2Vec2ConformerConfig{}, err
	}
	fail := func(format string, args ...any) (Wav2Vec2ConformerConfig, error) {
		return Wav2Vec2ConformerConfig{}, fmt.Errorf("multimodal: "+what+" config: "+format, args...)
	}
	if err := positive(what, map[string]int{"hidden_size": c.HiddenSize, "num_hidden_layers": c.NumHiddenLayers,
		"num_attention_heads": c.NumAttentionHeads, "intermediate_size": c.IntermediateSize,
		"num_conv_pos_embeddings": c.NumConvPosEmbeddings, "num_conv_pos_embedding_groups": c.NumConvPosEmbeddingGroups,
		"max_source_positions": c.MaxSourcePositions, "conv_depthwise_kernel_size": c.ConvDepthwiseKernelSize,
		"conv layers (len(conv_dim))": len(c.ConvDim)}); err != nil {
		return Wav2Vec2ConformerConfig{}, err
	}
	if len(c.ConvStride) != len(c.ConvDim) || len(c.ConvKernel) != len(c.ConvDim) {
		return fail("conv_dim %v, conv_stride %v and conv_kernel %v must have one entry per conv layer", c.ConvDim, c.ConvStride, c.ConvKernel)
	}
	for i := range c.ConvDim {
		if c.ConvDim[i] < 1 || c.ConvStride[i] < 1 || c.ConvKernel[i] < 1 {
			return fail("conv layer %d has dim %d, stride %d, kernel %d; each must be >= 1", i, c.ConvDim[i], c.ConvStride[i], c.ConvKernel[i])
		}
	}
	if n := c.numFeatExtractLayers; n != nil && *n != len(c.ConvDim) {
		return fail("num_feat_extract_layers is %d, but conv_dim has %d layers", *n, len(c.ConvDim))
	}
	c.numFeatExtractLayers = nil
	switch {
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return fail("hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumAttentionHeads)
	case c.HiddenSize%c.NumConvPosEmbeddingGroups != 0:
		return fail("hidden_size %d is not a multiple of num_conv_pos_embedding_groups %d", c.HiddenSize, c.NumConvPosEmbeddingGroups)
	case c.ConvDepthwiseKernelSize%2 == 0:
		return fail("conv_depthwise_kernel_size %d must be odd (\"same\" padding)", c.ConvDepthwiseKernelSize)
	case c.PositionEmbeddingsType == "relative" && c.HiddenSize%2 != 0:
		return fail("relative positions need an even hidden_size (sine and cosine pairs), got %d", c.HiddenSize)
	case c.PositionEmbeddingsType == "rotary" && (c.HiddenSize/c.NumAttentionHeads)%2 != 0:
		return fail("rotary positions need an even head size, got hidden_size/num_attention_heads = %d", c.HiddenSize/c.NumAttentionHeads)
	case c.PositionEmbeddingsType == "rotary" && !(c.RotaryEmbeddingBase > 0):
		return fail("rotary_embedding_base %g must be > 0", c.RotaryEmbeddingBase)
	}
	for _, a := range []struct{ key, act string }{{"hidden_act", c.HiddenAct}, {"feat_extract_activation", c.FeatExtractActivation}} {
		if !activations[a.act] {
			return fail("key %q: %q is not supported (supported: %s)", a.key, a.act, activationNames)
		}
	}
	return c, nil
}

// headSize is hidden_size / num_attention_heads.
func (c Wav2Vec2ConformerConfig) headSize() int { return c.HiddenSize / c.NumAttentionHeads }

// FeatureLength is the number of frames the feature encoder makes of n
// samples (transformers' _get_feat_extract_output_lengths): each conv maps
// n to floor((n - kernel) / stride) + 1; 0 when n is too short for a frame.
func (c Wav2Vec2ConformerConfig) FeatureLength(n int) int {
	for i, k := range c.ConvKernel {
		if n < k {
			return 0
		}
		n = (n-k)/c.ConvStride[i] + 1
	}
	return n
}
