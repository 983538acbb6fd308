package multimodal

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The SpeechT5 reference vectors: a tiny seeded SpeechT5ForTextToSpeech
// with a character sentencepiece tokenizer, a tiny seeded SpeechT5HifiGan,
// and transformers' outputs (testdata/make_speecht5_refs.py).

// speechTol is relative to the largest reference value, as visionTol.
const speechTol = 1e-4

var (
	speechT5Dir = filepath.Join("testdata", "speecht5_tiny")
	hifiGANDir  = filepath.Join("testdata", "speecht5_hifigan_tiny")
)

type speechT5Refs struct {
	reftest.Refs
	Corpus []struct {
		Text string `json:"text"`
		IDs  []int  `json:"ids"`
	} `json:"corpus"`
	Texts    []string `json:"texts"`
	Generate []struct {
		Name            string  `json:"name"`
		Rows            []int   `json:"rows"`
		Threshold       float64 `json:"threshold"`
		MinLenRatio     float64 `json:"minlenratio"`
		MaxLenRatio     float64 `json:"maxlenratio"`
		Steps           int     `json:"steps"`
		Lengths         []int   `json:"lengths"`
		WaveformLengths []int   `json:"waveform_lengths"`
	} `json:"generate"`
	DropoutMasks int `json:"dropout_masks"`
}

func loadSpeechT5Refs(t *testing.T) *speechT5Refs {
	t.Helper()
	var r speechT5Refs
	r.Refs = reftest.ReadRefs(t, "speecht5_refs", &r)
	return &r
}

func (r *speechT5Refs) check(t *testing.T, name string, got *core.Tensor) float64 {
	t.Helper()
	e := reftest.RelMaxErr(t, got, r.Get(t, name, core.CPU))
	t.Logf("%s: relative error %.2g", name, e)
	require.Less(t, e, speechTol, name)
	return e
}

// pickRows picks rows of x (B, ...) and cuts the sequence axis to n.
func pickRows(x *core.Tensor, idx []int, n int) *core.Tensor {
	var parts []*core.Tensor
	for _, i := range idx {
		parts = append(parts, x.Slice(core.Attrs{"axis": 0, "start": i, "stop": i + 1}).Slice(core.Attrs{"axis": 1, "start": 0, "stop": n}))
	}
	return core.Concat(parts, core.Attrs{"axis": 0})
}

// melCepstralDistance is the mel-cepstral distortion in dB between two
// log10-mel spectrograms (frames, mels) of one shape, averaged over frames:
// (10/ln 10)·√(2·Σ_{d≥1}(c_d - ĉ_d)²), c the orthonormal DCT-II of each
// frame's natural-log mel energies, c_0 (energy) left out as is usual.
func melCepstralDistance(a, b []float32, mels int) float64 {
	frames := len(a) / mels
	cep := func(x []float32) []float64 {
		c := make([]float64, mels)
		for k := range mels {
			s := 0.0
			for n := range mels {
				s += float64(x[n]) * math.Ln10 * math.Cos(math.Pi*float64(k)*(2*float64(n)+1)/(2*float64(mels)))
			}
			scale := math.Sqrt(2 / float64(mels))
			if k == 0 {
				scale = math.Sqrt(1 / float64(mels))
			}
			c[k] = s * scale
		}
		return c
	}
	total := 0.0
	for f := range frames {
		ca, cb := cep(a[f*mels:(f+1)*mels]), cep(b[f*mels:(f+1)*mels])
		d := 0.0
		for k := 1; k < mels; k++ {
			d += (ca[k] - cb[k]) * (ca[k] - cb[k])
		}
		total += 10 / math.Ln10 * math.Sqrt(2*d)
	}
	return total / float64(frames)
}

func TestSpeechT5Tokenizer(t *testing.T) {
	r := loadSpeechT5Refs(t)
	tok, err := LoadSpeechT5Tokenizer(speechT5Dir)
	require.NoError(t, err)
	require.Equal(t, 50, tok.VocabSize())
	for _, c := range r.Corpus {
		require.Equal(t, c.IDs, tok.Encode(c.Text), "%q", c.Text)
	}
	ids, mask, err := tok.EncodeBatch(r.Texts, core.CPU)
	require.NoError(t, err)
	require.Equal(t, mustInt64s(t, r.Get(t, "input_ids", core.CPU)), mustInt64s(t, ids))
	require.Equal(t, mustInt64s(t, r.Get(t, "attention_mask", core.CPU)), mustInt64s(t, mask))
	require.Equal(t, "Hello, my dog is cute.", tok.Decode(tok.Encode("Hello, my dog is cute."), true))
}

