package data

import (
	"math/bits"

	"github.com/webtensor/webtensor/core/numerics"
)

// Permutation is the record order of a shuffled epoch: a Fisher-Yates
// shuffle of 0..n-1 whose random numbers are Philox4x32-10 keyed by seed,
// counter (epoch, step), so it depends on (n, seed, epoch) alone: every
// SDK, every worker count and every run of a seeded loader read the same
// order, and an epoch can be replayed without the ones before it.
func Permutation(n int, seed uint64, epoch int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	key := [2]uint32{uint32(seed), uint32(seed >> 32)}
	e := uint64(epoch)
	for i := n - 1; i > 0; i-- {
		// One Philox block per step: two of its words make a 64-bit draw,
		// mapped onto 0..i by a multiply (Lemire's method; the bias, below
		// 2^-40 for any n that fits memory, is not worth a rejection loop).
		step := uint64(i)
		w := numerics.Philox4x32(key, [4]uint32{uint32(e), uint32(e >> 32), uint32(step), uint32(step >> 32)})
		r := uint64(w[0])<<32 | uint64(w[1])
		j, _ := bits.Mul64(r, uint64(i)+1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
