package multimodal

import (
	"fmt"
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// WhisperForConditionalGeneration is a WhisperModel and its output
// projection (proj_out, the decoder's token embedding when the config
// ties them, as Whisper's does), with greedy transcription (Generate).
// Its StateDict holds the names save_pretrained writes (model.…, and
// proj_out.weight only when untied).
type WhisperForConditionalGeneration struct {
	nn.Base
	Model *WhisperModel
	// Generation is generation_config.json, or config.json's generation
	// settings without one.
	Generation WhisperGenerationConfig

	proj *nn.Linear
}

// LoadWhisperForConditionalGeneration loads a checkpoint save_pretrained
// wrote (config.json, model.safetensors and generation_config.json when
// present), as strictly as LoadBertModel. A tied checkpoint may carry
// proj_out.weight (older transformers wrote it); the embedding is used,
// as transformers ties them at load.
func LoadWhisperForConditionalGeneration(dir string, opts ...LoadOption) (*WhisperForConditionalGeneration, error) {
	cfg, w, path, err := readCheckpoint("LoadWhisperForConditionalGeneration", dir, ParseWhisperConfig, opts)
	if err != nil {
		return nil, err
	}
	gen, err := loadWhisperGeneration(w.dir, cfg)
	if err != nil {
		return nil, err
	}
	m := &WhisperForConditionalGeneration{Model: buildWhisper(cfg, w, "model."), Generation: gen}
	children := []nn.NamedModule{{Name: "model", Module: m.Model}}
	if cfg.TieWordEmbeddings {
		w.ignore("proj_out.weight")
		m.proj = &nn.Linear{In: cfg.DModel, Out: cfg.VocabSize, Weight: m.Model.decoder.tokens.Weight}
	} else {
		m.proj = w.linearBias("proj_out", cfg.DModel, cfg.VocabSize, false)
		children = append(children, nn.NamedModule{Name: "proj_out", Module: m.proj})
	}
	w.register(&m.Base, nil, children...)
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// WhisperLMOutput is WhisperForConditionalGeneration.Forward's result.
type WhisperLMOutput struct {
	*WhisperOutput
	Logits *core.Tensor // (B, S, vocab_size)
}

// Forward encodes features and gives the logits of every position of ids
// (B, S), decoded from the start.
func (m *WhisperForConditionalGeneration) Forward(features, ids *core.Tensor) (*WhisperLMOutput, error) {
	out, err := m.Model.Forward(features, ids)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	logits := m.proj.Forward(out.Decoder.LastHiddenState)
	if err := logits.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: WhisperForConditionalGeneration.Forward: %w", err)
	}
	return &WhisperLMOutput{WhisperOutput: out, Logits: logits}, nil
}

// GenerateOptions configures Generate.
type GenerateOptions struct {
	// MaxNewTokens bounds the generated ids; 0 takes the generation
	// config's max_length (default 20) as transformers does.
	MaxNewTokens int
	// NumBeams above 1 searches with that many beams; 0 takes the
	// generation config's num_beams.
	NumBeams int
}

// Generate transcribes features (B, num_mel_bins, frames) greedily, or
// with beam search when asked (see whisper_beam.go), with a KV cache, as
// transformers' generate(do_sample=False) does for audio of one window: the prompt is decoder_start_token_id, then
// forced_decoder_ids (the language detected when forced as null and
// lang_to_id is given), then no_timestamps_token_id; suppress_tokens are
// never picked and begin_suppress_tokens not first; a row ends at an
// eos_token_id. It returns each row's ids after the prompt, without the
// end-of-text id, which is what transformers returns before padding the
// rows to one length with pad_token_id.
func (m *WhisperForConditionalGeneration) Generate(features *core.Tensor, opts GenerateOptions) ([][]int, error) {
	fail := func(err error) ([][]int, error) {
		return nil, fmt.Errorf("multimodal: WhisperForConditionalGeneration.Generate: %w", err)
	}
	enc, err := m.Model.Encode(features)
	if err != nil {
		return nil, err
	}
	b := features.Shape()[0]
	prompts, err := m.prompts(enc.LastHiddenState, b)
	if err != nil {
		return fail(err)
	}
	maxNew, err := m.maxNewTokens(len(prompts[0]), opts.MaxNewTokens)
	if err != nil {
		return fail(err)
	}
	beams := opts.NumBeams
	if beams == 0 {
		beams = m.Generation.NumBeams
	}
	if beams < 0 {
		return fail(fmt.Errorf("NumBeams is %d, must be >= 0", beams))
	}
	if beams > 1 {
		out, err := m.generateBeam(enc.LastHiddenState, prompts, maxNew, beams)
		if err != nil {
			return fail(err)
		}
		return out, nil
	}
	g := m.Generation
	cache := m.Model.NewDecoderCache(enc.LastHiddenState)
	out := make([][]int, b)
	done := make([]bool, b)
	step := prompts
	for n := 0; n < maxNew; n++ {
		logits, err := m.lastLogits(step, cache)
		if err != nil {
			return fail(err)
		}
		next := make([][]int, b)
		for i := range b {
			row := logits[i]
			for _, id := range g.SuppressTokens {
				suppress(row, id)
			}
			if n == 0 {
				for _, id := range g.BeginSuppressTokens {
					suppress(row, id)
				}
			}
			id := argmax(row)
			if done[i] {
				// A finished row goes on with padding, as transformers'
				// batch does; its output is already complete.
				id = g.PadTokenID
			} else if slices.Contains(g.EOSTokenIDs, id) {
				done[i] = true
			} else {
				out[i] = append(out[i], id)
			}
			next[i] = []int{id}
		}
		if !slices.Contains(done, false) {
			break
		}
		step = next
	}
	return out, nil
}

// suppress sets a logit to -inf, ignoring ids outside the vocabulary as
// torch.isin does.
func suppress(row []float32, id int) {
	if id >= 0 && id < len(row) {
		row[id] = float32(math.Inf(-1))
	}
}

// argmax is the first largest value's index, as torch.argmax.
func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// lastLogits decodes rows of ids after the cache's positions and gives
// the logits of each row's last position, on the host.
func (m *WhisperForConditionalGeneration) lastLogits(rows [][]int, cache *DecoderCache) ([][]float32, error) {
	return m.tailLogits(rows, cache, 1)
}

// tailLogits decodes rows of ids after the cache's positions and gives
// the logits of each row's last k positions, on the host: k slices of
// vocab_size per row, row after row. The LM head reads its weights once
// for all of them (a product of k rows, not k vector products).
func (m *WhisperForConditionalGeneration) tailLogits(rows [][]int, cache *DecoderCache, k int) ([][]float32, error) {
	b, s := len(rows), len(rows[0])
	flat := make([]int64, 0, b*s)
	for _, r := range rows {
		for _, id := range r {
			flat = append(flat, int64(id))
		}
	}
	out, err := m.Model.Decode(core.FromSlice(flat, core.Shape{b, s}, m.Model.dev), cache)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	tail := out.LastHiddenState.Slice(core.Attrs{"axis": 1, "start": s - k, "stop": s})
	logits, err := m.proj.Forward(tail).Cast(core.F32).Float32s()
	if err != nil {
		return nil, err
	}
	v := m.Model.Config.VocabSize
	rowsOut := make([][]float32, b*k)
	for i := range rowsOut {
		rowsOut[i] = logits[i*v : (i+1)*v]
	}
	return rowsOut, nil
}

// prompts builds each row's prompt as transformers' _retrieve_init_tokens
// does without a task or language argument.
func (m *WhisperForConditionalGeneration) prompts(encoder *core.Tensor, b int) ([][]int, error) {
	g := m.Generation
	base := []*int{&g.DecoderStartTokenID}
	if forced := g.ForcedDecoderIDs; len(forced) > 0 && forced[0][0] != nil && *forced[0][0] == 1 {
		for i, f := range forced {
			if f[0] == nil || *f[0] != i+1 {
				return nil, fmt.Errorf("forced_decoder_ids %s do not give every position from 1 up to their last: Whisper's prompt takes them in order", formatForced(forced))
			}
			base = append(base, f[1])
		}
	}
	rows := make([][]int, b)
	var lang []int
	if len(base) <= 1 || base[1] == nil {
		if len(g.LangToID) > 0 {
			var err error
			if lang, err = m.detectLanguage(encoder, b); err != nil {
				return nil, err
			}
		}
	}
	for i := range rows {
		for j, id := range base {
			switch {
			case j == 1 && lang != nil:
				rows[i] = append(rows[i], lang[i])
			case id != nil:
				rows[i] = append(rows[i], *id)
			}
		}
		if lang != nil && len(base) == 1 {
			rows[i] = append(rows[i], lang[i])
		}
		if g.NoTimestampsTokenID != nil && rows[i][len(rows[i])-1] != *g.NoTimestampsTokenID {
			rows[i] = append(rows[i], *g.NoTimestampsTokenID)
		}
	}
	return rows, nil
}

func formatForced(forced [][2]*int) string {
	s := "["
	for i, f := range forced {
		if i > 0 {
			s += ", "
		}
		s += "["
		for j, p := range f {
			if j > 0 {
				s += ", "
			}
			if p == nil {
				s += "null"
			} else {
				s += fmt.Sprint(*p)
			}
		}
		s += "]"
	}
	return s + "]"
}

// detectLanguage is transformers' detect_language: the language token
// the decoder likes best after <|startoftranscript|> alone.
func (m *WhisperForConditionalGeneration) detectLanguage(encoder *core.Tensor, b int) ([]int, error) {
	start := make([][]int, b)
	for i := range start {
		start[i] = []int{m.Generation.DecoderStartTokenID}
	}
	logits, err := m.lastLogits(start, m.Model.NewDecoderCache(encoder))
	if err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(m.Generation.LangToID))
	for _, id := range m.Generation.LangToID {
		if id < 0 || id >= m.Model.Config.VocabSize {
			return nil, fmt.Errorf("lang_to_id gives id %d, outside the vocabulary of %d", id, m.Model.Config.VocabSize)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]int, b)
	for i, row := range logits {
		best := ids[0]
		for _, id := range ids {
			if row[id] > row[best] {
				best = id
			}
		}
		out[i] = best
	}
	return out, nil
}