func mustInt64s(t *testing.T, x *core.Tensor) []int64 {
	t.Helper()
	v, err := x.Int64s()
	require.NoError(t, err)
	return v
}

func checkSpeechT5(t *testing.T, dev core.Device) {
	r := loadSpeechT5Refs(t)
	m, err := LoadSpeechT5ForTextToSpeech(speechT5Dir, WithDevice(dev))
	require.NoError(t, err)
	v, err := LoadSpeechT5HifiGan(hifiGANDir, WithDevice(dev))
	require.NoError(t, err)
	ids, mask := r.Get(t, "input_ids", dev), r.Get(t, "attention_mask", dev)
	speakers := r.Get(t, "speaker_embeddings", dev)

	enc, err := m.Encode(ids, mask)
	require.NoError(t, err)
	// Padding positions' states are not compared: transformers' eager
	// attention gives them every key too, and so does webtensor, but
	// nothing reads them.
	r.check(t, "encoder_last_hidden_state", enc)

	// Teacher forcing, the mel prefix decoded at once and in chunks
	// through the cache (the decoder's chunked prefill).
	frames := r.Get(t, "decoder_input_values", dev)
	for _, chunk := range []int{0, 1, 3} {
		out, err := m.Forward(ids, mask, frames, speakers, chunk)
		require.NoError(t, err)
		r.check(t, "decoder_last_hidden_state", out.DecoderLastHiddenState)
		r.check(t, "teacher_before_postnet", out.BeforePostnet)
		r.check(t, "teacher_after_postnet", out.Spectrogram)
		r.check(t, "teacher_stop_logits", out.StopLogits)
	}

	for _, c := range r.Generate {
		width := 0
		m1, err := r.Get(t, "attention_mask", core.CPU).Int64s()
		require.NoError(t, err)
		cols := r.Get(t, "attention_mask", core.CPU).Shape()[1]
		for _, row := range c.Rows {
			n := 0
			for j := range cols {
				n += int(m1[row*cols+j])
			}
			width = max(width, n)
		}
		opts := SpeechOptions{Threshold: c.Threshold, MinLenRatio: c.MinLenRatio, MaxLenRatio: c.MaxLenRatio}
		rowSpk := pickRows(speakers.Reshape(core.Shape{2, 1, 12}), c.Rows, 1).Reshape(core.Shape{len(c.Rows), 12})
		var rowMask *core.Tensor
		if len(c.Rows) > 1 {
			rowMask = pickRows(mask, c.Rows, width)
		}
		out, err := m.GenerateSpeech(pickRows(ids, c.Rows, width), rowMask, rowSpk, opts)
		require.NoError(t, err)
		require.Equal(t, c.Steps, out.Steps, c.Name)
		require.Equal(t, c.Lengths, out.Lengths, c.Name)
		r.check(t, c.Name+"/spectrogram", out.Spectrogram)
		wave, err := v.Forward(out.Spectrogram)
		require.NoError(t, err)
		r.check(t, c.Name+"/waveform", wave)
		// transformers' waveform_lengths: the samples per frame times each
		// row's frames.
		hop := wave.Shape()[1] / out.Spectrogram.Shape()[1]
		for i, l := range out.Lengths {
			require.Equal(t, c.WaveformLengths[i], hop*l, c.Name)
		}

		got, err := out.Spectrogram.Float32s()
		require.NoError(t, err)
		want, err := r.Get(t, c.Name+"/spectrogram", core.CPU).Float32s()
		require.NoError(t, err)
		mcd := melCepstralDistance(got, want, m.Config.NumMelBins)
		t.Logf("%s: mel-cepstral distance to transformers %.3g dB", c.Name, mcd)
		// Speech synthesis papers count differences under about 1 dB as
		// inaudible; float32 rounding gives some 1e-5 dB.
		require.Less(t, mcd, 0.01, c.Name)

		if c.Name == "single" {
			// The first four steps' frames as a prefix, prefilled in
			// chunks of three steps: the same speech.
			prefix := r.Get(t, "single/before_postnet", dev).Slice(core.Attrs{"axis": 1, "start": 0, "stop": 8})
			opts.Prefix, opts.PrefillChunk = prefix, 3
			out, err := m.GenerateSpeech(pickRows(ids, c.Rows, width), nil, rowSpk, opts)
			require.NoError(t, err)
			require.Equal(t, c.Steps, out.Steps)
			r.check(t, "single/spectrogram", out.Spectrogram)
		}
	}

	// The vocoder alone, unbatched and batched.
	wave, err := v.Forward(r.Get(t, "vocoder/spectrogram", dev))
	require.NoError(t, err)
	r.check(t, "vocoder/waveform", wave)
	wave, err = v.Forward(r.Get(t, "batch/spectrogram", dev))
	require.NoError(t, err)
	r.check(t, "vocoder/batch_waveform", wave)

	// The prenet with transformers' dropout masks replayed.
	m.dropoutMask = func(layer, n int) *core.Tensor {
		mk := r.Get(t, "dropout/mask_"+string(rune('0'+layer)), dev)
		require.Equal(t, n, mk.Shape()[0])
		return mk.Ne(core.Scalar(0, mk.DType(), dev))
	}
	require.Equal(t, 2, r.DropoutMasks)
	x, err := m.prenet(frames, speakers, 0, nil)
	require.NoError(t, err)
	r.check(t, "dropout/prenet", x)
}

