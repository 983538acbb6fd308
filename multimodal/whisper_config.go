package multimodal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"

	"github.com/webtensor/webtensor/internal/modelfs"
	"github.com/webtensor/webtensor/internal/strictconfig"
)

// WhisperConfig holds a Whisper model's options, spelled as transformers'
// config.json spells them.
type WhisperConfig struct {
	VocabSize             int    `json:"vocab_size"`
	NumMelBins            int    `json:"num_mel_bins"`
	DModel                int    `json:"d_model"`
	EncoderLayers         int    `json:"encoder_layers"`
	DecoderLayers         int    `json:"decoder_layers"`
	EncoderAttentionHeads int    `json:"encoder_attention_heads"`
	DecoderAttentionHeads int    `json:"decoder_attention_heads"`
	EncoderFFNDim         int    `json:"encoder_ffn_dim"`
	DecoderFFNDim         int    `json:"decoder_ffn_dim"`
	MaxSourcePositions    int    `json:"max_source_positions"` // encoder frames after the stride-2 conv
	MaxTargetPositions    int    `json:"max_target_positions"` // decoder positions
	ActivationFunction    string `json:"activation_function"`
	// TieWordEmbeddings (tie_word_embeddings) makes proj_out the decoder's
	// token embedding; save_pretrained then leaves proj_out out.
	TieWordEmbeddings bool `json:"tie_word_embeddings"`
	// Generation settings config.json may carry; generation_config.json,
	// when present, takes precedence (see WhisperGenerationConfig).
	generation WhisperGenerationConfig
}

func whisperDefaults() WhisperConfig {
	return WhisperConfig{VocabSize: 51865, NumMelBins: 80, DModel: 384, EncoderLayers: 4, DecoderLayers: 4,
		EncoderAttentionHeads: 6, DecoderAttentionHeads: 6, EncoderFFNDim: 1536, DecoderFFNDim: 1536,
		MaxSourcePositions: 1500, MaxTargetPositions: 448, ActivationFunction: "gelu", TieWordEmbeddings: true,
		generation: WhisperGenerationConfig{DecoderStartTokenID: 50257, EOSTokenIDs: []int{50256}, PadTokenID: 50256,
			NumBeams: 1, LengthPenalty: 1, EarlyStopping: "false"}}
}

// skipKey accepts a key that only training, other heads or long-form
// transcription read.
func skipKey[C any](*C, json.RawMessage) error { return nil }

var whisperKeys = withLegacyGeneration(taggedKeys(map[string]configKey[WhisperConfig]{
	"model_type": only[WhisperConfig](`"whisper"`),
	// transformers 5 accepts scale_embedding but no longer applies it.
	"scale_embedding":    only[WhisperConfig]("false"),
	"is_encoder_decoder": only[WhisperConfig]("true"),
	// num_hidden_layers is an alias of encoder_layers.
	"num_hidden_layers": func(c *WhisperConfig, raw json.RawMessage) error { return json.Unmarshal(raw, &c.EncoderLayers) },
	// Dropout, SpecAugment, layer drop and the audio classification head
	// change training or other models, not this one's inference.
	"activation_dropout": skipKey[WhisperConfig], "attention_dropout": skipKey[WhisperConfig], "dropout": skipKey[WhisperConfig],
	"encoder_layerdrop": skipKey[WhisperConfig], "decoder_layerdrop": skipKey[WhisperConfig],
	"apply_spec_augment": skipKey[WhisperConfig], "mask_time_prob": skipKey[WhisperConfig], "mask_time_length": skipKey[WhisperConfig],
	"mask_time_min_masks": skipKey[WhisperConfig], "mask_feature_prob": skipKey[WhisperConfig],
	"mask_feature_length": skipKey[WhisperConfig], "mask_feature_min_masks": skipKey[WhisperConfig],
	"classifier_proj_size": skipKey[WhisperConfig], "use_weighted_layer_sum": skipKey[WhisperConfig],
	"median_filter_width": skipKey[WhisperConfig], "init_std": skipKey[WhisperConfig],
}))

// withLegacyGeneration adds the generation settings config.json may carry,
// read as GenerationConfig.from_model_config reads them: by
// generation_config.json's readers (null leaves the default; transformers
// writes "forced_decoder_ids": null).
func withLegacyGeneration(keys map[string]configKey[WhisperConfig]) map[string]configKey[WhisperConfig] {
	maps.Copy(keys, strictconfig.Within(func(c *WhisperConfig) *WhisperGenerationConfig { return &c.generation },
		whisperGenerationKeys, "decoder_start_token_id", "eos_token_id", "pad_token_id", "suppress_tokens",
		"begin_suppress_tokens", "forced_decoder_ids", "max_length"))
	return keys
}

