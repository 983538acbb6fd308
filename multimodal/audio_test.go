package multimodal

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The audio and Whisper reference vectors: transformers'
// WhisperFeatureExtractor on synthetic signals and a tiny seeded Whisper
// (testdata/make_whisper_image_refs.py).

// featureTol bounds the absolute error of log-mel features, which lie
// near [-1.5, 1.5]: torch's STFT and ours are both float32, and a bin
// near the -8 floor amplifies a rounding difference in its power. The
// largest error measured is 1.2e-5 (128 mels), on the CPU and WebGPU.
const featureTol = 5e-5

type whisperRefs struct {
	reftest.Refs
	Audio []struct {
		Name     string         `json:"name"`
		Settings map[string]any `json:"settings"`
		Batch    int            `json:"batch"`
		Frames   int            `json:"frames"`
		Tail     *float64       `json:"tail"`
	} `json:"audio"`
	Decode []struct {
		IDs         []int  `json:"ids"`
		Text        string `json:"text"`
		SkipSpecial string `json:"skip_special"`
	} `json:"decode"`
	Generate struct {
		MaxNewTokens int      `json:"max_new_tokens"`
		Sequences    [][]int  `json:"sequences"`
		Texts        []string `json:"texts"`
		MinTop2Gap   float64  `json:"min_top2_gap"`
	} `json:"generate"`
	GenerateBeam []struct {
		NumBeams     int `json:"num_beams"`
		MaxNewTokens int `json:"max_new_tokens"`
		Settings     struct {
			LengthPenalty *float64 `json:"length_penalty"`
			EarlyStopping any      `json:"early_stopping"`
		} `json:"settings"`
		Sequences [][]int `json:"sequences"`
	} `json:"generate_beam"`
	GenerateDetect struct {
		MaxNewTokens     int            `json:"max_new_tokens"`
		ForcedDecoderIDs [][2]*int      `json:"forced_decoder_ids"`
		LangToID         map[string]int `json:"lang_to_id"`
		Detected         []int          `json:"detected"`
		Sequences        [][]int        `json:"sequences"`
	} `json:"generate_detect"`
}

func loadWhisperRefs(t *testing.T) *whisperRefs {
	t.Helper()
	var r whisperRefs
	r.Refs = reftest.ReadRefs(t, "whisper_refs", &r)
	return &r
}

func (r *whisperRefs) wave(t *testing.T, name string) []float32 {
	t.Helper()
	w, err := r.Get(t, name, core.CPU).Float32s()
	require.NoError(t, err)
	return w
}

// maxAbsErr is the largest absolute difference of two tensors of one shape.
func maxAbsErr(t *testing.T, got, want *core.Tensor) float64 {
	t.Helper()
	require.NoError(t, got.Err())
	require.Equal(t, want.Shape(), got.Shape())
	g, err := got.Float64s()
	require.NoError(t, err)
	w, err := want.Float64s()
	require.NoError(t, err)
	diff := 0.0
	for i := range w {
		d := math.Abs(g[i] - w[i])
		if !(d <= diff) {
			diff = d // NaN stays
		}
	}
	return diff
}

// extractorFor builds the extractor a reference case's settings describe.
func extractorFor(t *testing.T, settings map[string]any) (*WhisperFeatureExtractor, bool) {
	t.Helper()
	cfg := map[string]any{}
	normalize := false
	for k, v := range settings {
		if k == "do_normalize" {
			normalize = v.(bool)
			continue
		}
		cfg[k] = v
	}
	data, err := json.Marshal(cfg)
	require.NoError(t, err)
	fe, err := ParseWhisperFeatureExtractor(data)
	require.NoError(t, err)
	return fe, normalize
}

