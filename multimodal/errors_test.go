package multimodal

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

const tinyBertConfig = `{"architectures": ["BertModel"], "model_type": "bert", "vocab_size": 11, "hidden_size": 8,
 "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu",
 "max_position_embeddings": 6, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
 "position_embedding_type": "absolute", "hidden_dropout_prob": 0.1, "transformers_version": "5.23.0"}`

// tinyBertShapes are the tensors of tinyBertConfig's BertModel.
func tinyBertShapes() map[string]core.Shape {
	s := map[string]core.Shape{
		"embeddings.word_embeddings.weight":       {11, 8},
		"embeddings.position_embeddings.weight":   {6, 8},
		"embeddings.token_type_embeddings.weight": {2, 8},
		"embeddings.LayerNorm.weight":             {8}, "embeddings.LayerNorm.bias": {8},
		"pooler.dense.weight": {8, 8}, "pooler.dense.bias": {8},
	}
	p := "encoder.layer.0."
	for _, n := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"} {
		s[p+n+".weight"], s[p+n+".bias"] = core.Shape{8, 8}, core.Shape{8}
	}
	s[p+"intermediate.dense.weight"], s[p+"intermediate.dense.bias"] = core.Shape{16, 8}, core.Shape{16}
	s[p+"output.dense.weight"], s[p+"output.dense.bias"] = core.Shape{8, 16}, core.Shape{8}
	for _, n := range []string{"attention.output.LayerNorm", "output.LayerNorm"} {
		s[p+n+".weight"], s[p+n+".bias"] = core.Shape{8}, core.Shape{8}
	}
	return s
}

// tinyBert writes a BertModel folder with tinyBertConfig (edited by
// editConfig) and small deterministic weights (edited by edit).
func tinyBert(t *testing.T, editConfig func(string) string, edit func(map[string]safetensors.Tensor)) string {
	t.Helper()
	dir := t.TempDir()
	cfg := tinyBertConfig
	if editConfig != nil {
		cfg = editConfig(cfg)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644))
	tensors := map[string]safetensors.Tensor{}
	for name, shape := range tinyBertShapes() {
		vals := make([]float32, shape.Numel())
		for i := range vals {
			vals[i] = float32((i*7+len(name))%13-6) / 20
		}
		st, err := safetensors.FromTensor(core.FromSlice(vals, shape))
		require.NoError(t, err)
		tensors[name] = st
	}
	if edit != nil {
		edit(tensors)
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, map[string]string{"format": "pt"}))
	return dir
}

func TestBertStateDictIsTheCheckpoint(t *testing.T) {
	m, err := LoadBertModel(tinyBert(t, nil, nil))
	require.NoError(t, err)
	var got, want []string
	for _, s := range m.StateDict() {
		got = append(got, s.Name)
	}
	for name := range tinyBertShapes() {
		want = append(want, name)
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)

	ids := core.FromSlice([]int64{1, 5, 9, 0, 2, 3, 0, 0}, core.Shape{2, 4})
	out, err := m.Forward(BertInput{IDs: ids, AttentionMask: core.FromSlice([]int64{1, 1, 1, 0, 1, 1, 0, 0}, core.Shape{2, 4})})
	require.NoError(t, err)
	require.Equal(t, core.Shape{2, 4, 8}, out.LastHiddenState.Shape())
	require.Equal(t, core.Shape{2, 8}, out.PoolerOutput.Shape())
}

func TestLoadBertCheckpointErrors(t *testing.T) {
	dir := tinyBert(t, nil, func(m map[string]safetensors.Tensor) { delete(m, "encoder.layer.0.attention.self.key.weight") })
	_, err := LoadBertModel(dir)
	require.ErrorContains(t, err, "tensor encoder.layer.0.attention.self.key.weight is missing (want shape [8 8])")

	dir = tinyBert(t, nil, func(m map[string]safetensors.Tensor) {
		w := m["encoder.layer.0.intermediate.dense.weight"]
		m["encoder.layer.0.intermediate.dense.weight"] = safetensors.Tensor{DType: w.DType, Shape: core.Shape{8, 16}, Data: w.Data}
	})
	_, err = LoadBertModel(dir)
	require.ErrorContains(t, err, "tensor encoder.layer.0.intermediate.dense.weight has shape [8 16], want [16 8]")

	dir = tinyBert(t, nil, func(m map[string]safetensors.Tensor) { m["cls.predictions.bias"] = m["pooler.dense.bias"] })
	_, err = LoadBertModel(dir)
	require.ErrorContains(t, err, "tensor cls.predictions.bias is not a parameter of the model")

	// A config that disagrees with the weights: every misfit is listed.
	dir = tinyBert(t, func(s string) string {
		return strings.Replace(s, `"num_hidden_layers": 1`, `"num_hidden_layers": 2`, 1)
	}, nil)
	_, err = LoadBertModel(dir)
	require.ErrorContains(t, err, "16 problem(s)")
	require.ErrorContains(t, err, "tensor encoder.layer.1.output.LayerNorm.bias is missing")
}

func TestBertConfigErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`"model_type": "bert"`, `"model_type": "roberta"`, `key "model_type": value "roberta" is not supported (supported: "bert")`},
		{`"position_embedding_type": "absolute"`, `"position_embedding_type": "relative_key"`, `key "position_embedding_type": value "relative_key" is not supported`},
		{`"hidden_act": "gelu"`, `"hidden_act": "mish"`, `key "hidden_act": "mish" is not supported`},
		{`"num_attention_heads": 2`, `"num_attention_heads": 3`, "hidden_size 8 is not a multiple of num_attention_heads 3"},
		{`"pad_token_id": 0`, `"pad_token_id": 0, "is_decoder": true`, `key "is_decoder": value true is not supported`},
		{`"pad_token_id": 0`, `"pad_token_id": 0, "rotary_dim": 4`, `unknown key "rotary_dim"`},
		{`"hidden_size": 8`, `"hidden_size": 0`, "hidden_size is 0, must be >= 1"},
		{`"vocab_size": 11`, `"vocab_size": null`, `key "vocab_size": value null is not supported`},
	} {
		_, err := ParseBertConfig([]byte(strings.Replace(tinyBertConfig, c.from, c.to, 1)))
		require.ErrorContains(t, err, c.want, c.to)
	}
}

func TestBertForwardInputErrors(t *testing.T) {
	m, err := LoadBertModel(tinyBert(t, nil, nil))
	require.NoError(t, err)
	ids := core.FromSlice([]int64{1, 2, 3, 4, 5, 6, 7}, core.Shape{1, 7})
	_, err = m.Forward(BertInput{IDs: ids})
	require.ErrorContains(t, err, "sequence length 7 is longer than max_position_embeddings 6")
	_, err = m.Forward(BertInput{IDs: core.FromSlice([]int64{1, 2}, core.Shape{2})})
	require.ErrorContains(t, err, "IDs have shape [2], want (batch, sequence)")
	_, err = m.Forward(BertInput{IDs: core.FromSlice([]int64{1, 2}, core.Shape{1, 2}), AttentionMask: core.FromSlice([]float32{1, 1}, core.Shape{1, 2})})
	require.ErrorContains(t, err, "AttentionMask has dtype f32, want an integer dtype")
	_, err = m.Forward(BertInput{IDs: core.FromSlice([]int64{1, 2}, core.Shape{1, 2}), TypeIDs: core.FromSlice([]int64{0}, core.Shape{1, 1})})
	require.ErrorContains(t, err, "TypeIDs has shape [1 1], IDs [1 2]")
}

