package multimodal

import (
	"encoding/json"
	"fmt"
)

// SpeechT5Config holds what SpeechT5ForTextToSpeech reads of a SpeechT5
// config.json, spelled as transformers spells it.
type SpeechT5Config struct {
	VocabSize                  int     `json:"vocab_size"`
	HiddenSize                 int     `json:"hidden_size"`
	EncoderLayers              int     `json:"encoder_layers"`
	EncoderAttentionHeads      int     `json:"encoder_attention_heads"`
	EncoderFFNDim              int     `json:"encoder_ffn_dim"`
	DecoderLayers              int     `json:"decoder_layers"`
	DecoderAttentionHeads      int     `json:"decoder_attention_heads"`
	DecoderFFNDim              int     `json:"decoder_ffn_dim"`
	HiddenAct                  string  `json:"hidden_act"`
	LayerNormEps               float64 `json:"layer_norm_eps"`
	NumMelBins                 int     `json:"num_mel_bins"`
	SpeechDecoderPrenetLayers  int     `json:"speech_decoder_prenet_layers"`
	SpeechDecoderPrenetUnits   int     `json:"speech_decoder_prenet_units"`
	SpeechDecoderPrenetDropout float64 `json:"speech_decoder_prenet_dropout"` // applied even in inference, as in Tacotron 2
	SpeakerEmbeddingDim        int     `json:"speaker_embedding_dim"`
	SpeechDecoderPostnetLayers int     `json:"speech_decoder_postnet_layers"`
	SpeechDecoderPostnetUnits  int     `json:"speech_decoder_postnet_units"`
	SpeechDecoderPostnetKernel int     `json:"speech_decoder_postnet_kernel"`
	ReductionFactor            int     `json:"reduction_factor"`     // mel frames per decoder step
	MaxSpeechPositions         int     `json:"max_speech_positions"` // decoder steps
	MaxTextPositions           int     `json:"max_text_positions"`   // encoder tokens
	// EncoderMaxRelativePosition (encoder_max_relative_position) clips the
	// encoder's relative distances to [-max, max-1].
	EncoderMaxRelativePosition int `json:"encoder_max_relative_position"`
	PadTokenID                 int `json:"pad_token_id"` // ids equal to it are masked in the encoder
}

// speechT5Defaults are SpeechT5Config's defaults (microsoft/speecht5_tts).
func speechT5Defaults() SpeechT5Config {
	return SpeechT5Config{VocabSize: 81, HiddenSize: 768, EncoderLayers: 12, EncoderAttentionHeads: 12,
		EncoderFFNDim: 3072, DecoderLayers: 6, DecoderAttentionHeads: 12, DecoderFFNDim: 3072, HiddenAct: "gelu",
		LayerNormEps: 1e-5, NumMelBins: 80, SpeechDecoderPrenetLayers: 2, SpeechDecoderPrenetUnits: 256,
		SpeechDecoderPrenetDropout: 0.5, SpeakerEmbeddingDim: 512, SpeechDecoderPostnetLayers: 5,
		SpeechDecoderPostnetUnits: 256, SpeechDecoderPostnetKernel: 5, ReductionFactor: 2, MaxSpeechPositions: 4000,
		MaxTextPositions: 450, EncoderMaxRelativePosition: 160, PadTokenID: 1}
}

