package abi

import "math"

// The audio and video models' methods as wt_call targets (call.go):
// Whisper and its streaming, TimeSformer, the Conformer encoder and
// SpeechT5 with its vocoder.

var audioCalls = map[string]method{
	"whisper.load":          {"whisper handle", func(c *CallArgs) func() (any, error) { return loadModel(c, whisperLoad, nil) }},
	"whisper.free":          {"null", freeCall(whisperFree)},
	"whisper.sampling_rate": {"integer (Hz)", getCall(whisperSamplingRate)},
	"whisper.tokenizer":     {"tokenizer handle (the model's)", getCall(whisperTokenizer)},
	"whisper.generate": {"tensor (waves, length) i64 token ids, padded with the pad token", func(c *CallArgs) func() (any, error) {
		waves, maxNew, beams := c.Tensors("waves"), c.IntIn("max_new_tokens", 0, 0, math.MaxInt32), c.IntIn("num_beams", 0, 0, 64)
		return func() (any, error) { return whisperGenerate(c.Self, waves, int(maxNew), int(beams)) }
	}},
	"whisper.transcribe": {"list of strings, one a waveform", func(c *CallArgs) func() (any, error) {
		waves, maxNew, beams := c.Tensors("waves"), c.IntIn("max_new_tokens", 0, 0, math.MaxInt32), c.IntIn("num_beams", 0, 0, 64)
		return func() (any, error) { return transcribe(c.Self, waves, int(maxNew), int(beams)) }
	}},

	"whisper_stream.new": {"whisper_stream handle", func(c *CallArgs) func() (any, error) {
		model := c.Object("model", "whisper")
		chunk, maxNew := c.IntIn("chunk_samples", 0, 0, math.MaxInt32), c.IntIn("max_new_tokens", 0, 0, math.MaxInt32)
		window, trim := c.IntIn("window_samples", 0, 0, math.MaxInt32), c.Bool("trim_encoder", false)
		tps := c.Float("tokens_per_second", 0)
		return func() (any, error) {
			return whisperStreamNew(model, int(chunk), int(maxNew), int(window), trim, tps)
		}
	}},
	"whisper_stream.free": {"null", freeCall(whisperStreamFree)},
	// push returns the updates themselves: the C ABI's push-then-read pair
	// in one call.
	"whisper_stream.push": {`list of updates, one a completed chunk (and the last with final): "chunk", "samples", "committed", ` +
		`"tentative", "committed_text", "tentative_text", "elapsed_ms", "final", "drafted"`, func(c *CallArgs) func() (any, error) {
		samples, final := c.OptTensor("samples"), c.Bool("final", false)
		return func() (any, error) {
			if _, err := whisperStreamPush(c.Self, samples, final); err != nil {
				return nil, err
			}
			return rawJSON(whisperStreamRead(c.Self))
		}
	}},

	"timesformer.load": {"timesformer handle", func(c *CallArgs) func() (any, error) { return loadModel(c, timesformerLoad, nil) }},
	"timesformer.free": {"null", freeCall(timesformerFree)},
	"timesformer.info": {`object: "model", "attention_type", "num_frames", "image_size", "patch_size", "num_channels", ` +
		`"hidden_size", "device", and "labels" for a classifier`, func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return rawJSON(timesformerInfoJSON(c.Self)) }
	}},
	"timesformer.forward": {`object: "logits" tensor (B, labels) or null, "last_hidden_state" tensor or null`, func(c *CallArgs) func() (any, error) {
		pixels, logits, hidden := c.Tensor("pixels"), c.Bool("logits", true), c.Bool("last_hidden_state", true)
		return func() (any, error) {
			l, h, err := timesformerForward(c.Self, pixels, logits, hidden)
			return map[string]any{"logits": handleOrNil(l), "last_hidden_state": handleOrNil(h)}, err
		}
	}},

	"conformer.load":          {"conformer handle", func(c *CallArgs) func() (any, error) { return loadModel(c, conformerLoad, nil) }},
	"conformer.free":          {"null", freeCall(conformerFree)},
	"conformer.sampling_rate": {"integer (Hz)", getCall(conformerSamplingRate)},
	"conformer.encode": {`object: "last_hidden_state" tensor (waves, frames, hidden), "frame_mask" tensor (waves, frames) bool or null`, func(c *CallArgs) func() (any, error) {
		waves, mask := c.Tensors("waves"), c.Bool("frame_mask", false)
		return func() (any, error) {
			h, m, err := conformerEncode(c.Self, waves, mask)
			return map[string]any{"last_hidden_state": h, "frame_mask": handleOrNil(m)}, err
		}
	}},

	"speecht5.load": {"speecht5 handle", func(c *CallArgs) func() (any, error) {
		path, vocoder, dev := c.Path("path", ""), c.Str("vocoder", ""), c.Str("device", "")
		return func() (any, error) { return speechT5Load(path, vocoder, dev) }
	}},
	"speecht5.free":          {"null", freeCall(speechT5Free)},
	"speecht5.sampling_rate": {"integer (Hz): the vocoder's; an error without one", getCall(speechT5SamplingRate)},
	"speecht5.has_vocoder": {"bool", func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return speechHasVocoder(c.Self) }
	}},
	"speecht5.tokenize": {`object: "input_ids", "attention_mask" tensors (texts, length)`, func(c *CallArgs) func() (any, error) {
		texts := c.Strings("texts")
		return func() (any, error) {
			ids, mask, err := speechT5Tokenize(c.Self, texts, true)
			return map[string]int64{"input_ids": ids, "attention_mask": mask}, err
		}
	}},
	"speecht5.generate": {`object: "spectrogram" tensor (texts, frames, mels), "lengths" list of each text's frames, "waveform" tensor (texts, samples) or null`, speechGenerateCall},
	"speecht5.vocode": {"tensor (B, samples)", func(c *CallArgs) func() (any, error) {
		spec := c.Tensor("spectrogram")
		return func() (any, error) { return speechT5Vocode(c.Self, spec) }
	}},
}

