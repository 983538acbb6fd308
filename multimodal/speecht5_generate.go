package multimodal

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// SpeechOptions configures GenerateSpeech; the zero value is
// transformers' defaults with the prenet's dropout off.
type SpeechOptions struct {
	// Threshold ends a row once its stop probabilities, summed over the
	// step's reduction_factor frames, reach it (0: 0.5, transformers'
	// default).
	Threshold float64
	// MinLenRatio and MaxLenRatio bound the steps as transformers does:
	// no row stops before int(T·MinLenRatio/reduction_factor) steps, every
	// row stops at int(T·MaxLenRatio/reduction_factor), T the (padded)
	// encoder length. MaxLenRatio 0 means 20, transformers' default.
	MinLenRatio, MaxLenRatio float64
	// PrenetDropout turns on the dropout transformers applies in the
	// speech decoder prenet even at inference (p =
	// speech_decoder_prenet_dropout), with masks drawn from webtensor's
	// Philox stream at Seed: reproducible for a seed, but not torch's
	// draws, so no run of transformers can be matched with it on (nor do
	// two of transformers' runs agree). Off, the prenet is deterministic.
	PrenetDropout bool
	Seed          int64
	// Prefix, when set, is mel frames (B or 1, L, mels) the speech starts
	// with, L a multiple of reduction_factor: they take the place of the
	// first L/reduction_factor steps' frames (teacher forcing), the
	// decoder prefills its cache with them in chunks of PrefillChunk steps
	// (0: all in one call), no row stops inside them, and the steps are
	// counted from the start, so a prefix equal to what generation made in
	// its first steps gives the same speech.
	Prefix       *core.Tensor
	PrefillChunk int
}

// SpeechOutput is GenerateSpeech's result.
type SpeechOutput struct {
	// Spectrogram (B, L, mels) is the postnet's output, each row padded
	// with zeros to the longest, as transformers' pad_sequence pads them.
	Spectrogram *core.Tensor
	// Lengths are each row's frames.
	Lengths []int
	// Steps is the number of decoder steps run.
	Steps int
}

// GenerateSpeech is transformers' generate_speech without a vocoder: ids
// (B, T) with their attention mask (nil: the ids that are not
// pad_token_id, as transformers derives it) through the encoder, then
// greedy autoregressive decoding with a KV cache from a zero frame, each
// step's last mel frame the next step's input, until each row's stop
// probability reaches the threshold (after the minimum length) or the
// maximum length; each finished row's frames then go through the postnet.
// speakers is (B or 1, speaker_embedding_dim).
func (m *SpeechT5ForTextToSpeech) GenerateSpeech(ids, mask, speakers *core.Tensor, opts SpeechOptions) (*SpeechOutput, error) {
	fail := func(err error) (*SpeechOutput, error) {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech.GenerateSpeech: %w", err)
	}
	c := m.Config
	if speakers == nil {
		return fail(fmt.Errorf("speaker embeddings are required (B or 1, %d), as transformers requires them", c.SpeakerEmbeddingDim))
	}
	if ids == nil {
		return fail(fmt.Errorf("ids are nil"))
	}
	if opts.Threshold == 0 {
		opts.Threshold = 0.5
	}
	if opts.MaxLenRatio == 0 {
		opts.MaxLenRatio = 20
	}
	if opts.MinLenRatio < 0 || opts.MaxLenRatio < 0 {
		return fail(fmt.Errorf("MinLenRatio %g and MaxLenRatio %g must be >= 0", opts.MinLenRatio, opts.MaxLenRatio))
	}
	if mask == nil && ids.Err() == nil {
		mask = ids.Ne(core.Scalar(float64(c.PadTokenID), ids.DType(), ids.Device())).Cast(core.I64)
	}
	enc, err := m.Encode(ids, mask)
	if err != nil {
		return nil, err
	}
	b, t, r := ids.Shape()[0], ids.Shape()[1], c.ReductionFactor
	// Python's int(T * ratio / r): the product first, truncated toward 0.
	maxLen := int(float64(t) * opts.MaxLenRatio / float64(r))
	minLen := int(float64(t) * opts.MinLenRatio / float64(r))
	if maxLen > c.MaxSpeechPositions {
		// transformers would fail at the position table's end; saying so
		// before decoding costs nothing.
		return fail(fmt.Errorf("MaxLenRatio %g allows %d steps for %d tokens, more than max_speech_positions %d",
			opts.MaxLenRatio, maxLen, t, c.MaxSpeechPositions))
	}
	var drop *prenetDropout
	if opts.PrenetDropout {
		drop = &prenetDropout{seed: opts.Seed}
	}
	cache := m.NewSpeechDecoderCache(enc, mask)
	defer core.NoGradScope()()

	var frames []*core.Tensor // each (B, r, mels), before the postnet
	prev := core.Zeros(core.Shape{b, 1, c.NumMelBins}, m.dtype).To(m.dev)
	idx := 0
	if opts.Prefix != nil {
		steps, inputs, err := m.prefixInputs(opts.Prefix, b, prev)
		if err != nil {
			return fail(err)
		}
		if _, err := m.prefill(inputs, speakers, cache, opts.PrefillChunk, drop); err != nil {
			return nil, err
		}
		frames = append(frames, steps...)
		last := steps[len(steps)-1]
		prev = last.Slice(core.Attrs{"axis": 1, "start": r - 1, "stop": r})
		idx = len(steps)
	}
	lengths := make([]int, b) // 0: the row has not stopped
	done := 0
	for done < b {
		idx++
		h, err := m.decode(prev, speakers, cache, drop)
		if err != nil {
			return nil, err
		}
		h = h.Reshape(core.Shape{b, c.HiddenSize})
		spectrum := m.postnet.featOut.Forward(h).Reshape(core.Shape{b, r, c.NumMelBins})
		frames = append(frames, spectrum)
		prev = spectrum.Slice(core.Attrs{"axis": 1, "start": r - 1, "stop": r})
		prob, err := m.postnet.probOut.Forward(h).Sigmoid().Sum(core.Attrs{"axes": []int{1}}).Cast(core.F32).Float32s()
		if err != nil {
			return fail(err)
		}
		if idx < minLen {
			continue
		}
		for i := range b {
			if lengths[i] == 0 && (idx >= maxLen || float64(prob[i]) >= opts.Threshold) {
				lengths[i] = idx * r
				done++
			}
		}
	}
	spec, err := m.finish(frames, lengths)
	if err != nil {
		return fail(err)
	}
	return &SpeechOutput{Spectrogram: spec, Lengths: lengths, Steps: idx}, nil
}