// ParseWhisperConfig reads a Whisper config.json. A key webtensor does not
// know, or a value it does not implement, fails naming the key.
func ParseWhisperConfig(data []byte) (WhisperConfig, error) {
	c := whisperDefaults()
	if err := parseConfig("Whisper", data, &c, whisperKeys); err != nil {
		return WhisperConfig{}, err
	}
	if err := positive("Whisper", map[string]int{"vocab_size": c.VocabSize, "num_mel_bins": c.NumMelBins,
		"d_model": c.DModel, "encoder_layers": c.EncoderLayers, "decoder_layers": c.DecoderLayers,
		"encoder_attention_heads": c.EncoderAttentionHeads, "decoder_attention_heads": c.DecoderAttentionHeads,
		"encoder_ffn_dim": c.EncoderFFNDim, "decoder_ffn_dim": c.DecoderFFNDim,
		"max_source_positions": c.MaxSourcePositions, "max_target_positions": c.MaxTargetPositions}); err != nil {
		return WhisperConfig{}, err
	}
	for _, h := range []struct {
		key   string
		heads int
	}{{"encoder_attention_heads", c.EncoderAttentionHeads}, {"decoder_attention_heads", c.DecoderAttentionHeads}} {
		if c.DModel%h.heads != 0 {
			return WhisperConfig{}, fmt.Errorf("multimodal: Whisper config: d_model %d is not a multiple of %s %d", c.DModel, h.key, h.heads)
		}
	}
	if !activations[c.ActivationFunction] {
		return WhisperConfig{}, fmt.Errorf("multimodal: Whisper config: key \"activation_function\": %q is not supported (supported: %s)", c.ActivationFunction, activationNames)
	}
	return c, nil
}

// WhisperGenerationConfig is what Generate reads of generation_config.json
// (or, without one, of config.json, as transformers does).
type WhisperGenerationConfig struct {
	DecoderStartTokenID int   `json:"decoder_start_token_id"` // <|startoftranscript|>
	EOSTokenIDs         []int // eos_token_id: one id or a list (see eosIDs)
	PadTokenID          int   `json:"pad_token_id"`
	// ForcedDecoderIDs (forced_decoder_ids) are [position, id] pairs for
	// positions 1, 2, ... of the prompt; a null id (-1 here) at position 1
	// asks for language detection.
	ForcedDecoderIDs    [][2]*int `json:"forced_decoder_ids"`
	NoTimestampsTokenID *int      `json:"no_timestamps_token_id"` // appended to the prompt when set
	SuppressTokens      []int     `json:"suppress_tokens"`        // never generated
	BeginSuppressTokens []int     `json:"begin_suppress_tokens"`  // not generated first
	// LangToID (lang_to_id) names the language tokens; with it and no
	// forced language, Generate detects the language as transformers does.
	LangToID  map[string]int `json:"lang_to_id"`
	MaxLength int            `json:"max_length"` // new tokens when Generate is given none (default 20)
	// NumBeams (num_beams) above 1 makes Generate search with that many
	// beams; LengthPenalty (length_penalty, default 1) divides a finished
	// beam's log-probability by its length to that power; EarlyStopping
	// (early_stopping) is "false", "true" or "never", as transformers'.
	NumBeams      int     `json:"num_beams"`
	LengthPenalty float64 `json:"length_penalty"`
	EarlyStopping string
}

// earlyStopping reads early_stopping: true, false or "never".
func earlyStopping(g *WhisperGenerationConfig, raw json.RawMessage) error {
	switch s := string(raw); s {
	case "true", "false":
		g.EarlyStopping = s
	case `"never"`:
		g.EarlyStopping = "never"
	default:
		return fmt.Errorf("value %s is not supported (supported: true, false, \"never\")", s)
	}
	return nil
}

// eosIDs reads eos_token_id, one id or a list.
type eosIDs []int

func (e *eosIDs) UnmarshalJSON(raw []byte) error {
	var one int
	if err := json.Unmarshal(raw, &one); err == nil {
		*e = []int{one}
		return nil
	}
	return json.Unmarshal(raw, (*[]int)(e))
}

var whisperGenerationKeys = strictconfig.Tagged(strictconfig.Optional[WhisperGenerationConfig], map[string]configKey[WhisperGenerationConfig]{
	"eos_token_id": strictconfig.Optional(func(g *WhisperGenerationConfig) any { return (*eosIDs)(&g.EOSTokenIDs) }),
	// Timestamps, long-form and the task names (used only with a task
	// argument, which Generate does not take) do not change greedy
	// short-form decoding without timestamps.
	"_from_model_config": skipKey[WhisperGenerationConfig], "task_to_id": skipKey[WhisperGenerationConfig],
	"is_multilingual": skipKey[WhisperGenerationConfig], "alignment_heads": skipKey[WhisperGenerationConfig],
	"max_initial_timestamp_index": skipKey[WhisperGenerationConfig], "prev_sot_token_id": skipKey[WhisperGenerationConfig],
	"return_timestamps": only[WhisperGenerationConfig]("false"),
	"do_sample":         only[WhisperGenerationConfig]("false"),
	"early_stopping":    earlyStopping,
})

// loadWhisperGeneration reads d's generation_config.json, or falls back to
// what config.json held.
func loadWhisperGeneration(d modelfs.Dir, cfg WhisperConfig) (WhisperGenerationConfig, error) {
	path := d.Path("generation_config.json")
	data, err := d.ReadFile("generation_config.json")
	if errors.Is(err, fs.ErrNotExist) {
		return cfg.generation, nil
	}
	if err != nil {
		return WhisperGenerationConfig{}, fmt.Errorf("multimodal: %w", err)
	}
	g := cfg.generation
	// forced_decoder_ids of config.json serve only when the generation
	// config has none (transformers' _retrieve_init_tokens).
	g.ForcedDecoderIDs = nil
	if err := parseConfig("Whisper generation", data, &g, whisperGenerationKeys); err != nil {
		return WhisperGenerationConfig{}, fmt.Errorf("%w (in %s)", err, path)
	}
	if g.ForcedDecoderIDs == nil {
		g.ForcedDecoderIDs = cfg.generation.ForcedDecoderIDs
	}
	return g, nil
}
