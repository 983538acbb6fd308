package multimodal

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/webtensor/webtensor/core"
)

// WhisperStream transcribes audio that arrives in chunks, as
// whisper-streaming does with its LocalAgreement-2 policy: after each
// chunk the whole buffered audio is transcribed greedily, the decoder
// forced to start with the tokens already committed, and the tokens two
// consecutive hypotheses agree on (their longest common prefix) are
// committed; the rest of the latest hypothesis is tentative.
//
// What is reused from chunk to chunk, and why no more:
//
//   - The decoder prefix: the committed tokens are not decoded again one
//     by one; they go through the decoder in one call (chunked prefill of
//     the prompt and the committed prefix), and only the tokens after
//     them are generated step by step with the KV cache.
//   - The previous hypothesis, as a draft: its tokens after the committed
//     ones are fed with them and kept as far as greedy decoding picks
//     them again (greedyFrom), so a stable transcript costs one decoder
//     call per chunk instead of one per token.
//   - Not the prefix's keys and values: each decoder layer cross-attends
//     to the encoder's states, and those change when audio is added, so
//     every layer after the first computes other keys and values for the
//     same tokens; reusing the previous chunk's would give other tokens
//     than transcribing the audio afresh.
//   - Not the encoder: Whisper's encoder takes a fixed window (padded with
//     silence), its log-mel features are scaled by the window's maximum,
//     and its self-attention is bidirectional over the whole window, so
//     every encoder state depends on every sample, including those of the
//     newest chunk. Encoding the new chunk alone against cached states of
//     the earlier ones (chunked prefill) would not give the states
//     transformers gives; each chunk runs the encoder over the window.
//
// The buffer holds at most WindowSamples (by default the feature
// extractor's window, 30 s for Whisper): a chunk that would overflow it
// first finalises the window (its hypothesis is committed whole) and
// starts a new one with no prompt of the previous text.
//
// TrimEncoder trades that exactness for speed: the encoder runs on the
// buffered audio's frames only (whisper.cpp's audio_ctx), so a chunk
// costs in proportion to the buffer instead of a whole window, but the
// states, and so the tokens, are no longer transformers'.
type WhisperStream struct {
	m   *WhisperForConditionalGeneration
	fe  *WhisperFeatureExtractor
	tok *Tokenizer

	chunk     int       // samples per chunk
	window    int       // samples per window
	trim      bool      // encode only the buffered audio
	maxNew    int       // tokens per hypothesis, as Generate's budget
	rate      float64   // tokens per second of buffered audio (0: no such bound)
	pending   []float32 // samples not yet processed (less than a chunk)
	buffer    []float32 // the current window's audio
	committed []int     // the current window's committed tokens
	previous  []int     // the current window's last hypothesis
	done      []int     // tokens of finalised windows
	chunks    int       // updates given
	accepted  int       // the last hypothesis' draft tokens taken (greedyFrom)
	samples   int       // samples processed
}

// StreamOptions configures NewWhisperStream.
type StreamOptions struct {
	// ChunkSamples is how much audio each update processes (0: one second
	// at the extractor's sampling rate).
	ChunkSamples int
	// MaxNewTokens bounds each hypothesis, as Generate's option does
	// (0: the generation config's max_length).
	MaxNewTokens int
	// WindowSamples is the most audio one window buffers before it is
	// finalised (0: the feature extractor's window, its maximum).
	WindowSamples int
	// TrimEncoder encodes only the buffered audio's frames instead of the
	// padded window: faster, not transformers' output (see WhisperStream).
	TrimEncoder bool
	// TokensPerSecond, when positive, bounds each hypothesis at that many
	// tokens per second of buffered audio as well (rounded up). Speech
	// runs at about 3 tokens a second (150 words a minute), so a bound of
	// 5 or more cuts nothing a speaker says; it stops a hallucination
	// loop, the failure where Whisper repeats a phrase until its token
	// budget runs out (on noise, music or silence), from costing a whole
	// MaxNewTokens of decoder steps every chunk.
	TokensPerSecond float64
}

// StreamUpdate is what one chunk (or Flush) gives.
type StreamUpdate struct {
	Chunk   int // updates so far, this one included
	Samples int // samples processed so far
	// Committed is every token committed so far, Tentative the latest
	// hypothesis' tokens after them; the texts are their decodings
	// without special tokens.
	Committed, Tentative         []int
	CommittedText, TentativeText string
	Elapsed                      time.Duration // features, encoder and decoder for this update
	Final                        bool          // Flush's update: everything is committed
	// Drafted is how many tokens of the previous hypothesis the decoder
	// confirmed in one call instead of one call each (see greedyFrom).
	Drafted int
}

