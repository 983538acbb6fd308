package cpu

import (
	"math"
	"sync/atomic"
)

// A padding mask leaves a batch's short sentences' last keys out: it adds
// -inf, or the most negative float32 as transformers' exports do, to the
// scores of the keys past each sentence's end. The forward pass scores,
// exponentiates and weighs those keys for nothing: their probabilities
// come out exactly 0. keysToScore finds them, and forwardBlock and the
// AVX-512 tiles (forwardTiles) leave them out where that gives the same
// bits as scoring them. onnx's
// BenchmarkRunMiniLM (8 sentences of 16-72 tokens padded to 128) scores
// 62% fewer keys, and its forward at 2 threads took 215 ms against 240
// (runs alternating with the skipping off).
//
// "The same bits" holds because a skipped key's exponential is exactly 0
// (the vector exp returns 0 below -104, and its argument here is below
// -1e29), its P V terms are exact zeros (0 times a finite value) that
// leave the products' sums unchanged, and the scored width is a multiple of
// the softmax's vector block (ewLanes), so the exponential sums' lanes see
// the same values in the same order; each block keeps its products on
// the paths the full width takes (blockKeys). Only the sign of an output
// that is exactly zero could differ (a +0 sum of skipped terms added to a
// -0). The guard checks what that needs:
// the skipped keys' mask values at most deadMask, a live key (mask above
// liveMask) among those scored, every score bounded by scoreBound (from the
// largest magnitudes in Q and K, finite: a NaN or an infinity there scores
// every key), and V finite.
const (
	deadMask   = -1e30
	liveMask   = -1e20
	scoreBound = 1e20
)

// attentionSkipKeys turns the skipping on (tests compare it with the full
// scoring); attentionKeysSkipped counts the scores it left out, for tests
// to see that it ran.
var (
	attentionSkipKeys    = true
	attentionKeysSkipped atomic.Int64
)

// liveKeys is how many leading keys batch entry b's mask keeps (through the
// last one it adds more than deadMask to), rounded up to a multiple of
// ewLanes; S when the mask depends on the query row too, keeps every key
// or keeps none that is live.
func (am *attentionMask) liveKeys(b, S int) int {
	if am.strideL != 0 || am.strideS == 0 {
		return S
	}
	at, st := am.base[b], am.strideS
	w := S
	for w > 0 && am.add[at+(w-1)*st] <= deadMask { // a NaN is not dead
		w--
	}
	live := false
	for j := range w {
		if am.add[at+j*st] > liveMask {
			live = true
			break
		}
	}
	if !live {
		return S
	}
	return min(S, (w+ewLanes-1)&^(ewLanes-1))
}

// keysToScore is how many leading keys each entry's rows are scored
// against: S, or fewer where the mask leaves the last ones out and the
// guard above holds (nil: every entry scores all S).
func (at *attentionF32) keysToScore() []int {
	if at.mask == nil || at.causal || !attentionSkipKeys {
		return nil
	}
	S := at.S
	keys := make([]int, at.batch)
	fewer := false
	for b := range keys {
		keys[b] = at.mask.liveKeys(b, S)
		fewer = fewer || keys[b] < S
	}
	if !fewer {
		return nil
	}
	// The bounds over whole operands, not per entry and skipped rows: one
	// vector pass over each, where reading an entry's rows (a head's 32
	// values, 1.5 KB apart) one by one cost a quarter of what it saved.
	qMax, kMax := spanMaxAbs(at.q, at.L, at.E), spanMaxAbs(at.k, S, at.E)
	bound := math.Abs(float64(at.scale)) * float64(at.E) * qMax * kMax
	if !(bound < scoreBound) || math.IsInf(spanMaxAbs(at.v, S, at.Ev), 0) {
		return nil
	}
	return keys
}

// spanMaxAbs is the largest magnitude in the storage that x's entries'
// rows (rows of width values each) span, or +Inf where a value there is
// infinite or NaN: a bound on the rows' values, as the span holds them
// all (and, between a head's rows, the other heads').
func spanMaxAbs(x f32Rows, rows, width int) float64 {
	if len(x.off) == 0 || rows == 0 || width == 0 {
		return 0
	}
	lo, hi := x.off[0], x.off[0]
	for _, o := range x.off {
		lo, hi = min(lo, o), max(hi, o)
	}
	m, nan := extremeF32(true, true, x.data[lo:hi+(rows-1)*x.ld+width])
	if nan {
		return math.Inf(1)
	}
	return float64(m)
}

// blockKeys is how many keys a block of n rows scores: keys where that
// leaves its two products on the paths that scoring all of them (full)
// takes, else full. The attention's own loops for small products (one
// dot product a score, one weighted row a key) and the blocked gemm give
// the same bits with the last keys' exact zeros or without them; the
// gemm's other paths (a few rows' dot products, the naive loops) need not,
// and a narrower product may cross into one of them.
func (at *attentionF32) blockKeys(n, full, keys int) int {
	if keys >= full {
		return full
	}
	// A product's path: 0 the attention's own loops, 1 the blocked gemm,
	// -1 another gemm path.
	blockedOr := func(blocked bool) int {
		if blocked {
			return 1
		}
		return -1
	}
	scores := func(w int) int {
		if n*w*at.E <= gemmSmall {
			return 0
		}
		return blockedOr(gemmTakesBlocked(false, false, true, n, w, at.E))
	}
	values := func(w int) int {
		switch {
		case n*w*at.Ev <= gemmSmall:
			return 0
		case at.Ev < gemmNR && n > at.Ev: // the transposed product, as forwardBlock takes it
			return blockedOr(gemmTakesBlocked(false, true, true, at.Ev, n, w))
		}
		return blockedOr(gemmTakesBlocked(false, false, false, n, at.Ev, w))
	}
	if s, v := scores(keys), values(keys); s < 0 || v < 0 || s != scores(full) || v != values(full) {
		return full
	}
	attentionKeysSkipped.Add(int64(n * (full - keys)))
	return keys
}
