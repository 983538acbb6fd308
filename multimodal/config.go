package multimodal

import (
	"fmt"
	"slices"
	"sort"

	"github.com/webtensor/webtensor/internal/strictconfig"
)

// configKey reads one config.json key into a config of type C
// (internal/strictconfig, shared with diffuse).
type configKey[C any] = strictconfig.Key[C]

// field reads a key into the field p points at; null is refused.
func field[C any](p func(*C) any) configKey[C] { return strictconfig.Field(p) }

// taggedKeys reads C's fields by their json tags (null refused), with the
// keys extra gives their own rules.
func taggedKeys[C any](extra map[string]configKey[C]) map[string]configKey[C] {
	return strictconfig.Tagged(strictconfig.Field[C], extra)
}

// only accepts a key at the values webtensor implements (JSON literals).
func only[C any](want ...string) configKey[C] { return strictconfig.Only[C](want...) }

// genericKeys are transformers' PretrainedConfig keys that do not change
// what an encoder computes in inference (training switches, generation
// defaults, label names, bookkeeping); every model config accepts them.
var genericKeys = []string{
	"_name_or_path", "architectures", "transformers_version", "torch_dtype", "dtype", "use_cache",
	"gradient_checkpointing", "initializer_range", "initializer_factor", "id2label", "label2id", "num_labels",
	"problem_type", "finetuning_task", "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id",
	"decoder_start_token_id", "tie_word_embeddings", "output_hidden_states", "output_attentions",
	"return_dict", "torchscript", "pruned_heads", "chunk_size_feed_forward", "tokenizer_class", "prefix",
	"task_specific_params", "classifier_dropout", "attn_implementation", "_attn_implementation_autoset",
	"attention_probs_dropout_prob", "hidden_dropout_prob", "max_length", "min_length", "do_sample",
	"early_stopping", "num_beams", "temperature", "top_k", "top_p", "repetition_penalty", "length_penalty",
	"no_repeat_ngram_size", "bad_words_ids", "num_return_sequences", "output_scores",
	"return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id", "remove_invalid_values",
	"tf_legacy_loss", "use_bfloat16", "cross_attention_hidden_size", "encoder_no_repeat_ngram_size",
	"typical_p", "diversity_penalty", "num_beam_groups", "exponential_decay_length_penalty",
	"suppress_tokens", "begin_suppress_tokens",
}

// parseConfig reads a config.json with the given keys (and genericKeys);
// an unknown key, or a value of a known one webtensor does not implement,
// fails naming the key.
func parseConfig[C any](what string, data []byte, c *C, keys map[string]configKey[C]) error {
	if err := strictconfig.Parse(data, c, keys, isGenericKey); err != nil {
		return fmt.Errorf("multimodal: %s config: %w", what, err)
	}
	return nil
}

// isGenericKey reports whether k is one of genericKeys.
func isGenericKey(k string) bool { return slices.Contains(genericKeys, k) }

// positive checks that named sizes are at least 1.
func positive(what string, sizes map[string]int) error {
	names := make([]string, 0, len(sizes))
	for k := range sizes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if sizes[k] < 1 {
			return fmt.Errorf("multimodal: %s config: %s is %d, must be >= 1", what, k, sizes[k])
		}
	}
	return nil
}

// BertConfig holds a BERT encoder's options, spelled as transformers'
// config.json spells them.
type BertConfig struct {
	VocabSize             int     `json:"vocab_size"`
	HiddenSize            int     `json:"hidden_size"`
	NumHiddenLayers       int     `json:"num_hidden_layers"`
	NumAttentionHeads     int     `json:"num_attention_heads"`
	IntermediateSize      int     `json:"intermediate_size"`
	HiddenAct             string  `json:"hidden_act"` // see activationNames
	MaxPositionEmbeddings int     `json:"max_position_embeddings"`
	TypeVocabSize         int     `json:"type_vocab_size"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
}

// bertDefaults are BertConfig's __init__ defaults (bert-base-uncased).
func bertDefaults() BertConfig {
	return BertConfig{VocabSize: 30522, HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12,
		IntermediateSize: 3072, HiddenAct: "gelu", MaxPositionEmbeddings: 512, TypeVocabSize: 2, LayerNormEps: 1e-12}
}

var bertKeys = taggedKeys(map[string]configKey[BertConfig]{
	"model_type": only[BertConfig](`"bert"`),
	// Relative position embeddings, a decoder's causal mask and
	// cross-attention change the computation and are not implemented.
	"position_embedding_type": only[BertConfig](`"absolute"`),
	"is_decoder":              only[BertConfig]("false"),
	"add_cross_attention":     only[BertConfig]("false"),
	"is_encoder_decoder":      only[BertConfig]("false"),
})

// ParseBertConfig reads a BERT config.json. A key webtensor does not know,
// or a value it does not implement (relative positions, a decoder, another
// activation), fails naming the key.
func ParseBertConfig(data []byte) (BertConfig, error) {
	c := bertDefaults()
	if err := parseConfig("BERT", data, &c, bertKeys); err != nil {
		return BertConfig{}, err
	}
	if err := positive("BERT", map[string]int{"vocab_size": c.VocabSize, "hidden_size": c.HiddenSize,
		"num_hidden_layers": c.NumHiddenLayers, "num_attention_heads": c.NumAttentionHeads,
		"intermediate_size": c.IntermediateSize, "max_position_embeddings": c.MaxPositionEmbeddings,
		"type_vocab_size": c.TypeVocabSize}); err != nil {
		return BertConfig{}, err
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		return BertConfig{}, fmt.Errorf("multimodal: BERT config: hidden_size %d is not a multiple of num_attention_heads %d",
			c.HiddenSize, c.NumAttentionHeads)
	}
	if !activations[c.HiddenAct] {
		return BertConfig{}, fmt.Errorf("multimodal: BERT config: key \"hidden_act\": %q is not supported (supported: %s)", c.HiddenAct, activationNames)
	}
	return c, nil
}