// NewWhisperStream starts a stream on m with the feature extractor fe and
// the tokenizer tok (for the texts; nil leaves them empty).
func NewWhisperStream(m *WhisperForConditionalGeneration, fe *WhisperFeatureExtractor, tok *Tokenizer, opts StreamOptions) (*WhisperStream, error) {
	if m == nil || fe == nil {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: the model and the feature extractor are required")
	}
	if fe.FeatureSize != m.Model.Config.NumMelBins {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: the feature extractor's feature_size %d differs from num_mel_bins %d", fe.FeatureSize, m.Model.Config.NumMelBins)
	}
	chunk := opts.ChunkSamples
	if chunk == 0 {
		chunk = fe.SamplingRate
	}
	window := opts.WindowSamples
	if window == 0 {
		window = fe.NSamples()
	}
	if window < 0 || window > fe.NSamples() {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: WindowSamples %d must be in [1, %d] (the feature extractor's window)", window, fe.NSamples())
	}
	if chunk < 0 || chunk > window {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: ChunkSamples %d must be in [1, %d] (the window)", chunk, window)
	}
	if len(m.Generation.LangToID) > 0 && forcedLanguage(m.Generation) < 0 {
		// Detecting the language anew on every chunk could change the
		// prompt under the committed tokens.
		return nil, fmt.Errorf("multimodal: NewWhisperStream: the generation config asks for language detection; force a language (forced_decoder_ids) to stream")
	}
	prompt, err := m.prompts(nil, 1)
	if err != nil {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: %w", err)
	}
	maxNew, err := m.maxNewTokens(len(prompt[0]), opts.MaxNewTokens)
	if err != nil {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: %w", err)
	}
	if opts.TokensPerSecond < 0 || math.IsNaN(opts.TokensPerSecond) || math.IsInf(opts.TokensPerSecond, 0) {
		return nil, fmt.Errorf("multimodal: NewWhisperStream: TokensPerSecond %v must be a finite number >= 0 (0: no bound)", opts.TokensPerSecond)
	}
	return &WhisperStream{m: m, fe: fe, tok: tok, chunk: chunk, window: window, trim: opts.TrimEncoder, maxNew: maxNew,
		rate: opts.TokensPerSecond}, nil
}

// forcedLanguage is the id forced at position 1, or -1.
func forcedLanguage(g WhisperGenerationConfig) int {
	for _, f := range g.ForcedDecoderIDs {
		if f[0] != nil && *f[0] == 1 && f[1] != nil {
			return *f[1]
		}
	}
	return -1
}

// Push adds samples and processes every whole chunk they complete, giving
// one update per chunk (none when less than a chunk is waiting).
func (s *WhisperStream) Push(samples []float32) ([]StreamUpdate, error) {
	s.pending = append(s.pending, samples...)
	var out []StreamUpdate
	for len(s.pending) >= s.chunk {
		u, err := s.step(s.pending[:s.chunk], false)
		if err != nil {
			return out, err
		}
		s.pending = s.pending[s.chunk:]
		out = append(out, u)
	}
	return out, nil
}

// Flush processes what is waiting (less than a chunk, or nothing) and
// commits the final hypothesis whole: the end of the stream.
func (s *WhisperStream) Flush() (StreamUpdate, error) {
	u, err := s.step(s.pending, true)
	s.pending = nil
	return u, err
}

// step processes one chunk of audio.
func (s *WhisperStream) step(chunk []float32, final bool) (StreamUpdate, error) {
	start := time.Now()
	if len(s.buffer)+len(chunk) > s.window {
		// The window is full: what it heard is final.
		s.done = append(s.done, s.previous...)
		s.buffer, s.committed, s.previous = nil, nil, nil
	}
	s.buffer = append(s.buffer, chunk...)
	s.chunks++
	s.samples += len(chunk)
	var hyp []int
	s.accepted = 0
	if len(s.buffer) > 0 {
		var err error
		if hyp, err = s.transcribe(); err != nil {
			return StreamUpdate{}, err
		}
	}
	if final {
		s.committed = hyp
	} else if s.previous != nil {
		// LocalAgreement-2: commit what this hypothesis and the last agree on.
		n := len(s.committed)
		for n < len(hyp) && n < len(s.previous) && hyp[n] == s.previous[n] {
			n++
		}
		s.committed = hyp[:n:n]
	}
	s.previous = hyp
	u := StreamUpdate{Chunk: s.chunks, Committed: append(append(make([]int, 0, len(s.done)+len(s.committed)), s.done...), s.committed...),
		Tentative: slices.Clone(hyp[len(s.committed):]), Final: final}
	u.Samples, u.Drafted = s.samples, s.accepted
	if s.tok != nil {
		var err error
		if u.CommittedText, err = s.tok.Decode(u.Committed, true); err != nil {
			return StreamUpdate{}, err
		}
		if u.TentativeText, err = s.tok.Decode(u.Tentative, true); err != nil {
			return StreamUpdate{}, err
		}
	}
	u.Elapsed = time.Since(start)
	return u, nil
}

// transcribe is greedy decoding of the buffer, forced to begin with the
// committed tokens, which go through the decoder in one call with the
// prompt; the hypothesis is every token after the prompt.
func (s *WhisperStream) transcribe() ([]int, error) {
	m := s.m
	n := m.Model.Config.MaxSourcePositions
	var feats *core.Tensor
	var err error
	if s.trim {
		// The buffer's frames, two per encoder position, rounded up; their
		// features are the window's, computed on less of it.
		n = min(n, (len(s.buffer)+2*s.fe.HopLength-1)/(2*s.fe.HopLength))
		feats, err = s.fe.extractFrames(s.buffer, 2*n, m.Model.Device())
	} else {
		feats, err = s.fe.Extract([][]float32{s.buffer}, m.Model.Device(), false)
	}
	if err != nil {
		return nil, err
	}
	enc, err := m.Model.encode(feats, n)
	if err != nil {
		return nil, err
	}
	prompt, err := m.prompts(enc.LastHiddenState, 1)
	if err != nil {
		return nil, err
	}
	var draft []int
	if len(s.previous) > len(s.committed) {
		draft = s.previous[len(s.committed):]
	}
	budget := s.maxNew
	if s.rate > 0 {
		budget = min(budget, max(1, int(math.Ceil(s.rate*float64(len(s.buffer))/float64(s.fe.SamplingRate)))))
	}
	hyp, accepted, err := m.greedyFrom(enc.LastHiddenState, prompt[0], s.committed, draft, budget)
	s.accepted = accepted
	return hyp, err
}

// greedyFrom is Generate's greedy decoding for one row whose first tokens
// after the prompt are forced: prompt and forced are prefilled in one
// decoder call, then tokens are picked as Generate picks them (the
// begin_suppress_tokens only at the first position after the prompt)
// until an end-of-text or maxNew tokens after the prompt.
//
// draft is a guess at the tokens after forced (the stream's previous
// hypothesis past its committed tokens): it goes through the decoder in
// the same call, and each draft token that equals the greedy pick at its
// position is taken without a decoder call of its own; from the first
// that differs, decoding goes on one token at a time, with the cache cut
// back to the tokens taken. The picks are greedy decoding's whatever the
// draft (a wrong guess only costs its share of one call), as in
// speculative decoding with the model as its own draft; a token costs
// mostly the LM head's pass over its 20M weights, which the accepted
// tokens share.
func (m *WhisperForConditionalGeneration) greedyFrom(encoder *core.Tensor, prompt, forced, draft []int, maxNew int) ([]int, int, error) {
	g := m.Generation
	out := slices.Clone(forced[:min(len(forced), maxNew)])
	cache := m.Model.NewDecoderCache(encoder)
	step := slices.Concat(prompt, out)
	guess := draft[:max(0, min(len(draft), maxNew-len(out)-1))]
	accepted := 0
	for len(out) < maxNew {
		fed := cache.Len() + len(step)
		logits, err := m.tailLogits([][]int{slices.Concat(step, guess)}, cache, len(guess)+1)
		if err != nil {
			return nil, 0, err
		}
		for j, row := range logits {
			for _, id := range g.SuppressTokens {
				suppress(row, id)
			}
			if len(out) == 0 {
				for _, id := range g.BeginSuppressTokens {
					suppress(row, id)
				}
			}
			id := argmax(row)
			if slices.Contains(g.EOSTokenIDs, id) {
				return out, accepted, nil
			}
			out = append(out, id)
			if len(out) == maxNew {
				return out, accepted, nil
			}
			if j < len(guess) && id == guess[j] {
				accepted++
				continue
			}
			// id is the next token; the cache keeps the step and the
			// draft tokens taken before it.
			cache.truncate(fed + j)
			break
		}
		step, guess = out[len(out)-1:], nil
	}
	return out, accepted, nil
}

// truncate keeps the cache's first n positions (draft tokens past them
// were not taken).
func (c *DecoderCache) truncate(n int) {
	if n >= c.length {
		return
	}
	for i, kv := range c.self {
		if kv[0] != nil {
			c.self[i] = [2]*core.Tensor{kv[0].Slice(core.Attrs{"axis": 2, "start": 0, "stop": n}), kv[1].Slice(core.Attrs{"axis": 2, "start": 0, "stop": n})}
		}
	}
	c.length = n
}
