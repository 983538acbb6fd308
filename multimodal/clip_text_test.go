package multimodal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// The standalone text models are checked against the CLIPModel references
// (testdata/make_refs.py): a CLIPTextModel or CLIPTextModelWithProjection
// holding clip_tiny's text tower computes what that tower computed in
// transformers. The folders are cut from clip_tiny here as
// save_pretrained lays them out (text_config at the top level, the
// tower's tensors, text_projection for the projection model), with the
// text_model. prefix as transformers 4 saved a CLIPTextModel (and every
// version a CLIPTextModelWithProjection) or bare as transformers 5 saves
// a CLIPTextModel; a real transformers 5 save_pretrained CLIPTextModel is
// diffuse's testdata/sd_tiny/text_encoder.

// textFolder writes clip_tiny's text tower as a standalone checkpoint
// (with text_projection when proj, without the text_model. prefix when
// bare), returning the folder.
func textFolder(t *testing.T, proj, bare bool) string {
	t.Helper()
	src := filepath.Join("testdata", "clip_tiny")
	raw, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	var full struct {
		ProjectionDim int                        `json:"projection_dim"`
		Text          map[string]json.RawMessage `json:"text_config"`
	}
	require.NoError(t, json.Unmarshal(raw, &full))
	cfg := full.Text
	cfg["projection_dim"] = json.RawMessage(fmt.Sprint(full.ProjectionDim))
	arch := `["CLIPTextModel"]`
	if proj {
		arch = `["CLIPTextModelWithProjection"]`
	}
	cfg["architectures"] = json.RawMessage(arch)
	out, err := json.Marshal(cfg)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), out, 0o644))
	f, err := safetensors.ReadFile(filepath.Join(src, "model.safetensors"))
	require.NoError(t, err)
	keep := map[string]safetensors.Tensor{}
	for name, st := range f.Tensors {
		switch {
		case bare && strings.HasPrefix(name, "text_model."):
			keep[strings.TrimPrefix(name, "text_model.")] = st
		case strings.HasPrefix(name, "text_model.") || (proj && name == "text_projection.weight"):
			keep[name] = st
		}
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), keep, f.Metadata))
	return dir
}

func checkCLIPTextModel(t *testing.T, dev core.Device) {
	r := loadVisionRefs(t)
	ids, mask := r.Get(t, "clip/input_ids", dev), r.Get(t, "clip/attention_mask", dev)
	for _, bare := range []bool{false, true} {
		m, err := LoadCLIPTextModel(textFolder(t, false, bare), WithDevice(dev))
		require.NoError(t, err)
		require.Equal(t, 32, m.Config.HiddenSize)
		out, err := m.EncodeText(ids, mask)
		require.NoError(t, err)
		require.Nil(t, out.TextEmbeds)
		r.check(t, "clip/text_last_hidden_state", out.LastHiddenState)
		r.check(t, "clip/text_pooler_output", out.PoolerOutput)
	}

	p, err := LoadCLIPTextModelWithProjection(textFolder(t, true, false), WithDevice(dev))
	require.NoError(t, err)
	out, err := p.EncodeText(ids, mask)
	require.NoError(t, err)
	r.check(t, "clip/text_pooler_output", out.PoolerOutput)
	r.check(t, "clip/text_features", out.TextEmbeds)
}

func TestCLIPTextModelMatchesTransformers(t *testing.T) { checkCLIPTextModel(t, core.CPU) }

func TestCLIPTextModelOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkCLIPTextModel(t, webgputest.Device)
}

func TestCLIPTextModelStateDictAndErrors(t *testing.T) {
	dir := textFolder(t, true, false)
	p, err := LoadCLIPTextModelWithProjection(dir)
	require.NoError(t, err)
	requireStateDictIsFile(t, p, filepath.Join(dir, "model.safetensors"))
	for _, bare := range []bool{false, true} {
		d := textFolder(t, false, bare)
		m, err := LoadCLIPTextModel(d)
		require.NoError(t, err)
		requireStateDictIsFile(t, m, filepath.Join(d, "model.safetensors"))
	}
	// The projection model's tower is always under text_model.
	_, err = LoadCLIPTextModelWithProjection(textFolder(t, true, true))
	require.ErrorContains(t, err, "tensor text_model.final_layer_norm.weight is missing")
	// The plain model refuses the projection it does not have, and the
	// projection model needs it.
	_, err = LoadCLIPTextModel(dir)
	require.ErrorContains(t, err, "tensor text_projection.weight is not a parameter of the model")
	_, err = LoadCLIPTextModelWithProjection(textFolder(t, false, false))
	require.ErrorContains(t, err, "tensor text_projection.weight is missing (want shape [16 32])")

	_, err = ParseCLIPTextModelConfig([]byte(`{"model_type": "clip"}`))
	require.ErrorContains(t, err, `CLIP text config: key "model_type": value "clip" is not supported`)
	_, err = ParseCLIPTextModelConfig([]byte(`{"model_type": "clip_text_model", "hidden_size": 30}`))
	require.ErrorContains(t, err, "hidden_size 30 is not a multiple of num_attention_heads 8")
	_, err = ParseCLIPTextModelConfig([]byte(`{"hidden_act": "mish"}`))
	require.ErrorContains(t, err, `CLIP text config: key "hidden_act": "mish" is not supported`)
	_, err = ParseCLIPTextModelConfig([]byte(`{"projection_dim": 0}`))
	require.ErrorContains(t, err, "projection_dim is 0, must be >= 1")
	c, err := ParseCLIPTextModelConfig([]byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, CLIPTextModelConfig{CLIPTextConfig: clipTextDefaults(), ProjectionDim: 512}, c)
}