// prefixInputs splits a mel prefix (B or 1, L, mels) into its steps' frames
// (B, r, mels) and the decoder's inputs for those steps: the zero frame,
// then each step's last frame but the final step's, which is the input of
// the first generated step.
func (m *SpeechT5ForTextToSpeech) prefixInputs(prefix *core.Tensor, b int, zero *core.Tensor) ([]*core.Tensor, *core.Tensor, error) {
	c := m.Config
	r := c.ReductionFactor
	if err := checkFrames(prefix, c.NumMelBins, m.dev, m.dtype); err != nil {
		return nil, nil, fmt.Errorf("prefix: %w", err)
	}
	s := prefix.Shape()
	if s[0] != b && s[0] != 1 {
		return nil, nil, fmt.Errorf("prefix has %d rows for %d texts", s[0], b)
	}
	if s[1]%r != 0 {
		return nil, nil, fmt.Errorf("prefix has %d frames, not a multiple of reduction_factor %d", s[1], r)
	}
	if s[0] != b {
		prefix = prefix.Expand(core.Attrs{"shape": []int{b, s[1], s[2]}})
	}
	n := s[1] / r
	steps := make([]*core.Tensor, n)
	inputs := []*core.Tensor{zero}
	for i := range steps {
		steps[i] = prefix.Slice(core.Attrs{"axis": 1, "start": i * r, "stop": (i + 1) * r})
		if i < n-1 {
			inputs = append(inputs, steps[i].Slice(core.Attrs{"axis": 1, "start": r - 1, "stop": r}))
		}
	}
	return steps, core.Concat(inputs, core.Attrs{"axis": 1}), nil
}

// finish runs the postnet on each row's frames up to its length, as
// transformers does when the row stops (the convolutions see zeros past
// the row's end, not the frames of later steps), and pads the rows with
// zeros to the longest.
func (m *SpeechT5ForTextToSpeech) finish(frames []*core.Tensor, lengths []int) (*core.Tensor, error) {
	all := core.Concat(frames, core.Attrs{"axis": 1})
	longest := 0
	for _, l := range lengths {
		longest = max(longest, l)
	}
	rows := make([]*core.Tensor, len(lengths))
	for i, l := range lengths {
		row := all.Slice(core.Attrs{"axis": 0, "start": i, "stop": i + 1}).Slice(core.Attrs{"axis": 1, "start": 0, "stop": l})
		row = m.refine(row)
		if l < longest {
			row = row.Pad(core.Attrs{"pads": []int{0, 0, 0, longest - l}})
		}
		rows[i] = row
	}
	out := core.Concat(rows, core.Attrs{"axis": 0})
	return out, out.Err()
}
