package abi

import "math"

// The audio and video models' methods as wt_call targets (call.go):
// Whisper and its streaming, TimeSformer, the Conformer encoder and
// SpeechT5 with its vocoder.

var audioCalls = map[string]CallFunc{
	"whisper.load":          func(c *CallArgs) func() (any, error) { return loadModel(c, whisperLoad, nil) },
	"whisper.free":          freeCall(whisperFree),
	"whisper.sampling_rate": getCall(whisperSamplingRate),
	"whisper.tokenizer":     getCall(whisperTokenizer),
	"whisper.generate": func(c *CallArgs) func() (any, error) {
		waves, maxNew, beams := c.Tensors("waves"), c.IntIn("max_new_tokens", 0, 0, math.MaxInt32), c.IntIn("num_beams", 0, 0, 64)
		return func() (any, error) { return whisperGenerate(c.Self, waves, int(maxNew), int(beams)) }
	},
	"whisper.transcribe": func(c *CallArgs) func() (any, error) {
		waves, maxNew, beams := c.Tensors("waves"), c.IntIn("max_new_tokens", 0, 0, math.MaxInt32), c.IntIn("num_beams", 0, 0, 64)
		return func() (any, error) { return transcribe(c.Self, waves, int(maxNew), int(beams)) }
	},

	"whisper_stream.new": func(c *CallArgs) func() (any, error) {
		model := c.Object("model", "whisper")
		chunk, maxNew := c.IntIn("chunk_samples", 0, 0, math.MaxInt32), c.IntIn("max_new_tokens", 0, 0, math.MaxInt32)
		window, trim := c.IntIn("window_samples", 0, 0, math.MaxInt32), c.Bool("trim_encoder", false)
		tps := c.Float("tokens_per_second", 0)
		return func() (any, error) {
			return whisperStreamNew(model, int(chunk), int(maxNew), int(window), trim, tps)
		}
	},
	"whisper_stream.free": freeCall(whisperStreamFree),
	// push returns the updates themselves: the C ABI's push-then-read pair
	// in one call.
	"whisper_stream.push": func(c *CallArgs) func() (any, error) {
		samples, final := c.OptTensor("samples"), c.Bool("final", false)
		return func() (any, error) {
			if _, err := whisperStreamPush(c.Self, samples, final); err != nil {
				return nil, err
			}
			return rawJSON(whisperStreamRead(c.Self))
		}
	},

	"timesformer.load": func(c *CallArgs) func() (any, error) { return loadModel(c, timesformerLoad, nil) },
	"timesformer.free": freeCall(timesformerFree),
	"timesformer.info": func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return rawJSON(timesformerInfoJSON(c.Self)) }
	},
	"timesformer.forward": func(c *CallArgs) func() (any, error) {
		pixels, logits, hidden := c.Tensor("pixels"), c.Bool("logits", true), c.Bool("last_hidden_state", true)
		return func() (any, error) {
			l, h, err := timesformerForward(c.Self, pixels, logits, hidden)
			return map[string]any{"logits": handleOrNil(l), "last_hidden_state": handleOrNil(h)}, err
		}
	},

	"conformer.load":          func(c *CallArgs) func() (any, error) { return loadModel(c, conformerLoad, nil) },
	"conformer.free":          freeCall(conformerFree),
	"conformer.sampling_rate": getCall(conformerSamplingRate),
	"conformer.encode": func(c *CallArgs) func() (any, error) {
		waves, mask := c.Tensors("waves"), c.Bool("frame_mask", false)
		return func() (any, error) {
			h, m, err := conformerEncode(c.Self, waves, mask)
			return map[string]any{"last_hidden_state": h, "frame_mask": handleOrNil(m)}, err
		}
	},

	"speecht5.load": func(c *CallArgs) func() (any, error) {
		path, vocoder, dev := c.Path("path", ""), c.Str("vocoder", ""), c.Str("device", "")
		return func() (any, error) { return speechT5Load(path, vocoder, dev) }
	},
	"speecht5.free":          freeCall(speechT5Free),
	"speecht5.sampling_rate": getCall(speechT5SamplingRate),
	"speecht5.has_vocoder": func(c *CallArgs) func() (any, error) {
		return func() (any, error) { return speechHasVocoder(c.Self) }
	},
	"speecht5.tokenize": func(c *CallArgs) func() (any, error) {
		texts := c.Strings("texts")
		return func() (any, error) {
			ids, mask, err := speechT5Tokenize(c.Self, texts, true)
			return map[string]int64{"input_ids": ids, "attention_mask": mask}, err
		}
	},
	"speecht5.generate": speechGenerateCall,
	"speecht5.vocode": func(c *CallArgs) func() (any, error) {
		spec := c.Tensor("spectrogram")
		return func() (any, error) { return speechT5Vocode(c.Self, spec) }
	},
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