func checkLogMel(t *testing.T, dev core.Device) {
	r := loadWhisperRefs(t)
	require.NotEmpty(t, r.Audio)
	for _, c := range r.Audio {
		fe, normalize := extractorFor(t, c.Settings)
		require.Equal(t, c.Frames, fe.NFrames(), c.Name)
		var waves [][]float32
		for i := range c.Batch {
			waves = append(waves, r.wave(t, fmt.Sprintf("audio/%s/wave_%d", c.Name, i)))
		}
		got, err := fe.Extract(waves, dev, normalize)
		require.NoError(t, err, c.Name)
		require.Equal(t, core.Shape{c.Batch, fe.FeatureSize, fe.NFrames()}, got.Shape(), c.Name)
		want := r.Get(t, "audio/"+c.Name+"/features", core.CPU)
		kept := want.Shape()[2]
		if c.Tail != nil {
			// The reference keeps the first frames; the rest is silence at
			// the floor value.
			tail := got.Slice(core.Attrs{"axis": 2, "start": kept, "stop": fe.NFrames()})
			e := maxAbsErr(t, tail, core.Full(tail.Shape(), *c.Tail, core.F32))
			t.Logf("%s: silent tail: max error %.2g", c.Name, e)
			require.Less(t, e, featureTol, c.Name)
			got = got.Slice(core.Attrs{"axis": 2, "start": 0, "stop": kept})
		}
		e := maxAbsErr(t, got, want)
		t.Logf("%s: max error %.2g", c.Name, e)
		require.Less(t, e, featureTol, c.Name)
	}
}

func TestWhisperFeaturesMatchTransformers(t *testing.T) { checkLogMel(t, core.CPU) }

func TestWhisperFeaturesOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkLogMel(t, webgputest.Device)
}

func TestMelFilterBankMatchesTransformers(t *testing.T) {
	r := loadWhisperRefs(t)
	fe := NewWhisperFeatureExtractor()
	got := core.FromSlice(fe.MelFilters, core.Shape{fe.NFFT/2 + 1, fe.FeatureSize}).Cast(core.F32)
	e := maxAbsErr(t, got, r.Get(t, "audio/mel_filters_80", core.CPU))
	t.Logf("mel filters: max error %.2g", e)
	require.Less(t, e, 1e-9)
}

func TestWhisperFeatureExtractorErrors(t *testing.T) {
	_, err := ParseWhisperFeatureExtractor([]byte(`{"dither": 0.0001}`))
	require.ErrorContains(t, err, `key "dither": value 0.0001 is not supported`)
	_, err = ParseWhisperFeatureExtractor([]byte(`{"chunk_length": 2, "n_samples": 480000}`))
	require.ErrorContains(t, err, `key "n_samples" is 480000, but the other settings give 32000`)
	_, err = ParseWhisperFeatureExtractor([]byte(`{"n_fft": 401}`))
	require.ErrorContains(t, err, "n_fft 401 must be even")
	_, err = ParseWhisperFeatureExtractor([]byte(`{"spectrogram": "power"}`))
	require.ErrorContains(t, err, `unknown key "spectrogram"`)
	// Sizes that would take more memory than a machine has (a fuzzer's
	// chunk_length ended the process) are refused with their values.
	_, err = ParseWhisperFeatureExtractor([]byte(`{"chunk_length": 16000}`))
	require.ErrorContains(t, err, "chunk_length 16000 s at sampling_rate 16000 is more than 8388608 samples")
	_, err = ParseWhisperFeatureExtractor([]byte(`{"hop_length": 1}`))
	require.ErrorContains(t, err, "480000 frames (n_samples / hop_length 1) of 201 frequency bins (n_fft 400) is more than 33554432 values")
	_, err = ParseWhisperFeatureExtractor([]byte(`{"feature_size": 100000}`))
	require.ErrorContains(t, err, "feature_size 100000 mels of 201 frequency bins")
	_, err = ParseWhisperFeatureExtractor([]byte(`{"feature_size": 816000, "hop_length": 17, "chunk_length": 1, "n_fft": 32}`))
	require.ErrorContains(t, err, "feature_size 816000 mels of 941 frames is more than 33554432 features")
	_, err = NewWhisperFeatureExtractor().Extract([][]float32{{0.1}, {}}, core.CPU, false)
	require.ErrorContains(t, err, "waveform 1 is empty")
}
