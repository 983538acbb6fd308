package multimodal

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
)

// whisperTol is relative to the largest reference value, as visionTol.
const whisperTol = 1e-4

func (r *whisperRefs) check(t *testing.T, name string, got *core.Tensor) {
	t.Helper()
	e := reftest.RelMaxErr(t, got, r.Get(t, name, core.CPU))
	t.Logf("%s: relative error %.2g", name, e)
	require.Less(t, e, whisperTol, name)
}

var whisperDir = filepath.Join("testdata", "whisper_tiny")

func TestWhisperTokenizerDecode(t *testing.T) {
	r := loadWhisperRefs(t)
	tok, err := LoadTokenizer(filepath.Join("testdata", "whisper_bpe", "tokenizer.json"))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join("testdata", "tokenizer_refs.json"))
	require.NoError(t, err)
	var corpus struct {
		Corpus []string `json:"corpus"`
	}
	require.NoError(t, json.Unmarshal(data, &corpus))
	require.Greater(t, len(r.Decode), len(corpus.Corpus))
	for i, c := range r.Decode {
		if i < len(corpus.Corpus) {
			// The first cases are the corpus, encoded by the tokenizers library.
			enc, err := tok.Encode(corpus.Corpus[i], true)
			require.NoError(t, err)
			require.Equal(t, c.IDs, enc.IDs, "encode %q", corpus.Corpus[i])
		}
		got, err := tok.Decode(c.IDs, false)
		require.NoError(t, err)
		require.Equal(t, c.Text, got, "decode %v", c.IDs)
		got, err = tok.Decode(c.IDs, true)
		require.NoError(t, err)
		require.Equal(t, c.SkipSpecial, got, "decode %v skipping special tokens", c.IDs)
	}

	wp, err := LoadTokenizer(filepath.Join("testdata", "minilm_tokenizer", "tokenizer.json"))
	require.NoError(t, err)
	_, err = wp.Decode([]int{101, 102}, false)
	require.ErrorContains(t, err, `decoder "WordPiece" is not supported`)
}

func TestLossyUTF8(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a\xe6\x97b", "a\ufffdb"},             // a cut three-byte sequence: one replacement
		{"\xf0\x9f\x8d", "\ufffd"},             // a cut four-byte sequence
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"}, // a surrogate: ED's second byte must be below A0
		{"\xfc\x80x", "\ufffd\ufffdx"},
		{"ok \ufffd", "ok \ufffd"},
	} {
		require.Equal(t, c.want, lossyUTF8([]byte(c.in)), "%q", c.in)
	}
}

