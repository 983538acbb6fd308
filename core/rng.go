package core

import (
	"sync"
)

// The generator behind random ops is numerics' counter-based Philox4x32-10:
// element i of a random op is a pure function of (seed, offset, i), so this
// global state only hands out (seed, offset) pairs, advancing offset past
// the counters used.

// DefaultSeed is the global generator's seed until ManualSeed is called, so
// that an unseeded program is still reproducible.
const DefaultSeed = 0x5EED

var rng = struct {
	sync.Mutex
	seed, offset uint64
}{seed: DefaultSeed}

// ManualSeed resets the global generator: the same seed gives the same
// sequence of random tensors on every backend and in every SDK.
func ManualSeed(seed uint64) {
	rng.Lock()
	rng.seed, rng.offset = seed, 0
	rng.Unlock()
}

// RNGState returns the global generator's seed and offset (for checkpoints).
func RNGState() (seed, offset uint64) {
	rng.Lock()
	defer rng.Unlock()
	return rng.seed, rng.offset
}

// SetRNGState restores a state returned by RNGState.
func SetRNGState(seed, offset uint64) {
	rng.Lock()
	rng.seed, rng.offset = seed, offset
	rng.Unlock()
}

// reserve hands out a counter range of n elements.
func reserve(n int) (seed, offset uint64) {
	rng.Lock()
	defer rng.Unlock()
	seed, offset = rng.seed, rng.offset
	rng.offset += uint64(n+3) / 4
	return seed, offset
}

func fillRandomAttrs(a Attrs, outs []Meta) {
	if a.Has("seed") {
		if !a.Has("offset") {
			a["offset"] = 0
		}
		return
	}
	n := 0
	for _, m := range outs {
		n = max(n, m.Shape.Numel())
	}
	s, o := reserve(n)
	a["seed"], a["offset"] = int(s), int(o)
}
