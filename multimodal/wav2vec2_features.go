package multimodal

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/core"
)

// Wav2Vec2FeatureExtractor is transformers' Wav2Vec2FeatureExtractor, the
// front end of wav2vec 2.0 and Conformer speech encoders: the raw
// waveforms, padded on the right to the batch's longest with
// PaddingValue and, with DoNormalize, scaled to zero mean and unit
// variance. It runs on the host: it is a few passes over the samples.
type Wav2Vec2FeatureExtractor struct {
	SamplingRate int     // sampling_rate
	PaddingValue float64 // padding_value
	DoNormalize  bool    // do_normalize
	// ReturnAttentionMask (return_attention_mask) makes Extract return the
	// mask of real samples. It changes the normalisation too, as in
	// transformers: with the mask the statistics cover each waveform's own
	// samples and the padding stays PaddingValue; without it they cover
	// the padded vector, padding included.
	ReturnAttentionMask bool
}

// NewWav2Vec2FeatureExtractor is a feature extractor with transformers'
// defaults (16 kHz, padding 0, do_normalize, no attention mask).
func NewWav2Vec2FeatureExtractor() *Wav2Vec2FeatureExtractor {
	return &Wav2Vec2FeatureExtractor{SamplingRate: 16000, DoNormalize: true}
}

var wav2vec2FeatureKeys = map[string]configKey[Wav2Vec2FeatureExtractor]{
	"feature_extractor_type": only[Wav2Vec2FeatureExtractor](`"Wav2Vec2FeatureExtractor"`),
	"processor_class":        skipKey[Wav2Vec2FeatureExtractor],
	// One value per sample: mono audio.
	"feature_size":          only[Wav2Vec2FeatureExtractor]("1"),
	"sampling_rate":         field(func(c *Wav2Vec2FeatureExtractor) any { return &c.SamplingRate }),
	"padding_value":         field(func(c *Wav2Vec2FeatureExtractor) any { return &c.PaddingValue }),
	"do_normalize":          field(func(c *Wav2Vec2FeatureExtractor) any { return &c.DoNormalize }),
	"return_attention_mask": field(func(c *Wav2Vec2FeatureExtractor) any { return &c.ReturnAttentionMask }),
	// transformers' normalisation with a mask assumes the real samples
	// come first; left padding would normalise the wrong ones.
	"padding_side": only[Wav2Vec2FeatureExtractor](`"right"`),
}

// ParseWav2Vec2FeatureExtractor reads a preprocessor_config.json. A key
// webtensor does not know, or a value it does not implement (several
// features per sample, left padding), fails naming the key.
func ParseWav2Vec2FeatureExtractor(data []byte) (*Wav2Vec2FeatureExtractor, error) {
	fe := NewWav2Vec2FeatureExtractor()
	if err := parseConfig("Wav2Vec2 feature extractor", data, fe, wav2vec2FeatureKeys); err != nil {
		return nil, err
	}
	if err := positive("Wav2Vec2 feature extractor", map[string]int{"sampling_rate": fe.SamplingRate}); err != nil {
		return nil, err
	}
	return fe, nil
}

// LoadWav2Vec2FeatureExtractor reads dir/preprocessor_config.json.
func LoadWav2Vec2FeatureExtractor(dir string) (*Wav2Vec2FeatureExtractor, error) {
	path := filepath.Join(dir, "preprocessor_config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("multimodal: LoadWav2Vec2FeatureExtractor: %w", err)
	}
	fe, err := ParseWav2Vec2FeatureExtractor(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return fe, nil
}

// Wav2Vec2Inputs are a batch's model inputs.
type Wav2Vec2Inputs struct {
	InputValues *core.Tensor // (B, T) float32: the waveforms, padded to the longest T
	// AttentionMask (B, T) int64 is 1 at real samples and 0 at padding;
	// nil unless ReturnAttentionMask.
	AttentionMask *core.Tensor
}

// Extract makes the inputs of mono waveforms sampled at SamplingRate on
// dev: what transformers' extractor(waves, padding=True) returns.
func (fe *Wav2Vec2FeatureExtractor) Extract(waves [][]float32, dev core.Device) (*Wav2Vec2Inputs, error) {
	if len(waves) == 0 {
		return nil, fmt.Errorf("multimodal: Wav2Vec2FeatureExtractor.Extract: no waveforms")
	}
	n := 0
	for i, w := range waves {
		if len(w) == 0 {
			return nil, fmt.Errorf("multimodal: Wav2Vec2FeatureExtractor.Extract: waveform %d is empty", i)
		}
		n = max(n, len(w))
	}
	values := make([]float32, len(waves)*n)
	var mask []int64
	if fe.ReturnAttentionMask {
		mask = make([]int64, len(waves)*n)
	}
	for i, w := range waves {
		row := values[i*n : (i+1)*n]
		copy(row, w)
		for j := len(w); j < n; j++ {
			row[j] = float32(fe.PaddingValue)
		}
		if mask != nil {
			for j := range w {
				mask[i*n+j] = 1
			}
		}
		switch {
		case !fe.DoNormalize:
		case mask != nil:
			normalizeWave(row[:len(w)])
		default:
			normalizeWave(row)
		}
	}
	in := &Wav2Vec2Inputs{InputValues: core.FromSlice(values, core.Shape{len(waves), n}, dev)}
	if mask != nil {
		in.AttentionMask = core.FromSlice(mask, core.Shape{len(waves), n}, dev)
	}
	return in, nil
}
