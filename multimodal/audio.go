package multimodal

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core"
)

// WhisperFeatureExtractor is transformers' WhisperFeatureExtractor: each
// waveform is padded or truncated to ChunkLength seconds, cut into Hann
// windowed frames (NFFT samples every HopLength, centred, reflect padding
// at the ends), and each frame's power spectrum is summed by a Slaney mel
// filterbank, then log10 (floored at 1e-10), clamped to 8 below the
// waveform's maximum and mapped by (x + 4) / 4.
//
// Padding, truncation and the optional zero-mean unit-variance
// normalisation run on the host, as transformers runs them; the STFT and
// everything after it run on the device as registry ops (rfft, matmul,
// log10, ...), so they run on every backend.
type WhisperFeatureExtractor struct {
	FeatureSize  int     // feature_size: mel bins
	SamplingRate int     // sampling_rate
	HopLength    int     // hop_length
	ChunkLength  int     // chunk_length, in seconds
	NFFT         int     // n_fft
	PaddingValue float64 // padding_value

	// MelFilters is the (NFFT/2+1, FeatureSize) filterbank, transformers'
	// mel_filter_bank(norm="slaney", mel_scale="slaney") from 0 to 8 kHz.
	MelFilters []float64

	written map[string]int // the file's derived keys, checked after parsing
}

// NSamples is the number of samples every waveform is padded or
// truncated to.
func (fe *WhisperFeatureExtractor) NSamples() int { return fe.ChunkLength * fe.SamplingRate }

// NFrames is the number of feature frames: the STFT of NSamples has one
// more, and Whisper drops the last.
func (fe *WhisperFeatureExtractor) NFrames() int { return fe.NSamples() / fe.HopLength }

// NewWhisperFeatureExtractor is a feature extractor with transformers'
// defaults (80 mel bins, 16 kHz, hop 160, 30 s, n_fft 400).
func NewWhisperFeatureExtractor() *WhisperFeatureExtractor {
	fe, err := ParseWhisperFeatureExtractor([]byte(`{}`))
	if err != nil {
		panic(err) // the defaults are valid
	}
	return fe
}