func TestSentenceEncoderModuleErrors(t *testing.T) {
	dir := tinyBert(t, nil, nil)
	write := func(name, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	mods := func(types ...string) string {
		var s []string
		for i, typ := range types {
			s = append(s, fmt.Sprintf(`{"idx": %d, "name": "%d", "path": "%s", "type": "sentence_transformers.models.%s"}`,
				i, i, map[bool]string{true: "1_Pooling", false: ""}[typ == "Pooling"], typ))
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	write("sentence_bert_config.json", `{"max_seq_length": 6, "do_lower_case": false}`)
	write("1_Pooling/config.json", `{"word_embedding_dimension": 8, "pooling_mode_mean_tokens": true}`)
	minilm, err := os.ReadFile(filepath.Join("testdata", "minilm_tokenizer", "tokenizer.json"))
	require.NoError(t, err)
	write("tokenizer.json", string(minilm))
	write("modules.json", mods("Transformer", "Pooling"))
	_, err = LoadSentenceEncoder(dir)
	require.ErrorContains(t, err, "tokenizer.json has 30522 tokens, more than the model's vocab_size 11")

	write("tokenizer.json", `{"version": "1.0", "added_tokens": [], "normalizer": {"type": "BertNormalizer", "lowercase": true},
	 "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
	 "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4,
	 "world": 5, "a": 6, "much": 7, "long": 8, "##er": 9, "sentence": 10}}}`)
	write("modules.json", mods("Transformer", "Pooling", "Dense"))
	_, err = LoadSentenceEncoder(dir)
	require.ErrorContains(t, err, "module 2 is sentence_transformers.models.Dense")

	write("modules.json", mods("Transformer", "Pooling", "Normalize"))
	e, err := LoadSentenceEncoder(dir)
	require.NoError(t, err)
	emb, err := e.Encode([]string{"hello world", "a much longer sentence that is truncated"}, 1)
	require.NoError(t, err)
	require.Equal(t, core.Shape{2, 8}, emb.Shape())

	write("1_Pooling/config.json", `{"word_embedding_dimension": 8, "pooling_mode_lasttoken": true}`)
	_, err = LoadSentenceEncoder(dir)
	require.ErrorContains(t, err, "pooling modes weightedmean and lasttoken are not supported")
	write("1_Pooling/config.json", `{"word_embedding_dimension": 8, "pooling_mode_mean_tokens": true, "pooling_mode_magic": true}`)
	_, err = LoadSentenceEncoder(dir)
	require.ErrorContains(t, err, `unknown field "pooling_mode_magic"`)
	write("1_Pooling/config.json", `{"word_embedding_dimension": 16, "pooling_mode_mean_tokens": true}`)
	_, err = LoadSentenceEncoder(dir)
	require.ErrorContains(t, err, "pooling word_embedding_dimension 16 differs from the model's hidden_size 8")
}

func TestTokenizerErrors(t *testing.T) {
	base := `{"version": "1.0", "added_tokens": [], "normalizer": %s, "pre_tokenizer": %s, "post_processor": null,
	 "model": %s}`
	wp := `{"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1, "b": 2, "ab": 3, "##a": 4}}`
	for _, c := range []struct{ norm, pre, model, want string }{
		{`{"type": "Precompiled", "precompiled_charsmap": ""}`, "null", wp, `normalizer: normalizer type "Precompiled" is not supported`},
		{"null", `{"type": "Metaspace", "replacement": "▁"}`, wp, `pre-tokenizer type "Metaspace" is not supported`},
		{"null", `{"type": "Split", "pattern": {"Regex": "\\s+(?!\\S)"}, "behavior": "Isolated", "invert": false}`, wp,
			`regex "\\s+(?!\\S)" is not supported by Go's regexp`},
		{"null", "null", `{"type": "Unigram", "vocab": []}`, `model type "Unigram" is not supported`},
		{"null", "null", `{"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"a": 1}}`, `unk_token "[UNK]" is not in the vocab`},
		{"null", "null", `{"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []}`, "dropout 0.1 is not supported"},
		{"null", "null", `{"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}`, `merges[0] "a" + "b": a token of the merge or its result "ab" is not in the vocab`},
	} {
		_, err := ParseTokenizer([]byte(fmt.Sprintf(base, c.norm, c.pre, c.model)))
		require.ErrorContains(t, err, c.want)
	}

	tok, err := ParseTokenizer([]byte(fmt.Sprintf(base, "null", `{"type": "WhitespaceSplit"}`, wp)))
	require.NoError(t, err)
	e, err := tok.Encode("ab ba abc", false)
	require.NoError(t, err)
	require.Equal(t, []int{3, 2, 4, 0}, e.IDs) // "abc" has no piece for c: the whole word is [UNK]
	_, err = tok.WithTruncation(Truncation{MaxLength: 4, Strategy: "Middle"})
	require.ErrorContains(t, err, `truncation strategy "Middle" is not LongestFirst, OnlyFirst or OnlySecond`)
	_, err = tok.WithPadding(Padding{Direction: "Up"})
	require.ErrorContains(t, err, `padding direction "Up" is not Right or Left`)
	one, err := tok.WithTruncation(Truncation{MaxLength: 1, Strategy: "OnlySecond"})
	require.NoError(t, err)
	_, err = one.Encode("ab ba", false)
	require.ErrorContains(t, err, "truncation strategy OnlySecond needs a pair of texts")
	_, err = one.EncodePair("ab ba", "a", false)
	require.ErrorContains(t, err, "the second sequence (1 tokens) is too short to remove 3")
}

// The pooling modes against the same arithmetic on the host: CLS is the
// first state, max ignores padding, mean and mean-sqrt-len divide the
// masked sum by the count or its root.
func TestPoolingModes(t *testing.T) {
	m, err := LoadBertModel(tinyBert(t, nil, nil))
	require.NoError(t, err)
	ids := core.FromSlice([]int64{2, 4, 5, 3, 2, 6, 3, 0}, core.Shape{2, 4})
	mask := core.FromSlice([]int64{1, 1, 1, 1, 1, 1, 1, 0}, core.Shape{2, 4})
	out, err := m.Forward(BertInput{IDs: ids, AttentionMask: mask})
	require.NoError(t, err)
	h, err := out.LastHiddenState.Float64s()
	require.NoError(t, err)
	e := &SentenceEncoder{Model: m, Pooling: PoolingConfig{Dim: 8, CLSToken: true, MaxTokens: true, MeanTokens: true, MeanSqrtLen: true}}
	got, err := e.pool(out.LastHiddenState, mask).Float64s()
	require.NoError(t, err)
	require.Len(t, got, 2*4*8)
	for b, n := range []int{4, 3} {
		for d := range 8 {
			at := func(s int) float64 { return h[(b*4+s)*8+d] }
			maxV, sum := math.Inf(-1), 0.0
			for s := range n {
				maxV, sum = math.Max(maxV, at(s)), sum+at(s)
			}
			row := got[b*32 : (b+1)*32]
			require.InDelta(t, at(0), row[d], 1e-6, "cls")
			require.InDelta(t, maxV, row[8+d], 1e-6, "max")
			require.InDelta(t, sum/float64(n), row[16+d], 1e-6, "mean")
			require.InDelta(t, sum/math.Sqrt(float64(n)), row[24+d], 1e-6, "mean_sqrt_len")
		}
	}
}
