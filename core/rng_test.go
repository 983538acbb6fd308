package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/core"
)

func TestManualSeedReproduces(t *testing.T) {
	core.ManualSeed(5)
	s1, o1 := core.RNGState()
	core.SetRNGState(77, 3)
	s2, o2 := core.RNGState()
	assert.Equal(t, [2]uint64{5, 0}, [2]uint64{s1, o1})
	assert.Equal(t, [2]uint64{77, 3}, [2]uint64{s2, o2})
}