func TestSpeechT5MatchesTransformers(t *testing.T) { checkSpeechT5(t, core.CPU) }

func TestSpeechT5OnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkSpeechT5(t, webgputest.Device)
}

// TestSpeechT5Dropout checks the prenet's own dropout: a seed gives the
// same speech every time, another seed other speech, and about half the
// prenet's units are kept.
func TestSpeechT5Dropout(t *testing.T) {
	r := loadSpeechT5Refs(t)
	m, err := LoadSpeechT5ForTextToSpeech(speechT5Dir)
	require.NoError(t, err)
	ids := pickRows(r.Get(t, "input_ids", core.CPU), []int{0}, 23)
	spk := r.Get(t, "speaker_embeddings", core.CPU).Slice(core.Attrs{"axis": 0, "start": 0, "stop": 1})
	run := func(seed int64) []float32 {
		out, err := m.GenerateSpeech(ids, nil, spk, SpeechOptions{Threshold: 3, MaxLenRatio: 1, PrenetDropout: true, Seed: seed})
		require.NoError(t, err)
		v, err := out.Spectrogram.Float32s()
		require.NoError(t, err)
		return v
	}
	a, b, c := run(7), run(7), run(8)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)

	x := core.Ones(core.Shape{1, 400, 24}, core.F32)
	kept, err := m.consistentDropout(x, 0, &prenetDropout{seed: 3}).Sum().Float32s()
	require.NoError(t, err)
	frac := float64(kept[0]) / 2 / (400 * 24) // kept units are scaled by 1/(1-0.5)
	require.InDelta(t, 0.5, frac, 0.03)
}