func checkWhisper(t *testing.T, dev core.Device) {
	r := loadWhisperRefs(t)
	m, err := LoadWhisperForConditionalGeneration(whisperDir, WithDevice(dev))
	require.NoError(t, err)

	// The extractor saved with the model, on the raw waveforms.
	fe, err := LoadWhisperFeatureExtractor(whisperDir)
	require.NoError(t, err)
	feats, err := fe.Extract([][]float32{r.wave(t, "whisper/wave_0"), r.wave(t, "whisper/wave_1")}, dev, false)
	require.NoError(t, err)
	e := maxAbsErr(t, feats, r.Get(t, "whisper/input_features", core.CPU))
	t.Logf("input features: max error %.2g", e)
	require.Less(t, e, featureTol)

	feats = r.Get(t, "whisper/input_features", dev)
	ids := r.Get(t, "whisper/decoder_input_ids", dev)
	out, err := m.Forward(feats, ids)
	require.NoError(t, err)
	r.check(t, "whisper/encoder_last_hidden_state", out.Encoder.LastHiddenState)
	r.check(t, "whisper/encoder_hidden_states_1", out.Encoder.HiddenStates[1])
	r.check(t, "whisper/decoder_hidden_states_1", out.Decoder.HiddenStates[1])
	r.check(t, "whisper/logits", out.Logits)

	// Decoding in pieces through the cache gives the same logits.
	enc, err := m.Model.Encode(feats)
	require.NoError(t, err)
	cache := m.Model.NewDecoderCache(enc.LastHiddenState)
	var parts []*core.Tensor
	for _, cut := range [][2]int{{0, 3}, {3, 4}, {4, 6}} {
		dec, err := m.Model.Decode(ids.Slice(core.Attrs{"axis": 1, "start": cut[0], "stop": cut[1]}), cache)
		require.NoError(t, err)
		parts = append(parts, m.proj.Forward(dec.LastHiddenState))
	}
	require.Equal(t, 6, cache.Len())
	r.check(t, "whisper/logits", core.Concat(parts, core.Attrs{"axis": 1}))

	g := r.Generate
	seqs, err := m.Generate(feats, GenerateOptions{MaxNewTokens: g.MaxNewTokens})
	require.NoError(t, err)
	t.Logf("generated %v (smallest top-2 logit gap in transformers: %.3g)", seqs, g.MinTop2Gap)
	require.Equal(t, g.Sequences, padRows(seqs, m.Generation.PadTokenID))
	tok, err := LoadTokenizer(filepath.Join(whisperDir, "tokenizer.json"))
	require.NoError(t, err)
	for i, s := range seqs {
		text, err := tok.Decode(s, true)
		require.NoError(t, err)
		require.Equal(t, g.Texts[i], text)
	}

	require.NotEmpty(t, r.GenerateBeam)
	for _, c := range r.GenerateBeam {
		m.Generation.LengthPenalty, m.Generation.EarlyStopping = 1, "false"
		if c.Settings.LengthPenalty != nil {
			m.Generation.LengthPenalty = *c.Settings.LengthPenalty
		}
		if c.Settings.EarlyStopping != nil {
			m.Generation.EarlyStopping = fmt.Sprint(c.Settings.EarlyStopping)
		}
		seqs, err := m.Generate(feats, GenerateOptions{MaxNewTokens: c.MaxNewTokens, NumBeams: c.NumBeams})
		require.NoError(t, err)
		t.Logf("%d beams, length penalty %g, early stopping %s: %v", c.NumBeams, m.Generation.LengthPenalty, m.Generation.EarlyStopping, seqs)
		require.Equal(t, c.Sequences, padRows(seqs, m.Generation.PadTokenID), "%d beams", c.NumBeams)
	}

	// A null language with lang_to_id: detected per row, then the prompt.
	d := r.GenerateDetect
	m.Generation.ForcedDecoderIDs, m.Generation.LangToID = d.ForcedDecoderIDs, d.LangToID
	detected, err := m.detectLanguage(enc.LastHiddenState, 2)
	require.NoError(t, err)
	require.Equal(t, d.Detected, detected)
	seqs, err = m.Generate(feats, GenerateOptions{MaxNewTokens: d.MaxNewTokens})
	require.NoError(t, err)
	require.Equal(t, d.Sequences, padRows(seqs, m.Generation.PadTokenID))
}

// padRows pads rows to the longest with pad, as transformers' Whisper
// generate returns them.
func padRows(rows [][]int, pad int) [][]int {
	n := 0
	for _, r := range rows {
		n = max(n, len(r))
	}
	out := make([][]int, len(rows))
	for i, r := range rows {
		out[i] = append(append([]int{}, r...), make([]int, n-len(r))...)
		for j := len(r); j < n; j++ {
			out[i][j] = pad
		}
	}
	return out
}

func TestWhisperMatchesTransformers(t *testing.T) { checkWhisper(t, core.CPU) }

func TestWhisperOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkWhisper(t, webgputest.Device)
}

// TestWhisperModelCheckpoint saves the checkpoint's WhisperModel part
// under WhisperModel's names and loads it with LoadWhisperModel.
func TestWhisperModelCheckpoint(t *testing.T) {
	r := loadWhisperRefs(t)
	full, err := LoadWhisperForConditionalGeneration(whisperDir)
	require.NoError(t, err)
	requireStateDictIsFile(t, full, filepath.Join(whisperDir, "model.safetensors"))

	// The base model's checkpoint: the full one's names without "model.".
	var base map[string]safetensors.Tensor
	dir := copyCheckpoint(t, whisperDir, nil, func(ts map[string]safetensors.Tensor) {
		for name, st := range maps.Clone(ts) {
			delete(ts, name)
			ts[strings.TrimPrefix(name, "model.")] = st
		}
		base = ts
	})
	m, err := LoadWhisperModel(dir)
	require.NoError(t, err)
	requireStateDictIsFile(t, m, filepath.Join(dir, "model.safetensors"))
	out, err := m.Forward(r.Get(t, "whisper/input_features", core.CPU), r.Get(t, "whisper/decoder_input_ids", core.CPU))
	require.NoError(t, err)
	r.check(t, "whisper/encoder_last_hidden_state", out.Encoder.LastHiddenState)

	// A missing and a misshaped tensor, both named.
	delete(base, "decoder.layers.1.encoder_attn.k_proj.weight")
	p := base["encoder.conv1.weight"]
	base["encoder.conv1.weight"] = safetensors.Tensor{DType: p.DType, Shape: core.Shape{32, 3, 80}, Data: p.Data}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), base, nil))
	_, err = LoadWhisperModel(dir)
	require.ErrorContains(t, err, "tensor decoder.layers.1.encoder_attn.k_proj.weight is missing (want shape [32 32])")
	require.ErrorContains(t, err, "tensor encoder.conv1.weight has shape [32 3 80], want [32 80 3]")
}

