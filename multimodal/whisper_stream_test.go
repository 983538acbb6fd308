package multimodal

import (
	"math"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func loadWhisperTiny(t testing.TB) (*WhisperForConditionalGeneration, *WhisperFeatureExtractor, *Tokenizer) {
	m, err := LoadWhisperForConditionalGeneration(whisperDir)
	require.NoError(t, err)
	fe, err := LoadWhisperFeatureExtractor(whisperDir)
	require.NoError(t, err)
	tok, err := LoadTokenizer(filepath.Join(whisperDir, "tokenizer.json"))
	require.NoError(t, err)
	return m, fe, tok
}

func greedy(t *testing.T, m *WhisperForConditionalGeneration, fe *WhisperFeatureExtractor, wave []float32) []int {
	t.Helper()
	feats, err := fe.Extract([][]float32{wave}, core.CPU, false)
	require.NoError(t, err)
	seqs, err := m.Generate(feats, GenerateOptions{})
	require.NoError(t, err)
	return seqs[0]
}

// TestWhisperStreamMatchesGreedy streams a 1 s waveform (the tiny model's
// whole window) in four chunks of 0.25 s. The final committed transcript
// equals Generate's greedy transcript of the whole waveform, token for
// token, because (1) Flush transcribes the same samples, padded to the
// same window, so the features and encoder states are those Generate
// computes, and (2) the decoder is forced to begin with the committed
// tokens and continues greedily with Generate's rules: when every
// commitment was a prefix of Generate's transcript, which the test checks
// at each chunk, the continuation is the rest of it. A commitment that
// was not such a prefix (two partial hypotheses agreeing on a token the
// full audio changes) would make the final transcript differ from there
// on, as in any LocalAgreement streaming.
func TestWhisperStreamMatchesGreedy(t *testing.T) {
	r := loadWhisperRefs(t)
	m, fe, tok := loadWhisperTiny(t)
	wave := r.wave(t, "whisper/wave_1")
	require.Len(t, wave, fe.NSamples())
	want := greedy(t, m, fe, wave)

	s, err := NewWhisperStream(m, fe, tok, StreamOptions{ChunkSamples: 4000})
	require.NoError(t, err)
	var updates []StreamUpdate
	// Pushed in uneven pieces: the stream cuts its own chunks.
	for _, cut := range [][2]int{{0, 3000}, {3000, 9000}, {9000, 16000}} {
		u, err := s.Push(wave[cut[0]:cut[1]])
		require.NoError(t, err)
		updates = append(updates, u...)
	}
	require.Len(t, updates, 4)
	final, err := s.Flush()
	require.NoError(t, err)
	for _, u := range append(updates, final) {
		t.Logf("chunk %d (%d samples, %v): committed %v %q, tentative %v", u.Chunk, u.Samples, u.Elapsed, u.Committed, u.CommittedText, u.Tentative)
		require.Equal(t, want[:len(u.Committed)], u.Committed, "chunk %d committed a token the full audio changes", u.Chunk)
	}
	require.NotEmpty(t, updates[len(updates)-1].Committed, "LocalAgreement committed nothing before the end")
	require.True(t, final.Final)
	require.Equal(t, want, final.Committed)
	require.Empty(t, final.Tentative)
	text, err := tok.Decode(want, true)
	require.NoError(t, err)
	require.Equal(t, text, final.CommittedText)
}

// TestWhisperStreamWindows streams 1.8 s through the 1 s window: the fifth
// chunk does not fit, so the first window's transcript is final (equal to
// Generate's on its second of audio) and the rest is transcribed alone.
func TestWhisperStreamWindows(t *testing.T) {
	r := loadWhisperRefs(t)
	m, fe, tok := loadWhisperTiny(t)
	wave := slices.Concat(r.wave(t, "whisper/wave_1"), r.wave(t, "whisper/wave_0"))
	s, err := NewWhisperStream(m, fe, tok, StreamOptions{ChunkSamples: 4000})
	require.NoError(t, err)
	updates, err := s.Push(wave)
	require.NoError(t, err)
	require.Len(t, updates, 7)
	final, err := s.Flush()
	require.NoError(t, err)
	first := greedy(t, m, fe, wave[:16000])
	require.Equal(t, first, updates[4].Committed[:len(first)])
	require.Equal(t, slices.Concat(first, greedy(t, m, fe, wave[16000:])), final.Committed)
	require.Equal(t, 28800, final.Samples)
}

// TestWhisperStreamTrimEncoder checks the trimmed encoder: a buffer that
// fills the window is encoded whole (so it is Generate's transcript), and
// half-second windows are each the greedy transcript of their 25 encoder
// positions.
func TestWhisperStreamTrimEncoder(t *testing.T) {
	r := loadWhisperRefs(t)
	m, fe, tok := loadWhisperTiny(t)
	wave := r.wave(t, "whisper/wave_1")
	s, err := NewWhisperStream(m, fe, tok, StreamOptions{ChunkSamples: 16000, TrimEncoder: true})
	require.NoError(t, err)
	_, err = s.Push(wave)
	require.NoError(t, err)
	final, err := s.Flush()
	require.NoError(t, err)
	require.Equal(t, greedy(t, m, fe, wave), final.Committed)

	s, err = NewWhisperStream(m, fe, tok, StreamOptions{ChunkSamples: 8000, WindowSamples: 8000, TrimEncoder: true})
	require.NoError(t, err)
	_, err = s.Push(wave)
	require.NoError(t, err)
	final, err = s.Flush()
	require.NoError(t, err)
	// The trimmed features are the window's first frames.
	full, err := fe.Extract([][]float32{wave[:5000]}, core.CPU, false)
	require.NoError(t, err)
	short, err := fe.extractFrames(wave[:5000], 32, core.CPU)
	require.NoError(t, err)
	require.Equal(t, core.Shape{1, 80, 32}, short.Shape())
	require.Zero(t, maxAbsErr(t, short, full.Slice(core.Attrs{"axis": 2, "start": 0, "stop": 32})))

	var want []int
	for _, half := range [][]float32{wave[:8000], wave[8000:]} {
		feats, err := fe.Extract([][]float32{half}, core.CPU, false)
		require.NoError(t, err)
		enc, err := m.Model.encode(feats.Slice(core.Attrs{"axis": 2, "start": 0, "stop": 50}), 25)
		require.NoError(t, err)
		prompt, err := m.prompts(nil, 1)
		require.NoError(t, err)
		ids, _, err := m.greedyFrom(enc.LastHiddenState, prompt[0], nil, nil, s.maxNew)
		require.NoError(t, err)
		want = append(want, ids...)
	}
	require.Equal(t, want, final.Committed)
}

func TestWhisperStreamErrors(t *testing.T) {
	m, fe, _ := loadWhisperTiny(t)
	_, err := NewWhisperStream(m, fe, nil, StreamOptions{ChunkSamples: 16001})
	require.ErrorContains(t, err, "ChunkSamples 16001 must be in [1, 16000] (the window)")
	_, err = NewWhisperStream(m, fe, nil, StreamOptions{WindowSamples: 32000})
	require.ErrorContains(t, err, "WindowSamples 32000 must be in [1, 16000] (the feature extractor's window)")
	fe2 := *fe
	fe2.FeatureSize = 128
	_, err = NewWhisperStream(m, &fe2, nil, StreamOptions{})
	require.ErrorContains(t, err, "feature_size 128 differs from num_mel_bins 80")
	m.Generation.ForcedDecoderIDs = [][2]*int{{ptr(1), nil}}
	m.Generation.LangToID = map[string]int{"<|en|>": 602}
	_, err = NewWhisperStream(m, fe, nil, StreamOptions{})
	require.ErrorContains(t, err, "asks for language detection")
}

// TestGreedyFromDraft checks that a draft changes the cost, never the
// tokens: the true continuation is taken whole in one call, a draft wrong
// from its k-th token keeps k tokens and decodes the rest one by one (the
// cache cut back), and too long or wrong drafts give greedy's tokens.
func TestGreedyFromDraft(t *testing.T) {
	r := loadWhisperRefs(t)
	m, fe, _ := loadWhisperTiny(t)
	feats, err := fe.Extract([][]float32{r.wave(t, "whisper/wave_1")}, core.CPU, false)
	require.NoError(t, err)
	enc, err := m.Model.Encode(feats)
	require.NoError(t, err)
	prompt, err := m.prompts(nil, 1)
	require.NoError(t, err)
	const maxNew = 12
	want, accepted, err := m.greedyFrom(enc.LastHiddenState, prompt[0], nil, nil, maxNew)
	require.NoError(t, err)
	require.Zero(t, accepted)
	require.Greater(t, len(want), 4, "the model stops too soon for this test: %v", want)
	t.Logf("greedy: %v", want)
	wrong := func(ids []int, at int) []int {
		out := slices.Clone(ids)
		out[at] = (out[at] + 1) % m.Model.Config.VocabSize
		return out
	}
	for _, c := range []struct {
		name          string
		forced, draft []int
		wantAccepted  int
	}{
		{"the continuation", nil, want[:len(want)-1], len(want) - 1},
		{"wrong at 2", nil, wrong(want, 2), 2},
		{"wrong at 0", nil, wrong(want, 0), 0},
		{"after forced tokens", want[:2], want[2 : len(want)-1], len(want) - 3},
		{"too long", nil, append(slices.Clone(want), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), len(want) - 1},
	} {
		got, accepted, err := m.greedyFrom(enc.LastHiddenState, prompt[0], c.forced, c.draft, maxNew)
		require.NoError(t, err, c.name)
		require.Equal(t, want, got, c.name)
		if len(want) == maxNew {
			require.Equal(t, c.wantAccepted, accepted, c.name)
		} else {
			require.LessOrEqual(t, accepted, c.wantAccepted, c.name)
		}
	}
}

// whisperTinyConfig is openai/whisper-tiny's config.json (its sizes; the
// weights here are random).
const whisperTinyConfig = `{"model_type": "whisper", "vocab_size": 51865, "num_mel_bins": 80, "d_model": 384,
 "encoder_layers": 4, "decoder_layers": 4, "encoder_attention_heads": 6, "decoder_attention_heads": 6,
 "encoder_ffn_dim": 1536, "decoder_ffn_dim": 1536, "max_source_positions": 1500, "max_target_positions": 448,
 "activation_function": "gelu", "scale_embedding": false, "tie_word_embeddings": true,
 "decoder_start_token_id": 50258, "eos_token_id": 50257, "pad_token_id": 50257,
 "begin_suppress_tokens": [220, 50257], "max_length": 448}`

// BenchmarkWhisperStreamTiny streams 30 s of audio in 1 s chunks through a
// randomly initialised model of whisper-tiny's sizes on the CPU and
// reports the per-chunk latency percentiles and the draft tokens taken, in
// three modes: exact (the encoder over the whole 30 s window every chunk,
// transformers' states), trim10s (TrimEncoder with 10 s windows: the
// encoder over the buffered audio only) and trim10s-5tok/s (the same with
// TokensPerSecond 5). Random weights never say end-of-text: they behave as
// a model in a hallucination loop, so in the first two modes every
// hypothesis runs to MaxNewTokens 24 (about the tokens of 10 s of English
// speech), even on a window's first second, whose 24 decoder steps with
// no draft to verify are the p95; the third bounds a hypothesis at the
// rate of fast speech, as many tokens as a speaker would have said.
func BenchmarkWhisperStreamTiny(b *testing.B) {
	cfg, err := ParseWhisperConfig([]byte(whisperTinyConfig))
	require.NoError(b, err)
	gen := cfg.generation
	en, transcribe, noTimestamps := 50259, 50359, 50363
	gen.ForcedDecoderIDs = [][2]*int{{ptr(1), &en}, {ptr(2), &transcribe}}
	gen.NoTimestampsTokenID = &noTimestamps
	m, err := NewWhisperForConditionalGeneration(cfg, gen, 1)
	require.NoError(b, err)
	fe := NewWhisperFeatureExtractor()
	wave := make([]float32, 30*16000)
	for i := range wave {
		x := float64(i) / 16000
		wave[i] = float32(0.3*math.Sin(2*math.Pi*(200+40*x)*x) + 0.05*math.Sin(2*math.Pi*1234*x))
	}
	for _, mode := range []struct {
		name string
		opts StreamOptions
	}{
		{"exact", StreamOptions{MaxNewTokens: 24}},
		{"trim10s", StreamOptions{MaxNewTokens: 24, WindowSamples: 10 * 16000, TrimEncoder: true}},
		{"trim10s-5tok/s", StreamOptions{TokensPerSecond: 5, WindowSamples: 10 * 16000, TrimEncoder: true}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			var lat []time.Duration
			drafted := 0
			for b.Loop() {
				s, err := NewWhisperStream(m, fe, nil, mode.opts)
				require.NoError(b, err)
				for at := 0; at < len(wave); at += 16000 {
					us, err := s.Push(wave[at : at+16000])
					require.NoError(b, err)
					for _, u := range us {
						lat = append(lat, u.Elapsed)
						drafted += u.Drafted
					}
				}
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(math.Ceil(p*float64(len(lat))))-1)].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms/chunk")
			b.ReportMetric(pct(0.95), "p95-ms/chunk")
			b.ReportMetric(pct(0.99), "p99-ms/chunk")
			b.ReportMetric(float64(drafted)/float64(len(lat)), "drafted/chunk")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestWhisperStreamTokensPerSecond checks the rate bound: a hypothesis of
// the random model (which never ends) is cut at the rate times the
// buffered seconds, rounded up, and bad rates are refused.
func TestWhisperStreamTokensPerSecond(t *testing.T) {
	m, fe, _ := loadWhisperTiny(t)
	wave := make([]float32, 8000)
	for i := range wave {
		wave[i] = float32(0.2 * math.Sin(float64(i)*0.05))
	}
	s, err := NewWhisperStream(m, fe, nil, StreamOptions{ChunkSamples: 4000, TokensPerSecond: 5})
	require.NoError(t, err)
	us, err := s.Push(wave)
	require.NoError(t, err)
	require.Len(t, us, 2)
	free, err := NewWhisperStream(m, fe, nil, StreamOptions{ChunkSamples: 4000})
	require.NoError(t, err)
	unbounded, err := free.Push(wave)
	require.NoError(t, err)
	for i, u := range us {
		// 0.25 s and 0.5 s buffered: 2 and 3 tokens, where the unbounded
		// stream's hypotheses are longer.
		require.Greater(t, len(unbounded[i].Committed)+len(unbounded[i].Tentative), 3, "chunk %d without the bound", u.Chunk)
		require.Equal(t, []int{2, 3}[i], len(u.Committed)+len(u.Tentative), "chunk %d", u.Chunk)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := NewWhisperStream(m, fe, nil, StreamOptions{TokensPerSecond: bad})
		require.ErrorContains(t, err, "TokensPerSecond")
	}
}