// sd1TokenizerConfig is Stable Diffusion v1's tokenizer_config.json: the
// special tokens as AddedToken objects, <|startoftext|> normalized; the
// pad token, a plain string, is <|endoftext|>, which transformers then
// matches in the raw text.
const sd1TokenizerConfig = `{"add_prefix_space": false, "do_lower_case": true, "errors": "replace",
 "model_max_length": 77, "pad_token": "<|endoftext|>", "tokenizer_class": "CLIPTokenizer",
 "bos_token": {"__type": "AddedToken", "content": "<|startoftext|>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
 "eos_token": {"__type": "AddedToken", "content": "<|endoftext|>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
 "unk_token": {"__type": "AddedToken", "content": "<|endoftext|>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false}}`

// vocabFolder writes clip_bpe's vocabulary and merges as vocab.json and
// merges.txt with SD v1's tokenizer_config.json.
func vocabFolder(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "clip_bpe", "tokenizer.json"))
	require.NoError(t, err)
	var f struct {
		Model struct {
			Vocab  json.RawMessage `json:"vocab"`
			Merges [][2]string     `json:"merges"`
		} `json:"model"`
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vocab.json"), f.Model.Vocab, 0o644))
	var merges strings.Builder
	merges.WriteString("#version: 0.2\n")
	for _, m := range f.Model.Merges {
		merges.WriteString(m[0] + " " + m[1] + "\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "merges.txt"), []byte(merges.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(sd1TokenizerConfig), 0o644))
	return dir
}

// clip_bpe was made as CLIPTokenizer lays a tokenizer out, with
// <|startoftext|> normalized and <|endoftext|> not, as SD v1's config
// makes them; padded and truncated to 77, the tokenizer built from its
// vocab.json and merges.txt gives the tokenizers library's ids for it.
func TestCLIPTokenizerFromVocabAndMerges(t *testing.T) {
	r := loadTokenizerRefs(t)
	tok, cfg, err := LoadCLIPTokenizer(vocabFolder(t))
	require.NoError(t, err)
	require.Equal(t, 77, cfg.ModelMaxLength)
	require.Equal(t, SpecialToken{Content: "<|startoftext|>", Normalized: true}, cfg.BOSToken)
	tok, err = cfg.MaxLengthPadded(tok, cfg.ModelMaxLength)
	require.NoError(t, err)
	var c *tokenizerRefCase
	for i := range r.Tokenizers["clip_bpe"] {
		if r.Tokenizers["clip_bpe"][i].Name == "file_settings" {
			c = &r.Tokenizers["clip_bpe"][i]
		}
	}
	require.NotNil(t, c, "clip_bpe's file_settings case (truncation and padding to 77)")
	for i, k := range c.Inputs {
		got, err := tok.Encode(r.Corpus[k], true)
		require.NoError(t, err)
		require.Equal(t, c.Expect[i].IDs, got.IDs, "ids of %s", abbreviate(r, *c, i))
		require.Equal(t, c.Expect[i].AttentionMask, got.AttentionMask, "attention mask of %s", abbreviate(r, *c, i))
	}
}

func TestCLIPTokenizerConfigAndErrors(t *testing.T) {
	c, err := ParseTokenizerConfig([]byte(`{"model_max_length": 1000000000000000019884624838656, "pad_token": "!", "padding_side": "left"}`))
	require.NoError(t, err)
	require.Equal(t, 0, c.ModelMaxLength, "transformers' 'no limit' integer")
	require.Equal(t, SpecialToken{Content: "!"}, c.PadToken)
	require.Equal(t, "left", c.PaddingSide)
	require.Equal(t, "<|endoftext|>", c.EOSToken.Content, "CLIPTokenizer's default")
	_, err = ParseTokenizerConfig([]byte(`{"pad_token": 3}`))
	require.ErrorContains(t, err, `key "pad_token" is 3, want a string or an AddedToken object`)
	_, err = ParseTokenizerConfig([]byte(`{"truncation_side": "middle"}`))
	require.ErrorContains(t, err, `truncation_side is "middle", want "right" or "left"`)
	_, err = ParseTokenizerConfig([]byte(`{"model_max_length": -1}`))
	require.ErrorContains(t, err, "model_max_length is -1, want a positive integer")

	dir := vocabFolder(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(`{"bos_token": "<s>"}`), 0o644))
	_, _, err = LoadCLIPTokenizer(dir)
	require.ErrorContains(t, err, `bos_token "<s>" is not in`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\na b c\n"), 0o644))
	_, _, err = LoadCLIPTokenizer(dir)
	require.ErrorContains(t, err, `merges.txt line 2 is "a b c", want two tokens separated by one space`)
	_, _, err = LoadCLIPTokenizer(t.TempDir())
	require.ErrorContains(t, err, "has neither tokenizer.json nor vocab.json and merges.txt")

	// A tokenizer.json wins over vocab.json and merges.txt.
	tok, cfg, err := LoadCLIPTokenizer(filepath.Join("testdata", "clip_tiny"))
	require.NoError(t, err)
	require.Equal(t, 1077, tok.VocabSize())
	require.Equal(t, clipTokenizerDefaults(), cfg)
	cfg.PadToken = SpecialToken{Content: "<pad>"}
	_, err = cfg.MaxLengthPadded(tok, 77)
	require.ErrorContains(t, err, `pad token "<pad>" is not in the tokenizer's vocabulary`)
}