// LoadWhisperFeatureExtractor reads dir/preprocessor_config.json.
func LoadWhisperFeatureExtractor(dir string) (*WhisperFeatureExtractor, error) {
	path := filepath.Join(dir, "preprocessor_config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("multimodal: LoadWhisperFeatureExtractor: %w", err)
	}
	fe, err := ParseWhisperFeatureExtractor(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return fe, nil
}

// derived reads a key transformers writes but computes from the others;
// ParseWhisperFeatureExtractor checks it once every key is read.
func derived(name string) configKey[WhisperFeatureExtractor] {
	return func(fe *WhisperFeatureExtractor, raw json.RawMessage) error {
		var v int
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		fe.written[name] = v
		return nil
	}
}

var featureKeys = map[string]configKey[WhisperFeatureExtractor]{
	"feature_extractor_type": only[WhisperFeatureExtractor](`"WhisperFeatureExtractor"`),
	"processor_class":        func(*WhisperFeatureExtractor, json.RawMessage) error { return nil },
	"feature_size":           field(func(c *WhisperFeatureExtractor) any { return &c.FeatureSize }),
	"sampling_rate":          field(func(c *WhisperFeatureExtractor) any { return &c.SamplingRate }),
	"hop_length":             field(func(c *WhisperFeatureExtractor) any { return &c.HopLength }),
	"chunk_length":           field(func(c *WhisperFeatureExtractor) any { return &c.ChunkLength }),
	"n_fft":                  field(func(c *WhisperFeatureExtractor) any { return &c.NFFT }),
	"padding_value":          field(func(c *WhisperFeatureExtractor) any { return &c.PaddingValue }),
	"n_samples":              derived("n_samples"),
	"nb_max_frames":          derived("nb_max_frames"),
	// Dither adds random noise to every frame; webtensor gives the
	// deterministic features only.
	"dither":       only[WhisperFeatureExtractor]("0", "0.0"),
	"padding_side": only[WhisperFeatureExtractor](`"right"`),
	// The attention mask marks the real samples; Whisper's encoder ignores
	// it, and Extract returns the features alone.
	"return_attention_mask": func(*WhisperFeatureExtractor, json.RawMessage) error { return nil },
}

// ParseWhisperFeatureExtractor reads a preprocessor_config.json. A key
// webtensor does not know, or a value it does not implement (dither,
// left padding), fails naming the key.
func ParseWhisperFeatureExtractor(data []byte) (*WhisperFeatureExtractor, error) {
	fe := &WhisperFeatureExtractor{FeatureSize: 80, SamplingRate: 16000, HopLength: 160, ChunkLength: 30, NFFT: 400,
		written: map[string]int{}}
	if err := parseConfig("Whisper feature extractor", data, fe, featureKeys); err != nil {
		return nil, err
	}
	if err := positive("Whisper feature extractor", map[string]int{"feature_size": fe.FeatureSize,
		"sampling_rate": fe.SamplingRate, "hop_length": fe.HopLength, "chunk_length": fe.ChunkLength, "n_fft": fe.NFFT}); err != nil {
		return nil, err
	}
	for name, want := range map[string]int{"n_samples": fe.NSamples(), "nb_max_frames": fe.NFrames()} {
		if v, ok := fe.written[name]; ok && v != want {
			return nil, fmt.Errorf("multimodal: Whisper feature extractor config: key %q is %d, but the other settings give %d", name, v, want)
		}
	}
	if err := fe.checkSizes(); err != nil {
		return nil, err
	}
	fe.written = nil
	if fe.NFFT%2 != 0 || fe.NFFT/2 >= fe.NSamples() {
		return nil, fmt.Errorf("multimodal: Whisper feature extractor config: n_fft %d must be even and below twice n_samples %d (reflect padding)", fe.NFFT, fe.NSamples())
	}
	if fe.SamplingRate < 16000 {
		return nil, fmt.Errorf("multimodal: Whisper feature extractor config: sampling_rate %d puts the filterbank's 8 kHz top above the Nyquist frequency", fe.SamplingRate)
	}
	fe.MelFilters = melFilterBank(fe.NFFT/2+1, fe.FeatureSize, 0, 8000, float64(fe.SamplingRate))
	return fe, nil
}

// Bounds on what a config may ask for, far past any Whisper's (30 s at 16
// kHz: 480,000 samples, 3,000 frames of 201 bins, 80 or 128 mels): each
// sizes an allocation, and a corrupt or hostile config (a chunk_length of
// 16,000 s) would otherwise take more memory than the machine has, which
// ends a Go process instead of failing it.
const (
	maxWhisperSamples  = 1 << 23 // n_samples: 8.7 minutes at 16 kHz
	maxWhisperSpectrum = 1 << 25 // frames x frequency bins of the STFT, frames x mels of the features
	maxWhisperFilters  = 1 << 24 // mels x frequency bins of the filter bank
)

// checkSizes refuses a config whose buffers would pass those bounds,
// before any product of its values can overflow.
func (fe *WhisperFeatureExtractor) checkSizes() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("multimodal: Whisper feature extractor config: "+format, args...)
	}
	switch bins := fe.NFFT/2 + 1; {
	case fe.ChunkLength > maxWhisperSamples || fe.SamplingRate > maxWhisperSamples || fe.NSamples() > maxWhisperSamples:
		return fail("chunk_length %d s at sampling_rate %d is more than %d samples", fe.ChunkLength, fe.SamplingRate, maxWhisperSamples)
	case fe.NFFT > maxWhisperSamples || fe.FeatureSize > maxWhisperFilters:
		return fail("n_fft %d or feature_size %d is past its bound (%d, %d)", fe.NFFT, fe.FeatureSize, maxWhisperSamples, maxWhisperFilters)
	case fe.NFrames() > maxWhisperSpectrum/bins:
		return fail("%d frames (n_samples / hop_length %d) of %d frequency bins (n_fft %d) is more than %d values", fe.NFrames(), fe.HopLength, bins, fe.NFFT, maxWhisperSpectrum)
	case fe.FeatureSize > maxWhisperFilters/bins:
		return fail("feature_size %d mels of %d frequency bins (n_fft %d) is more than %d filter values", fe.FeatureSize, bins, fe.NFFT, maxWhisperFilters)
	case fe.FeatureSize > maxWhisperSpectrum/max(fe.NFrames(), 1):
		return fail("feature_size %d mels of %d frames is more than %d features", fe.FeatureSize, fe.NFrames(), maxWhisperSpectrum)
	}
	return nil
}

