package numerics_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/core/numerics"
)

// Known-answer vectors of Philox4x32-10 from the Random123 distribution
// (kat_vectors), so our stream is the published algorithm, not a lookalike.
func TestPhiloxKnownAnswers(t *testing.T) {
	cases := []struct {
		key  [2]uint32
		ctr  [4]uint32
		want [4]uint32
	}{
		{[2]uint32{0, 0}, [4]uint32{0, 0, 0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, numerics.Philox4x32(c.key, c.ctr))
	}
}

func TestPhiloxPairIsTwoBlocks(t *testing.T) {
	for i := uint32(0); i < 1000; i++ {
		key := [2]uint32{i * 2654435761, ^i}
		a, b := [4]uint32{i, i >> 3, 7, i * 31}, [4]uint32{i + 1, 0, i, 5}
		gotA, gotB := numerics.Philox4x32Pair(key, a, b)
		assert.Equal(t, numerics.Philox4x32(key, a), gotA)
		assert.Equal(t, numerics.Philox4x32(key, b), gotB)
	}
}

func TestPhiloxStreamsAreCounterBased(t *testing.T) {
	// Element i depends only on (seed, offset, i): drawing element 7 alone
	// equals drawing it as part of a block, and an offset shifts whole blocks.
	assert.Equal(t, numerics.PhiloxBits(42, 0, 7+4*3, 0), numerics.PhiloxBits(42, 3, 7, 0))
	assert.NotEqual(t, numerics.PhiloxBits(42, 0, 0, 0), numerics.PhiloxBits(43, 0, 0, 0))
	u := numerics.PhiloxUniform(1, 0, 0)
	assert.True(t, u >= 0 && u < 1)
	var sum, sq float64
	const n = 20000
	for i := 0; i < n; i++ {
		z := numerics.PhiloxNormal(9, 0, i)
		sum += z
		sq += z * z
	}
	assert.InDelta(t, 0, sum/n, 0.03)
	assert.InDelta(t, 1, sq/n, 0.04)
}
