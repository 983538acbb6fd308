package numerics

import "math"

// The RNG is counter-based (Philox4x32-10, Salmon et al., SC'11) so that any
// backend and any SDK can draw the same numbers for the same seed without
// sharing state: element i of a random op with key `seed` and counter base
// `offset` is a pure function of (seed, offset, i). core's global generator only
// hands out (seed, offset) pairs, advancing offset past the counters used.
//
// Element i uses block = offset + i/4 and lane i%4 of
// Philox(key = [lo32(seed), hi32(seed)], ctr = [lo32(block), hi32(block), stream, 0]),
// where stream 0 gives the first uniform and stream 1 the second (Box-Muller).

const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
)

// Philox4x32 applies ten rounds of Philox4x32 to ctr under key.
func Philox4x32(key [2]uint32, ctr [4]uint32) [4]uint32 {
	// Four scalars rather than a [4]uint32 working array: the compiler keeps
	// them in registers (it keeps such arrays in memory), which took about a
	// third off the time per block - dropout draws one per four elements.
	k0, k1 := key[0], key[1]
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	for range 10 {
		p0 := uint64(philoxM0) * uint64(c0)
		p1 := uint64(philoxM1) * uint64(c2)
		c0, c1, c2, c3 = uint32(p1>>32)^c1^k0, uint32(p1), uint32(p0>>32)^c3^k1, uint32(p0)
		k0 += philoxW0 // the key for the next round (the last bump is unused)
		k1 += philoxW1
	}
	return [4]uint32{c0, c1, c2, c3}
}

// Philox4x32Pair is Philox4x32 of two counters under one key, their rounds
// interleaved: the two chains of dependent multiplies overlap in the
// processor's pipeline, so a pair costs little more than one block (bulk
// draws such as dropout's masks go through it).
func Philox4x32Pair(key [2]uint32, a, b [4]uint32) ([4]uint32, [4]uint32) {
	k0, k1 := key[0], key[1]
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	for range 10 {
		p0, q0 := uint64(philoxM0)*uint64(a0), uint64(philoxM0)*uint64(b0)
		p1, q1 := uint64(philoxM1)*uint64(a2), uint64(philoxM1)*uint64(b2)
		a0, a1, a2, a3 = uint32(p1>>32)^a1^k0, uint32(p1), uint32(p0>>32)^a3^k1, uint32(p0)
		b0, b1, b2, b3 = uint32(q1>>32)^b1^k0, uint32(q1), uint32(q0>>32)^b3^k1, uint32(q0)
		k0 += philoxW0
		k1 += philoxW1
	}
	return [4]uint32{a0, a1, a2, a3}, [4]uint32{b0, b1, b2, b3}
}

// PhiloxBits returns the raw 32 random bits of element i in a stream.
func PhiloxBits(seed, offset uint64, i int, stream uint32) uint32 {
	block := offset + uint64(i)/4
	out := Philox4x32([2]uint32{uint32(seed), uint32(seed >> 32)},
		[4]uint32{uint32(block), uint32(block >> 32), stream, 0})
	return out[i%4]
}

// PhiloxUniform is element i's uniform draw in [0, 1), with 24 bits so the
// value is exact in f32.
func PhiloxUniform(seed, offset uint64, i int) float64 {
	return float64(PhiloxBits(seed, offset, i, 0)>>8) * (1.0 / (1 << 24))
}

// PhiloxNormal is element i's standard normal draw (Box-Muller).
func PhiloxNormal(seed, offset uint64, i int) float64 {
	u1 := float64(PhiloxBits(seed, offset, i, 0)>>8) * (1.0 / (1 << 24))
	u2 := float64(PhiloxBits(seed, offset, i, 1)>>8) * (1.0 / (1 << 24))
	return math.Sqrt(-2*math.Log(1-u1)) * math.Cos(2*math.Pi*u2)
}