// maxNewTokens applies transformers' limits: a requested count must fit
// max_target_positions with the prompt; without one, max_length (default
// 20) new ids, the total capped at max_target_positions.
func (m *WhisperForConditionalGeneration) maxNewTokens(prompt, requested int) (int, error) {
	maxTarget := m.Model.Config.MaxTargetPositions
	if requested < 0 {
		return 0, fmt.Errorf("MaxNewTokens is %d, must be >= 0", requested)
	}
	if requested > 0 {
		if requested+prompt > maxTarget {
			return 0, fmt.Errorf("the prompt's %d ids and MaxNewTokens %d exceed max_target_positions %d", prompt, requested, maxTarget)
		}
		return requested, nil
	}
	maxLength := m.Generation.MaxLength
	if maxLength == 0 {
		maxLength = 20
	}
	total := min(maxLength+min(maxTarget/2-1, prompt), maxTarget)
	return max(total-prompt, 0), nil
}

// NewWhisperForConditionalGeneration is a model of cfg with weights drawn
// from N(0, 0.02²) by a seeded stream (no checkpoint) and the generation
// settings gen: for timing, and for exercising the code at sizes no test
// checkpoint has.
func NewWhisperForConditionalGeneration(cfg WhisperConfig, gen WhisperGenerationConfig, seed int64, opts ...LoadOption) (*WhisperForConditionalGeneration, error) {
	const op = "NewWhisperForConditionalGeneration"
	o, err := buildLoadOptions(op, opts)
	if err != nil {
		return nil, err
	}
	w, err := drawnWeights(seed, o)
	if err != nil {
		return nil, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	m := &WhisperForConditionalGeneration{Model: buildWhisper(cfg, w, "model."), Generation: gen}
	children := []nn.NamedModule{{Name: "model", Module: m.Model}}
	if cfg.TieWordEmbeddings {
		m.proj = &nn.Linear{In: cfg.DModel, Out: cfg.VocabSize, Weight: m.Model.decoder.tokens.Weight}
	} else {
		m.proj = w.linearBias("proj_out", cfg.DModel, cfg.VocabSize, false)
		children = append(children, nn.NamedModule{Name: "proj_out", Module: m.proj})
	}
	w.register(&m.Base, nil, children...)
	if err := w.check(op); err != nil {
		return nil, err
	}
	return m, nil
}
