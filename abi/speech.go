package abi

import (
	"encoding/json"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/multimodal"
)

// Speech synthesis and streaming recognition (the speecht5.* and
// whisper_stream.* targets): package multimodal's SpeechT5ForTextToSpeech with
// its tokenizer and HiFi-GAN vocoder, and WhisperStream, behind the same
// handles and errors as the other multimodal calls.

var (
	speechT5Models = newObjects[*speechT5Model]("speecht5 model")
	whisperStreams = newObjects[*whisperStream]("whisper stream")
)

// speechT5Model is a SpeechT5ForTextToSpeech folder's model, its tokenizer
// when the folder has spm_char.model (callers without one pass ids), and
// the vocoder of a second folder when one was named.
type speechT5Model struct {
	m   *multimodal.SpeechT5ForTextToSpeech
	tok *multimodal.SpeechT5Tokenizer
	voc *multimodal.SpeechT5HifiGan
}

// speechT5Load is speecht5.load.
func speechT5Load(dir, vocoderDir, device string) (int64, error) {
	const fn = "speecht5.load"
	opts, err := folderOptions(fn, dir, device)
	if err != nil {
		return 0, err
	}
	m, err := multimodal.LoadSpeechT5ForTextToSpeech(dir, opts...)
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	s := &speechT5Model{m: m}
	loadTokenizer := func(dir string) (*multimodal.SpeechT5Tokenizer, error) { return multimodal.LoadSpeechT5Tokenizer(dir) }
	if s.tok, err = ifPresent(dir, "spm_char.model", loadTokenizer, nil); err != nil {
		return 0, loadFailed(fn, err)
	}
	if vocoderDir != "" {
		if err := checkDir(fn, vocoderDir); err != nil {
			return 0, err
		}
		if s.voc, err = multimodal.LoadSpeechT5HifiGan(vocoderDir, opts...); err != nil {
			return 0, loadFailed(fn, err)
		}
		if in := s.voc.Config.ModelInDim; in != m.Config.NumMelBins {
			return 0, Invalidf("%s: the vocoder's model_in_dim %d differs from the model's num_mel_bins %d", fn, in, m.Config.NumMelBins)
		}
	}
	return speechT5Models.add(s), nil
}

// speechT5Free is speecht5.free.
func speechT5Free(h int64) error { return speechT5Models.free(h) }

// speechT5SamplingRate is speecht5.sampling_rate: the vocoder's rate.
func speechT5SamplingRate(h int64) (int, error) {
	s, err := speechT5Models.get(h)
	if err != nil {
		return 0, err
	}
	if s.voc == nil {
		return 0, Invalidf("speecht5.sampling_rate: the model was loaded without a vocoder")
	}
	return s.voc.Config.SamplingRate, nil
}

// speechT5Tokenize is speecht5.tokenize: texts to (B, T) i64 ids and
// their attention mask, padded with pad_token_id, on the model's device.
func speechT5Tokenize(h int64, texts []string, wantMask bool) (ids, mask int64, err error) {
	const fn = "speecht5.tokenize"
	s, err := speechT5Models.get(h)
	if err != nil {
		return 0, 0, err
	}
	if s.tok == nil {
		return 0, 0, Invalidf("%s: the model's folder has no spm_char.model; pass token ids to speecht5.generate", fn)
	}
	it, mt, err := s.tok.EncodeBatch(texts, s.m.Device())
	if err != nil {
		return 0, 0, Invalidf("%s: %v", fn, err)
	}
	if ids, err = NewOutput(it); err != nil {
		return 0, 0, err
	}
	if wantMask {
		if mask, err = NewOutput(mt); err != nil {
			freeHandles(ids)
			return 0, 0, err
		}
	}
	return ids, mask, nil
}

// SpeechOptions are speecht5.generate's settings.
type SpeechOptions struct {
	Threshold, MinLenRatio, MaxLenRatio float64
	PrenetDropout                       bool
	Seed                                uint64
	Prefix                              int64 // 0: none
	PrefillChunk                        int
}