var speechT5Keys = taggedKeys(map[string]configKey[SpeechT5Config]{
	"model_type":         only[SpeechT5Config](`"speecht5"`),
	"is_encoder_decoder": only[SpeechT5Config]("true"),
	"num_attention_heads": func(c *SpeechT5Config, raw json.RawMessage) error {
		return json.Unmarshal(raw, &c.EncoderAttentionHeads)
	},
	"num_hidden_layers":              func(c *SpeechT5Config, raw json.RawMessage) error { return json.Unmarshal(raw, &c.EncoderLayers) },
	"speech_decoder_postnet_dropout": skipKey[SpeechT5Config],
	// The speech encoder prenet (speech-to-text and speech-to-speech), the
	// text decoder prenet (scale_embedding), dropout, layer drop,
	// SpecAugment and the guided attention loss are not part of
	// text-to-speech inference.
	"scale_embedding": skipKey[SpeechT5Config], "positional_dropout": skipKey[SpeechT5Config],
	"hidden_dropout": skipKey[SpeechT5Config], "attention_dropout": skipKey[SpeechT5Config],
	"activation_dropout": skipKey[SpeechT5Config], "encoder_layerdrop": skipKey[SpeechT5Config],
	"decoder_layerdrop": skipKey[SpeechT5Config], "feat_extract_norm": skipKey[SpeechT5Config],
	"feat_proj_dropout": skipKey[SpeechT5Config], "feat_extract_activation": skipKey[SpeechT5Config],
	"conv_dim": skipKey[SpeechT5Config], "conv_stride": skipKey[SpeechT5Config], "conv_kernel": skipKey[SpeechT5Config],
	"conv_bias": skipKey[SpeechT5Config], "num_conv_pos_embeddings": skipKey[SpeechT5Config],
	"num_conv_pos_embedding_groups": skipKey[SpeechT5Config], "num_feat_extract_layers": skipKey[SpeechT5Config],
	"apply_spec_augment": skipKey[SpeechT5Config], "mask_time_prob": skipKey[SpeechT5Config],
	"mask_time_length": skipKey[SpeechT5Config], "mask_time_min_masks": skipKey[SpeechT5Config],
	"mask_feature_prob": skipKey[SpeechT5Config], "mask_feature_length": skipKey[SpeechT5Config],
	"mask_feature_min_masks": skipKey[SpeechT5Config], "use_guided_attention_loss": skipKey[SpeechT5Config],
	"guided_attention_loss_num_heads": skipKey[SpeechT5Config], "guided_attention_loss_sigma": skipKey[SpeechT5Config],
	"guided_attention_loss_scale": skipKey[SpeechT5Config],
})

// ParseSpeechT5Config reads a SpeechT5 config.json for text-to-speech. A
// key webtensor does not know, or a value it does not implement, fails
// naming the key.
func ParseSpeechT5Config(data []byte) (SpeechT5Config, error) {
	c := speechT5Defaults()
	if err := parseConfig("SpeechT5", data, &c, speechT5Keys); err != nil {
		return SpeechT5Config{}, err
	}
	if err := positive("SpeechT5", map[string]int{"vocab_size": c.VocabSize, "hidden_size": c.HiddenSize,
		"encoder_layers": c.EncoderLayers, "encoder_attention_heads": c.EncoderAttentionHeads,
		"encoder_ffn_dim": c.EncoderFFNDim, "decoder_layers": c.DecoderLayers,
		"decoder_attention_heads": c.DecoderAttentionHeads, "decoder_ffn_dim": c.DecoderFFNDim,
		"num_mel_bins": c.NumMelBins, "speech_decoder_prenet_layers": c.SpeechDecoderPrenetLayers,
		"speech_decoder_prenet_units": c.SpeechDecoderPrenetUnits, "speaker_embedding_dim": c.SpeakerEmbeddingDim,
		"speech_decoder_postnet_layers": c.SpeechDecoderPostnetLayers,
		"speech_decoder_postnet_units":  c.SpeechDecoderPostnetUnits,
		"speech_decoder_postnet_kernel": c.SpeechDecoderPostnetKernel, "reduction_factor": c.ReductionFactor,
		"max_speech_positions": c.MaxSpeechPositions, "max_text_positions": c.MaxTextPositions,
		"encoder_max_relative_position": c.EncoderMaxRelativePosition}); err != nil {
		return SpeechT5Config{}, err
	}
	for _, h := range []struct {
		key   string
		heads int
	}{{"encoder_attention_heads", c.EncoderAttentionHeads}, {"decoder_attention_heads", c.DecoderAttentionHeads}} {
		if c.HiddenSize%h.heads != 0 {
			return SpeechT5Config{}, fmt.Errorf("multimodal: SpeechT5 config: hidden_size %d is not a multiple of %s %d", c.HiddenSize, h.key, h.heads)
		}
	}
	if c.SpeechDecoderPostnetKernel%2 == 0 {
		// The postnet pads (kernel-1)/2 on each side; an even kernel would
		// change the length, which transformers does not expect either.
		return SpeechT5Config{}, fmt.Errorf("multimodal: SpeechT5 config: speech_decoder_postnet_kernel %d is even; the postnet keeps the length only with an odd kernel", c.SpeechDecoderPostnetKernel)
	}
	if p := c.SpeechDecoderPrenetDropout; p < 0 || p >= 1 {
		return SpeechT5Config{}, fmt.Errorf("multimodal: SpeechT5 config: speech_decoder_prenet_dropout %g must be in [0, 1)", p)
	}
	if !activations[c.HiddenAct] {
		return SpeechT5Config{}, fmt.Errorf("multimodal: SpeechT5 config: key \"hidden_act\": %q is not supported (supported: %s)", c.HiddenAct, activationNames)
	}
	return c, nil
}