// speechGenerateCall is generate_speech on texts (tokenized here) or on
// input_ids with an optional attention_mask; vocode runs the vocoder when
// the model has one. The lengths come back as numbers.
func speechGenerateCall(c *CallArgs) func() (any, error) {
	var texts []string
	var ids, mask int64
	if c.Has("texts") {
		texts = c.Strings("texts")
	} else {
		ids, mask = c.Tensor("input_ids"), c.OptTensor("attention_mask")
	}
	spk := c.Tensor("speaker_embeddings")
	o := SpeechOptions{Threshold: c.Float("threshold", 0.5), MinLenRatio: c.Float("minlenratio", 0),
		MaxLenRatio: c.Float("maxlenratio", 20), PrenetDropout: c.Bool("prenet_dropout", false),
		Seed: uint64(c.IntIn("seed", 0, 0, math.MaxInt64)), Prefix: c.OptTensor("prefix"),
		PrefillChunk: int(c.IntIn("prefill_chunk", 0, 0, math.MaxInt32))}
	vocode := c.Bool("vocode", true)
	return func() (any, error) {
		if texts != nil {
			var err error
			if ids, mask, err = speechT5Tokenize(c.Self, texts, true); err != nil {
				return nil, err
			}
			defer func() { _, _ = TensorFree(ids), TensorFree(mask) }()
		}
		voc, err := speechHasVocoder(c.Self)
		if err != nil {
			return nil, err
		}
		spec, lengths, wave, err := speechT5Generate(c.Self, ids, mask, spk, o, vocode && voc)
		if err != nil {
			return nil, err
		}
		n, err := ints(lengths, nil)
		return map[string]any{"spectrogram": spec, "lengths": n, "waveform": handleOrNil(wave)}, err
	}
}

func speechHasVocoder(h int64) (bool, error) {
	s, err := speechT5Models.get(h)
	if err != nil {
		return false, err
	}
	return s.voc != nil, nil
}

// transcribe is generate, then the model's tokenizer's batch decode without
// special tokens: each waveform's text.
func transcribe(h int64, waves []int64, maxNew, beams int) ([]string, error) {
	ids, err := whisperGenerate(h, waves, maxNew, beams)
	if err != nil {
		return nil, err
	}
	defer func() { _ = TensorFree(ids) }()
	tok, err := whisperTokenizer(h)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tokenizerFree(tok) }()
	return batchDecode(tok, ids, true)
}

// handleOrNil is a result's optional tensor: JSON null for none (0).
func handleOrNil(h int64) any {
	if h == 0 {
		return nil
	}
	return h
}