func TestWhisperErrors(t *testing.T) {
	_, err := ParseWhisperConfig([]byte(`{"model_type": "whisper", "scale_embedding": true}`))
	require.ErrorContains(t, err, `key "scale_embedding": value true is not supported`)
	_, err = ParseWhisperConfig([]byte(`{"model_type": "whisper", "d_model": 30, "encoder_attention_heads": 4}`))
	require.ErrorContains(t, err, "d_model 30 is not a multiple of encoder_attention_heads 4")
	_, err = ParseWhisperConfig([]byte(`{"model_type": "whisper", "rope_theta": 1}`))
	require.ErrorContains(t, err, `Whisper config: unknown key "rope_theta"`)

	m, err := LoadWhisperForConditionalGeneration(whisperDir)
	require.NoError(t, err)
	_, err = m.Model.Encode(core.Zeros(core.Shape{1, 80, 3000}, core.F32))
	require.ErrorContains(t, err, "features have shape [1 80 3000], want (batch, 80, 100)")
	feats := core.Zeros(core.Shape{1, 80, 100}, core.F32)
	_, err = m.Generate(feats, GenerateOptions{MaxNewTokens: 37})
	require.ErrorContains(t, err, "the prompt's 4 ids and MaxNewTokens 37 exceed max_target_positions 40")

	m.Generation.ForcedDecoderIDs = [][2]*int{{ptr(1), ptr(602)}, {ptr(3), ptr(605)}}
	_, err = m.Generate(feats, GenerateOptions{MaxNewTokens: 2})
	require.ErrorContains(t, err, "forced_decoder_ids [[1, 602], [3, 605]] do not give every position")

	enc, err := m.Model.Encode(feats)
	require.NoError(t, err)
	cache := m.Model.NewDecoderCache(enc.LastHiddenState)
	_, err = m.Model.Decode(core.FromSlice(make([]int64, 41), core.Shape{1, 41}), cache)
	require.ErrorContains(t, err, "0 cached and 41 new ids exceed max_target_positions 40")
}

func ptr(v int) *int { return &v }

// TestWhisperGenerationConfig checks the prompt transformers builds from
// each kind of generation config.
func TestWhisperGenerationConfig(t *testing.T) {
	m, err := LoadWhisperForConditionalGeneration(whisperDir)
	require.NoError(t, err)
	require.Equal(t, 601, m.Generation.DecoderStartTokenID)
	require.Equal(t, []int{600}, m.Generation.EOSTokenIDs)
	prompts, err := m.prompts(nil, 2)
	require.NoError(t, err)
	require.Equal(t, [][]int{{601, 602, 605, 609}, {601, 602, 605, 609}}, prompts)

	// Without a generation_config.json, config.json's settings serve.
	dir := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors"} {
		data, err := os.ReadFile(filepath.Join(whisperDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	m2, err := LoadWhisperForConditionalGeneration(dir)
	require.NoError(t, err)
	require.Equal(t, []int{606, 607, 5, 17, 33}, m2.Generation.SuppressTokens)
	require.Nil(t, m2.Generation.NoTimestampsTokenID)
	prompts, err = m2.prompts(nil, 1)
	require.NoError(t, err)
	require.Equal(t, [][]int{{601}}, prompts)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"num_beams": 5, "early_stopping": "never"}`), 0o644))
	m2, err = LoadWhisperForConditionalGeneration(dir)
	require.NoError(t, err)
	require.Equal(t, 5, m2.Generation.NumBeams)
	require.Equal(t, "never", m2.Generation.EarlyStopping)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"early_stopping": "sometimes"}`), 0o644))
	_, err = LoadWhisperForConditionalGeneration(dir)
	require.ErrorContains(t, err, `key "early_stopping": value "sometimes" is not supported`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"return_timestamps": true}`), 0o644))
	_, err = LoadWhisperForConditionalGeneration(dir)
	require.ErrorContains(t, err, fmt.Sprintf(`key "return_timestamps": value true is not supported (supported: false) (in %s)`, filepath.Join(dir, "generation_config.json")))
}