// hertzToMel and melToHertz are the Slaney scale: linear below 1 kHz,
// logarithmic above.
func hertzToMel(f float64) float64 {
	if f >= 1000 {
		return 15 + math.Log(f/1000)*(27/math.Log(6.4))
	}
	return 3 * f / 200
}

func melToHertz(m float64) float64 {
	if m >= 15 {
		return 1000 * math.Exp(math.Log(6.4)/27*(m-15))
	}
	return 200 * m / 3
}

// linspace is numpy's: start + i*step, the last value exactly stop.
func linspace(start, stop float64, n int) []float64 {
	out := make([]float64, n)
	step := (stop - start) / float64(n-1)
	for i := range out {
		out[i] = start + float64(i)*step
	}
	out[n-1] = stop
	return out
}

// melFilterBank is transformers' mel_filter_bank with Slaney's scale and
// area normalisation: triangles between mel-spaced corner frequencies,
// each scaled by 2 / its width in Hz. Laid out (bins, mels).
func melFilterBank(bins, mels int, fmin, fmax, rate float64) []float64 {
	corners := linspace(hertzToMel(fmin), hertzToMel(fmax), mels+2)
	for i, m := range corners {
		corners[i] = melToHertz(m)
	}
	// numpy's linspace(0, sampling_rate // 2, bins): the integer Nyquist.
	freqs := linspace(0, math.Floor(rate/2), bins)
	out := make([]float64, bins*mels)
	for b, f := range freqs {
		for m := range mels {
			down := -(corners[m] - f) / (corners[m+1] - corners[m])
			up := (corners[m+2] - f) / (corners[m+2] - corners[m+1])
			v := math.Max(0, math.Min(down, up))
			out[b*mels+m] = v * (2 / (corners[m+2] - corners[m]))
		}
	}
	return out
}

// Extract gives the log-mel features (batch, FeatureSize, NFrames) of
// mono waveforms sampled at SamplingRate, as float32 on dev. Each
// waveform is padded with PaddingValue or truncated to NSamples; with
// normalize (transformers' do_normalize) it is first scaled to zero mean
// and unit variance over its real samples.
func (fe *WhisperFeatureExtractor) Extract(waves [][]float32, dev core.Device, normalize bool) (*core.Tensor, error) {
	if len(waves) == 0 {
		return nil, fmt.Errorf("multimodal: WhisperFeatureExtractor.Extract: no waveforms")
	}
	n := fe.NSamples()
	batch := make([]float32, len(waves)*n)
	for i, w := range waves {
		if len(w) == 0 {
			return nil, fmt.Errorf("multimodal: WhisperFeatureExtractor.Extract: waveform %d is empty", i)
		}
		fe.padWave(batch[i*n:(i+1)*n], w, normalize)
	}
	x := core.FromSlice(batch, core.Shape{len(waves), n}, dev)
	feats := fe.logMel(x)
	if err := feats.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: WhisperFeatureExtractor.Extract: %w", err)
	}
	return feats, nil
}

// extractFrames is Extract's features of one waveform, without
// normalisation, cut to their first frames frames, computed on enough of
// the zero-padded window that they equal the whole window's: the STFT
// frames there see the waveform and zeros only, and one frame of zeros
// sets the same floor for the (max - 8) clamp as the window's do.
func (fe *WhisperFeatureExtractor) extractFrames(w []float32, frames int, dev core.Device) (*core.Tensor, error) {
	hop := fe.HopLength
	n := max(frames*hop, len(w)) + 2*fe.NFFT + hop
	n = min(fe.NSamples(), (n+hop-1)/hop*hop)
	if n == fe.NSamples() {
		feats, err := fe.Extract([][]float32{w}, dev, false)
		if err != nil {
			return nil, err
		}
		return feats.Slice(core.Attrs{"axis": 2, "start": 0, "stop": frames}), nil
	}
	buf := make([]float32, n)
	fe.padWave(buf, w, false)
	feats := fe.logMel(core.FromSlice(buf, core.Shape{1, n}, dev)).Slice(core.Attrs{"axis": 2, "start": 0, "stop": frames})
	if err := feats.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: WhisperFeatureExtractor: %w", err)
	}
	return feats, nil
}