func TestSpeechT5Checkpoints(t *testing.T) {
	m, err := LoadSpeechT5ForTextToSpeech(speechT5Dir)
	require.NoError(t, err)
	requireStateDictIsFile(t, m, filepath.Join(speechT5Dir, "model.safetensors"))
	v, err := LoadSpeechT5HifiGan(hifiGANDir)
	require.NoError(t, err)
	requireStateDictIsFile(t, v, filepath.Join(hifiGANDir, "model.safetensors"))
	require.Equal(t, 8, v.HopLength())
	// The same folders through a file system (FromFS).
	_, err = LoadSpeechT5ForTextToSpeech(".", FromFS(os.DirFS(speechT5Dir)))
	require.NoError(t, err)
	_, err = LoadSpeechT5HifiGan(".", FromFS(os.DirFS(hifiGANDir)))
	require.NoError(t, err)
	tok, err := LoadSpeechT5Tokenizer(".", FromFS(os.DirFS(speechT5Dir)))
	require.NoError(t, err)
	require.Equal(t, 50, tok.VocabSize())
	_, err = LoadSpeechT5Tokenizer(hifiGANDir)
	require.ErrorContains(t, err, "spm_char.model")

	// A missing and a misshaped tensor, both named.
	dir := t.TempDir()
	f, err := safetensors.ReadFile(filepath.Join(speechT5Dir, "model.safetensors"))
	require.NoError(t, err)
	cfg, err := os.ReadFile(filepath.Join(speechT5Dir, "config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	tensors := f.Tensors
	delete(tensors, "speecht5.encoder.wrapped_encoder.embed_positions.pe_k.weight")
	p := tensors["speech_decoder_postnet.prob_out.weight"]
	tensors["speech_decoder_postnet.prob_out.weight"] = safetensors.Tensor{DType: p.DType, Shape: core.Shape{32, 2}, Data: p.Data}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), tensors, f.Metadata))
	_, err = LoadSpeechT5ForTextToSpeech(dir)
	require.ErrorContains(t, err, "tensor speecht5.encoder.wrapped_encoder.embed_positions.pe_k.weight is missing (want shape [16 8])")
	require.ErrorContains(t, err, "tensor speech_decoder_postnet.prob_out.weight has shape [32 2], want [2 32]")
}

func TestSpeechT5Errors(t *testing.T) {
	_, err := ParseSpeechT5Config([]byte(`{"model_type": "speecht5", "rope_theta": 1}`))
	require.ErrorContains(t, err, `SpeechT5 config: unknown key "rope_theta"`)
	_, err = ParseSpeechT5Config([]byte(`{"model_type": "speecht5", "hidden_size": 30, "encoder_attention_heads": 4}`))
	require.ErrorContains(t, err, "hidden_size 30 is not a multiple of encoder_attention_heads 4")
	_, err = ParseSpeechT5Config([]byte(`{"model_type": "speecht5", "speech_decoder_postnet_kernel": 4}`))
	require.ErrorContains(t, err, "speech_decoder_postnet_kernel 4 is even")
	_, err = ParseHiFiGANConfig([]byte(`{"model_type": "speecht5_hifigan", "upsample_rates": [4, 4], "upsample_kernel_sizes": [8]}`))
	require.ErrorContains(t, err, "upsample_kernel_sizes [8] and upsample_rates [4 4] differ in length")
	_, err = ParseHiFiGANConfig([]byte(`{"model_type": "speecht5_hifigan", "resblock_kernel_sizes": [3, 6, 11]}`))
	require.ErrorContains(t, err, "resblock_kernel_sizes[1] is 6")

	r := loadSpeechT5Refs(t)
	m, err := LoadSpeechT5ForTextToSpeech(speechT5Dir)
	require.NoError(t, err)
	ids := r.Get(t, "input_ids", core.CPU)
	spk := r.Get(t, "speaker_embeddings", core.CPU)
	_, err = m.GenerateSpeech(ids, nil, nil, SpeechOptions{})
	require.ErrorContains(t, err, "speaker embeddings are required (B or 1, 12)")
	_, err = m.GenerateSpeech(ids, nil, core.Zeros(core.Shape{2, 7}, core.F32), SpeechOptions{})
	require.ErrorContains(t, err, "speaker embeddings have shape [2 7], want (2 or 1, 12)")
	_, err = m.GenerateSpeech(ids, nil, spk, SpeechOptions{MaxLenRatio: 100})
	require.ErrorContains(t, err, "MaxLenRatio 100 allows 1200 steps for 24 tokens, more than max_speech_positions 300")
	_, err = m.GenerateSpeech(ids, nil, spk, SpeechOptions{Prefix: core.Zeros(core.Shape{2, 3, 16}, core.F32)})
	require.ErrorContains(t, err, "prefix has 3 frames, not a multiple of reduction_factor 2")
	_, err = m.Encode(core.Zeros(core.Shape{1, 121}, core.I64), nil)
	require.ErrorContains(t, err, "121 tokens exceed max_text_positions 120")
	v, err := LoadSpeechT5HifiGan(hifiGANDir)
	require.NoError(t, err)
	_, err = v.Forward(core.Zeros(core.Shape{3, 80}, core.F32))
	require.ErrorContains(t, err, "spectrogram has shape [3 80], want (batch, frames, 16) or (frames, 16)")
}