// speechT5Generate is speecht5.generate: generate_speech on ids (and an
// optional mask, 0 for none) with speaker embeddings; the spectrogram
// (B, L, mels), the lengths (B) i64 on the CPU and, when wantWave, the
// vocoder's waveforms (B, samples).
func speechT5Generate(h, ids, mask, speakers int64, o SpeechOptions, wantWave bool) (spec, lengths, wave int64, err error) {
	const fn = "speecht5.generate"
	s, err := speechT5Models.get(h)
	if err != nil {
		return 0, 0, 0, err
	}
	if wantWave && s.voc == nil {
		return 0, 0, 0, Invalidf("%s: a waveform was asked for, but the model was loaded without a vocoder", fn)
	}
	it, err := TensorOf(ids)
	if err != nil {
		return 0, 0, 0, Prefix(err, "%s: ids", fn)
	}
	var mt, prefix *core.Tensor
	if mask != 0 {
		if mt, err = TensorOf(mask); err != nil {
			return 0, 0, 0, Prefix(err, "%s: mask", fn)
		}
	}
	st, err := TensorOf(speakers)
	if err != nil {
		return 0, 0, 0, Prefix(err, "%s: speakers", fn)
	}
	if o.Prefix != 0 {
		if prefix, err = TensorOf(o.Prefix); err != nil {
			return 0, 0, 0, Prefix(err, "%s: prefix", fn)
		}
	}
	out, err := s.m.GenerateSpeech(it, mt, st, multimodal.SpeechOptions{Threshold: o.Threshold, MinLenRatio: o.MinLenRatio,
		MaxLenRatio: o.MaxLenRatio, PrenetDropout: o.PrenetDropout, Seed: int64(o.Seed), Prefix: prefix, PrefillChunk: o.PrefillChunk})
	if err != nil {
		return 0, 0, 0, Invalidf("%s: %v", fn, err)
	}
	var w *core.Tensor
	if wantWave {
		if w, err = s.voc.Forward(out.Spectrogram); err != nil {
			return 0, 0, 0, Invalidf("%s: %v", fn, err)
		}
	}
	n := make([]int64, len(out.Lengths))
	for i, l := range out.Lengths {
		n[i] = int64(l)
	}
	if spec, err = NewOutput(out.Spectrogram); err != nil {
		return 0, 0, 0, err
	}
	if lengths, err = NewOutput(core.FromSlice(n, core.Shape{len(n)}, core.CPU)); err != nil {
		freeHandles(spec)
		return 0, 0, 0, err
	}
	if wantWave {
		if wave, err = NewOutput(w); err != nil {
			freeHandles(spec, lengths)
			return 0, 0, 0, err
		}
	}
	return spec, lengths, wave, nil
}

// speechT5Vocode is speecht5.vocode: the vocoder on a spectrogram (B,
// L, mels) or (L, mels).
func speechT5Vocode(h, spectrogram int64) (int64, error) {
	const fn = "speecht5.vocode"
	s, err := speechT5Models.get(h)
	if err != nil {
		return 0, err
	}
	if s.voc == nil {
		return 0, Invalidf("%s: the model was loaded without a vocoder", fn)
	}
	t, err := TensorOf(spectrogram)
	if err != nil {
		return 0, Prefix(err, "%s: spectrogram", fn)
	}
	w, err := s.voc.Forward(t)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(w)
}

// whisperStream is a WhisperStream and the JSON of its last push, which
// whisper_stream.read copies out as often as the caller's buffer needs.
type whisperStream struct {
	mu   sync.Mutex
	s    *multimodal.WhisperStream
	last string
}

// streamUpdate is one update as JSON spells it.
type streamUpdate struct {
	Chunk         int     `json:"chunk"`
	Samples       int     `json:"samples"`
	Committed     []int   `json:"committed"`
	Tentative     []int   `json:"tentative"`
	CommittedText string  `json:"committed_text"`
	TentativeText string  `json:"tentative_text"`
	ElapsedMS     float64 `json:"elapsed_ms"`
	Final         bool    `json:"final"`
	Drafted       int     `json:"drafted"`
}

// whisperStreamNew is whisper_stream.new: a stream on a whisper model
// (which the stream keeps using, even after whisper.free).
func whisperStreamNew(model int64, chunkSamples, maxNewTokens, windowSamples int, trimEncoder bool, tokensPerSecond float64) (int64, error) {
	const fn = "whisper_stream.new"
	w, err := whisperModels.get(model)
	if err != nil {
		return 0, err
	}
	s, err := multimodal.NewWhisperStream(w.m, w.fe, w.tok, multimodal.StreamOptions{ChunkSamples: chunkSamples,
		MaxNewTokens: maxNewTokens, WindowSamples: windowSamples, TrimEncoder: trimEncoder, TokensPerSecond: tokensPerSecond})
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return whisperStreams.add(&whisperStream{s: s, last: "[]"}), nil
}

// whisperStreamFree is whisper_stream.free.
func whisperStreamFree(h int64) error { return whisperStreams.free(h) }

// whisperStreamPush is whisper_stream.push: samples (a 1-D float
// tensor, 0 for none) added, every whole chunk processed, then with final
// the rest and the end of the stream; the updates' count, their JSON kept
// for whisper_stream.read.
func whisperStreamPush(h, samples int64, final bool) (int, error) {
	const fn = "whisper_stream.push"
	ws, err := whisperStreams.get(h)
	if err != nil {
		return 0, err
	}
	var host []float32
	if samples != 0 {
		if host, err = waveform(samples, 0); err != nil {
			return 0, Prefix(err, "%s", fn)
		}
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	updates, err := ws.s.Push(host)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	if final {
		u, err := ws.s.Flush()
		if err != nil {
			return 0, Invalidf("%s: %v", fn, err)
		}
		updates = append(updates, u)
	}
	out := make([]streamUpdate, len(updates))
	for i, u := range updates {
		// Empty lists, not null, in the JSON.
		out[i] = streamUpdate{Chunk: u.Chunk, Samples: u.Samples, Committed: append([]int{}, u.Committed...),
			Tentative:     append([]int{}, u.Tentative...),
			CommittedText: u.CommittedText, TentativeText: u.TentativeText,
			ElapsedMS: float64(u.Elapsed.Microseconds()) / 1000, Final: u.Final, Drafted: u.Drafted}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	ws.last = string(raw)
	return len(out), nil
}

// whisperStreamRead is whisper_stream.read: the last push's updates as
// a JSON array.
func whisperStreamRead(h int64) (string, error) {
	ws, err := whisperStreams.get(h)
	if err != nil {
		return "", err
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.last, nil
}