// padWave writes w, truncated or padded, into dst; with normalize, as
// transformers' zero_mean_unit_var_norm over the real samples, the
// padding left at PaddingValue.
func (fe *WhisperFeatureExtractor) padWave(dst, w []float32, normalize bool) {
	kept := min(len(w), len(dst))
	copy(dst, w[:kept])
	for j := kept; j < len(dst); j++ {
		dst[j] = float32(fe.PaddingValue)
	}
	if normalize {
		normalizeWave(dst[:kept])
	}
}

// normalizeWave is transformers' zero_mean_unit_var_norm of x, in place:
// (x - mean) / sqrt(var + 1e-7), the statistics over x in float64 here and
// float32 in numpy (the difference is in the last bits).
func normalizeWave(x []float32) {
	var mean, sq float64
	for _, v := range x {
		mean += float64(v)
	}
	mean /= float64(len(x))
	for _, v := range x {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	std := math.Sqrt(sq/float64(len(x)) + 1e-7)
	for j, v := range x {
		x[j] = float32((float64(v) - mean) / std)
	}
}

// logMel is the STFT and what follows, as registry ops on x (B, samples):
// samples/hop frames (NFrames for the window's NSamples).
func (fe *WhisperFeatureExtractor) logMel(x *core.Tensor) *core.Tensor {
	defer core.NoGradScope()()
	dev, b, hop, nfft := x.Device(), x.Shape()[0], fe.HopLength, fe.NFFT
	frames := x.Shape()[1] / hop
	// Centred frames: NFFT/2 samples mirrored at each end, as torch.stft.
	x = x.Pad(core.Attrs{"pads": []int{nfft / 2, nfft / 2}, "mode": "reflect"})
	// Frame f starts at f*hop. Cut the signal into hop-long blocks; frame
	// f is then blocks f, f+1, ... joined and trimmed to NFFT, so framing
	// is a reshape, slices and one concat rather than a gather.
	per := (nfft + hop - 1) / hop
	blocks := frames + per - 1
	padded := x.Shape()[1]
	if need := blocks * hop; need != padded {
		// Trims the samples no kept frame reaches, or pads the last block.
		x = x.Pad(core.Attrs{"pads": []int{0, need - padded}})
	}
	x = x.Reshape(core.Shape{b, blocks, hop})
	parts := make([]*core.Tensor, per)
	for j := range parts {
		parts[j] = x.Slice(core.Attrs{"axis": 1, "start": j, "stop": j + frames})
	}
	framed := core.Concat(parts, core.Attrs{"axis": 2}).Slice(core.Attrs{"axis": 2, "start": 0, "stop": nfft})
	window := make([]float32, nfft)
	for i := range window {
		// torch.hann_window's periodic form.
		window[i] = float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(nfft)))
	}
	spec := framed.Mul(core.FromSlice(window, core.Shape{nfft}, dev)).RFFT(core.Attrs{"n": nfft})
	power := spec.Square().Sum(core.Attrs{"axes": []int{-1}})
	filters := make([]float32, len(fe.MelFilters))
	for i, v := range fe.MelFilters {
		filters[i] = float32(v)
	}
	mel := power.Matmul(core.FromSlice(filters, core.Shape{nfft/2 + 1, fe.FeatureSize}, dev))
	logSpec := mel.Permute(core.Attrs{"dims": []int{0, 2, 1}}).Clamp(core.Attrs{"min": 1e-10}).Log10()
	top := logSpec.Max(core.Attrs{"axes": []int{1, 2}, "keepdim": true})
	logSpec = logSpec.Maximum(top.Sub(core.Scalar(8, core.F32, dev)))
	return logSpec.Add(core.Scalar(4, core.F32, dev)).Div(core.Scalar(4, core.F32, dev))
}
