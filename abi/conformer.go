package abi

import (
	"github.com/webtensor/webtensor/multimodal"
)

// Speech encoding and resampling (the conformer.* targets, audio.resample):
// package multimodal's Wav2Vec2ConformerModel with its feature
// extractor, and Resample, behind the same handles and errors as the
// other multimodal calls.

var conformerModels = newObjects[*conformerModel]("conformer model")

// conformerModel is a Wav2Vec2Conformer folder's model and its feature
// extractor (preprocessor_config.json, or transformers' defaults without
// one).
type conformerModel struct {
	m  *multimodal.Wav2Vec2ConformerModel
	fe *multimodal.Wav2Vec2FeatureExtractor
}

// conformerLoad is conformer.load: a Wav2Vec2ConformerModel folder
// (config.json, model.safetensors) and, when present, its
// preprocessor_config.json.
func conformerLoad(dir, device string) (int64, error) {
	m, fe, err := loadWithFeatures("conformer.load", dir, device, multimodal.LoadWav2Vec2ConformerModel,
		multimodal.LoadWav2Vec2FeatureExtractor, multimodal.NewWav2Vec2FeatureExtractor())
	if err != nil {
		return 0, err
	}
	return conformerModels.add(&conformerModel{m: m, fe: fe}), nil
}

// conformerFree is conformer.free.
func conformerFree(h int64) error { return conformerModels.free(h) }

// conformerSamplingRate is conformer.sampling_rate: the rate the
// feature extractor expects waveforms at.
func conformerSamplingRate(h int64) (int, error) {
	c, err := conformerModels.get(h)
	if err != nil {
		return 0, err
	}
	return c.fe.SamplingRate, nil
}

// conformerEncode is conformer.encode: waveforms (1-D float tensors
// at the sampling rate) through the feature extractor and the encoder, as
// transformers' model(**extractor(waves, padding=True)): the last hidden
// state (B, frames, hidden) on the model's device and, when wantMask, the
// (B, frames) bool mask of each waveform's frames (0 otherwise).
func conformerEncode(h int64, waves []int64, wantMask bool) (hidden, mask int64, err error) {
	const fn = "conformer.encode"
	c, err := conformerModels.get(h)
	if err != nil {
		return 0, 0, err
	}
	if len(waves) == 0 {
		return 0, 0, Invalidf("%s: no waveforms", fn)
	}
	host := make([][]float32, len(waves))
	lengths := make([]int, len(waves))
	for i, wh := range waves {
		if host[i], err = waveform(wh, i); err != nil {
			return 0, 0, Prefix(err, "%s", fn)
		}
		lengths[i] = len(host[i])
	}
	in, err := c.fe.Extract(host, c.m.Device())
	if err != nil {
		return 0, 0, Invalidf("%s: %v", fn, err)
	}
	values := in.InputValues
	if values.DType() != c.m.DType() {
		values = values.Cast(c.m.DType())
	}
	out, err := c.m.Forward(values, in.AttentionMask)
	if err != nil {
		return 0, 0, Invalidf("%s: %v", fn, err)
	}
	frames := out.FrameMask
	if wantMask && frames == nil {
		// Without an attention mask the encoder attends to every frame;
		// the mask still tells each waveform's own.
		if frames, err = c.m.FrameMask(lengths, values.Shape()[1]); err != nil {
			return 0, 0, Invalidf("%s: %v", fn, err)
		}
	}
	if hidden, err = NewOutput(out.LastHiddenState); err != nil {
		return 0, 0, err
	}
	if wantMask {
		if mask, err = NewOutput(frames); err != nil {
			freeHandles(hidden)
			return 0, 0, err
		}
	}
	return hidden, mask, nil
}

// audioResample is audio.resample: x (..., time) resampled from fromHz
// to toHz on its device, as torchaudio.functional.resample's default.
// Equal rates give a new handle to the same values, read-only when x's is.
func audioResample(x int64, fromHz, toHz int) (int64, error) {
	const fn = "audio.resample"
	t, readOnly, err := Lookup(x)
	if err != nil {
		return 0, Prefix(err, "%s: x", fn)
	}
	y, err := multimodal.Resample(t, fromHz, toHz)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	if y == t {
		return NewHandle(y, readOnly), nil
	}
	return NewOutput(y)
}
