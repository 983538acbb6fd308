package abi

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// TestSpeechT5Generate synthesises the references' batch through the ABI:
// tokenize, generate with the vocoder, the lengths and the vocoder alone.
func TestSpeechT5Generate(t *testing.T) {
	var meta struct {
		Texts    []string `json:"texts"`
		Generate []struct {
			Name        string  `json:"name"`
			Threshold   float64 `json:"threshold"`
			MinLenRatio float64 `json:"minlenratio"`
			MaxLenRatio float64 `json:"maxlenratio"`
			Lengths     []int   `json:"lengths"`
		} `json:"generate"`
	}
	refs := mmRefs(t, "speecht5_refs", &meta)
	f, err := safetensors.ReadFile(refs)
	require.NoError(t, err)
	want := func(name string) []float64 {
		v, err := f.Tensors[name].ToTensor(core.CPU).Float64s()
		require.NoError(t, err)
		return v
	}

	m, err := speechT5Load(filepath.Join(mmTestdata, "speecht5_tiny"), filepath.Join(mmTestdata, "speecht5_hifigan_tiny"), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, speechT5Free(m)) }()
	rate, err := speechT5SamplingRate(m)
	require.NoError(t, err)
	assert.Equal(t, 16000, rate)
	ids, mask, err := speechT5Tokenize(m, meta.Texts, true)
	require.NoError(t, err)
	defer func() { _ = TensorFree(ids); _ = TensorFree(mask) }()
	c := meta.Generate[1]
	require.Equal(t, "batch", c.Name)
	spec, lengths, wave, err := speechT5Generate(m, ids, mask, refHandle(t, refs, "speaker_embeddings"),
		SpeechOptions{Threshold: c.Threshold, MinLenRatio: c.MinLenRatio, MaxLenRatio: c.MaxLenRatio}, true)
	require.NoError(t, err)
	got, _ := hostValues(t, spec)
	requireClose(t, want("batch/spectrogram"), got, 1e-4, "spectrogram")
	got, _ = hostValues(t, lengths)
	assert.Equal(t, []float64{float64(c.Lengths[0]), float64(c.Lengths[1])}, got)
	got, _ = hostValues(t, wave)
	requireClose(t, want("batch/waveform"), got, 1e-4, "waveform")
	w, err := speechT5Vocode(m, refHandle(t, refs, "vocoder/spectrogram"))
	require.NoError(t, err)
	got, _ = hostValues(t, w)
	requireClose(t, want("vocoder/waveform"), got, 1e-4, "vocoder")

	_, _, _, err = speechT5Generate(m, ids, 0, refHandle(t, refs, "input_ids"), SpeechOptions{}, false)
	assert.ErrorContains(t, err, "speaker embeddings have shape [2 24]")
	bare, err := speechT5Load(filepath.Join(mmTestdata, "speecht5_tiny"), "", "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, speechT5Free(bare)) }()
	_, err = speechT5SamplingRate(bare)
	assert.ErrorContains(t, err, "loaded without a vocoder")
}

// TestWhisperStreamJSON streams a waveform through the ABI and reads the
// updates' JSON.
func TestWhisperStreamJSON(t *testing.T) {
	w, err := whisperLoad(filepath.Join(mmTestdata, "whisper_tiny"), "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, whisperFree(w)) }()
	s, err := whisperStreamNew(w, 4000, 0, 0, false, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, whisperStreamFree(s)) }()
	wave := refHandle(t, filepath.Join(mmTestdata, "whisper_refs.safetensors"), "whisper/wave_1")
	n, err := whisperStreamPush(s, wave, true)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	raw, err := whisperStreamRead(s)
	require.NoError(t, err)
	var updates []struct {
		Chunk         int     `json:"chunk"`
		Samples       int     `json:"samples"`
		Committed     []int   `json:"committed"`
		Tentative     []int   `json:"tentative"`
		CommittedText string  `json:"committed_text"`
		ElapsedMS     float64 `json:"elapsed_ms"`
		Final         bool    `json:"final"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &updates))
	require.Len(t, updates, 5)
	last := updates[4]
	assert.True(t, last.Final)
	assert.Equal(t, 16000, last.Samples)
	assert.NotNil(t, last.Tentative)
	assert.Equal(t, []int{315, 363, 15, 433, 555, 446, 124, 453, 363, 98, 446, 363, 363, 252, 164, 402, 413, 242, 82, 602}, last.Committed)
	assert.Greater(t, last.ElapsedMS, 0.0)

	_, err = whisperStreamNew(w, 16001, 0, 0, false, 0)
	assert.ErrorContains(t, err, "ChunkSamples 16001 must be in [1, 16000]")
	_, err = whisperStreamNew(w, 4000, 0, 0, false, -2)
	assert.ErrorContains(t, err, "TokensPerSecond -2 must be a finite number >= 0")
}