// HiFiGANConfig is SpeechT5HifiGanConfig: the vocoder's sizes.
type HiFiGANConfig struct {
	ModelInDim             int     `json:"model_in_dim"`  // mel bins in
	SamplingRate           int     `json:"sampling_rate"` // of the waveform out
	UpsampleInitialChannel int     `json:"upsample_initial_channel"`
	UpsampleRates          []int   `json:"upsample_rates"` // each transposed conv's stride
	UpsampleKernelSizes    []int   `json:"upsample_kernel_sizes"`
	ResblockKernelSizes    []int   `json:"resblock_kernel_sizes"`
	ResblockDilationSizes  [][]int `json:"resblock_dilation_sizes"`
	LeakyReLUSlope         float64 `json:"leaky_relu_slope"`
	NormalizeBefore        bool    `json:"normalize_before"` // (mel - mean) / scale first
}

func hifiGANDefaults() HiFiGANConfig {
	return HiFiGANConfig{ModelInDim: 80, SamplingRate: 16000, UpsampleInitialChannel: 512,
		UpsampleRates: []int{4, 4, 4, 4}, UpsampleKernelSizes: []int{8, 8, 8, 8}, ResblockKernelSizes: []int{3, 7, 11},
		ResblockDilationSizes: [][]int{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}}, LeakyReLUSlope: 0.1, NormalizeBefore: true}
}

var hifiGANKeys = taggedKeys(map[string]configKey[HiFiGANConfig]{
	"model_type": only[HiFiGANConfig](`"speecht5_hifigan"`),
})

// ParseHiFiGANConfig reads a SpeechT5HifiGan config.json.
func ParseHiFiGANConfig(data []byte) (HiFiGANConfig, error) {
	c := hifiGANDefaults()
	if err := parseConfig("SpeechT5HifiGan", data, &c, hifiGANKeys); err != nil {
		return HiFiGANConfig{}, err
	}
	if err := positive("SpeechT5HifiGan", map[string]int{"model_in_dim": c.ModelInDim, "sampling_rate": c.SamplingRate,
		"upsample_initial_channel": c.UpsampleInitialChannel, "upsample_rates": len(c.UpsampleRates),
		"resblock_kernel_sizes": len(c.ResblockKernelSizes)}); err != nil {
		return HiFiGANConfig{}, err
	}
	bad := func(format string, args ...any) (HiFiGANConfig, error) {
		return HiFiGANConfig{}, fmt.Errorf("multimodal: SpeechT5HifiGan config: "+format, args...)
	}
	if len(c.UpsampleKernelSizes) != len(c.UpsampleRates) {
		return bad("upsample_kernel_sizes %v and upsample_rates %v differ in length", c.UpsampleKernelSizes, c.UpsampleRates)
	}
	if len(c.ResblockDilationSizes) != len(c.ResblockKernelSizes) {
		return bad("resblock_dilation_sizes %v and resblock_kernel_sizes %v differ in length", c.ResblockDilationSizes, c.ResblockKernelSizes)
	}
	if c.UpsampleInitialChannel>>len(c.UpsampleRates) < 1 {
		return bad("upsample_initial_channel %d halves to nothing over %d upsamplers", c.UpsampleInitialChannel, len(c.UpsampleRates))
	}
	for i, r := range c.UpsampleRates {
		if r < 1 || c.UpsampleKernelSizes[i] < r {
			return bad("upsampler %d has rate %d and kernel %d; want 1 <= rate <= kernel", i, r, c.UpsampleKernelSizes[i])
		}
	}
	for i, k := range c.ResblockKernelSizes {
		if k < 1 || k%2 == 0 {
			return bad("resblock_kernel_sizes[%d] is %d; the residual blocks keep the length only with an odd kernel", i, k)
		}
		if len(c.ResblockDilationSizes[i]) == 0 {
			return bad("resblock_dilation_sizes[%d] is empty", i)
		}
		for _, d := range c.ResblockDilationSizes[i] {
			if d < 1 {
				return bad("resblock_dilation_sizes[%d] holds %d, must be >= 1", i, d)
			}
		}
	}
	return c, nil
}
