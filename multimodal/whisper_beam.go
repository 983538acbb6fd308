package multimodal

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/webtensor/webtensor/core"
)

// Beam search as transformers 5's GenerationMixin._beam_search runs it
// (its vectorised form): each step takes the K = max(2, 1+#eos)·beams
// best continuations of all beams by summed log-probability; those that
// end (an end-of-text id, or the length limit) and rank among the first
// `beams` enter the finished list with their score divided by
// length^length_penalty, the best `beams` that do not end run on, and an
// item stops when no running beam can beat its worst finished one. The
// scores are float32, as transformers keeps them.

// negBig is transformers' -1e9, the score of an empty or excluded slot.
const negBig = float32(-1e9)

type beamHyp struct {
	tokens []int // generated ids (after the prompt)
	score  float32
	done   bool // a finished slot holds a real hypothesis
}

// beamItem is one batch item's search state.
type beamItem struct {
	running  []beamHyp
	finished []beamHyp
	open     bool // transformers' is_early_stop_heuristic_unsatisfied
}

type beamCandidate struct {
	src   int // running beam it extends
	token int
	score float32
}

// generateBeam is Generate with opts.NumBeams > 1.
func (m *WhisperForConditionalGeneration) generateBeam(enc *core.Tensor, prompts [][]int, maxNew, beams int) ([][]int, error) {
	g := m.Generation
	b, promptLen := len(prompts), len(prompts[0])
	maxLen := promptLen + maxNew
	keep := max(2, 1+len(g.EOSTokenIDs)) * beams
	lp := g.LengthPenalty

	// Every beam of an item starts from its prompt; the encoder states
	// are repeated per beam, so beam rows reorder within an item only.
	rowOf := make([]int64, 0, b*beams)
	step := make([][]int, 0, b*beams)
	items := make([]*beamItem, b)
	for i := range b {
		it := &beamItem{open: true}
		for j := range beams {
			rowOf = append(rowOf, int64(i))
			step = append(step, prompts[i])
			// Only the first beam counts at the start: the others are
			// copies, held back by -1e9 as transformers does.
			score := float32(0)
			if j > 0 {
				score = negBig
			}
			it.running = append(it.running, beamHyp{score: score})
			it.finished = append(it.finished, beamHyp{score: negBig})
		}
		items[i] = it
	}
	encRows := enc.IndexSelect(core.FromSlice(rowOf, core.Shape{len(rowOf)}, enc.Device()), core.Attrs{"axis": 0})
	cache := m.Model.NewDecoderCache(encRows)
	for n := 0; n < maxNew; n++ {
		logits, err := m.lastLogits(step, cache)
		if err != nil {
			return nil, err
		}
		curLen := promptLen + n
		order := make([]int64, 0, b*beams)
		next := make([][]int, 0, b*beams)
		for i, it := range items {
			src := it.advance(logits[i*beams:(i+1)*beams], g, n == 0, keep, curLen+1 >= maxLen, curLen+1-promptLen, lp)
			for j, h := range it.running {
				order = append(order, int64(i*beams+src[j]))
				next = append(next, []int{h.tokens[len(h.tokens)-1]})
			}
			it.checkOpen(curLen+1-promptLen, maxNew, lp, g.EarlyStopping)
		}
		if !slices.ContainsFunc(items, func(it *beamItem) bool { return it.open }) {
			break
		}
		cache.reorder(order)
		step = next
	}
	out := make([][]int, b)
	for i, it := range items {
		best := it.finished[0]
		if !best.done {
			return nil, fmt.Errorf("beam search ended without a finished hypothesis for row %d", i)
		}
		out[i] = best.tokens
		if len(out[i]) > 0 && slices.Contains(g.EOSTokenIDs, out[i][len(out[i])-1]) {
			out[i] = out[i][:len(out[i])-1]
		}
	}
	return out, nil
}

// advance takes one step of an item's beams given their logits, and
// returns, per new running beam, the old beam it extends. first says the
// step is the first (begin_suppress_tokens apply); atLimit that every
// continuation reaches the length limit; genLen is the generated length
// after this step.
func (it *beamItem) advance(logits [][]float32, g WhisperGenerationConfig, first bool, keep int, atLimit bool, genLen int, lp float64) []int {
	beams := len(it.running)
	var cands []beamCandidate
	for j, row := range logits {
		lsm := logSoftmax(row)
		for _, id := range g.SuppressTokens {
			suppress(lsm, id)
		}
		if first {
			for _, id := range g.BeginSuppressTokens {
				suppress(lsm, id)
			}
		}
		for v, x := range lsm {
			cands = append(cands, beamCandidate{src: j, token: v, score: x + it.running[j].score})
		}
	}
	// torch.topk over beams·vocab: the order of equal scores is the
	// flattened index order here.
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
	cands = cands[:keep]
	hits := make([]bool, keep)
	for k, c := range cands {
		hits[k] = atLimit || slices.Contains(g.EOSTokenIDs, c.token)
	}

	// The finished list: the first `beams` candidates that end, scored by
	// length, compete with the finished ones for `beams` slots.
	allDone := true
	for _, f := range it.finished {
		allDone = allDone && f.done
	}
	merged := append([]beamHyp{}, it.finished...)
	for k, c := range cands {
		s := c.score / float32(math.Pow(float64(genLen), lp))
		if allDone && g.EarlyStopping == "true" {
			s += negBig
		}
		if !it.open {
			s += negBig
		}
		done := hits[k] && k < beams
		if !done {
			s += negBig
		}
		merged = append(merged, beamHyp{tokens: extend(it.running[c.src].tokens, c.token), score: s, done: done})
	}
	sort.SliceStable(merged, func(a, b int) bool { return merged[a].score > merged[b].score })
	it.finished = merged[:beams]

	// The running beams: the best candidates that do not end.
	type ranked struct {
		k     int
		score float32
	}
	r := make([]ranked, keep)
	for k, c := range cands {
		r[k] = ranked{k, c.score}
		if hits[k] {
			r[k].score += negBig
		}
	}
	sort.SliceStable(r, func(a, b int) bool { return r[a].score > r[b].score })
	src := make([]int, beams)
	running := make([]beamHyp, beams)
	for j := range beams {
		c := cands[r[j].k]
		running[j] = beamHyp{tokens: extend(it.running[c.src].tokens, c.token), score: r[j].score}
		src[j] = c.src
	}
	it.running = running
	return src
}

// checkOpen is transformers' early-stop heuristic: the item stays open
// while its best running beam, scored at the current length (or, with
// early_stopping "never" and a positive length penalty, at the longest),
// could still beat a finished slot. With early_stopping true a full
// finished list closes it too: transformers stops the batch there, and
// adds nothing to a full list meanwhile.
func (it *beamItem) checkOpen(genLen, maxNew int, lp float64, early string) {
	if !it.open {
		return
	}
	if early == "never" && lp > 0 {
		genLen = maxNew
	}
	best := it.running[0].score / float32(math.Pow(float64(genLen), lp))
	worst := it.finished[0].score
	full := true
	for _, f := range it.finished {
		worst = min(worst, f.score)
		full = full && f.done
	}
	open := false
	for _, f := range it.finished {
		w := negBig
		if f.done {
			w = worst
		}
		open = open || best > w
	}
	it.open = open && !(full && early == "true")
}

func extend(tokens []int, id int) []int {
	return append(append(make([]int, 0, len(tokens)+1), tokens...), id)
}

// logSoftmax is a float32 log_softmax, computed in float64.
func logSoftmax(row []float32) []float32 {
	top := math.Inf(-1)
	for _, v := range row {
		top = math.Max(top, float64(v))
	}
	sum := 0.0
	for _, v := range row {
		sum += math.Exp(float64(v) - top)
	}
	lse := top + math.Log(sum)
	out := make([]float32, len(row))
	for i, v := range row {
		out[i] = float32(float64(v) - lse)
	}
	return out
}

// reorder makes row r of every layer's self-attention keys and values
// the old row order[r], after the beams were re-ranked. The
// cross-attention rows need no reordering: beams move within an item,
// whose rows hold the same encoder states.
func (c *DecoderCache) reorder(order []int64) {
	idx := core.FromSlice(order, core.Shape{len(order)}, c.encoder.Device())
	for i, kv := range c.self {
		c.self[i] = [2]*core.Tensor{kv[0].IndexSelect(idx, core.Attrs{"axis": 0}), kv[1].IndexSelect(idx, core.Attrs{"axis": 0})}
	}
}
