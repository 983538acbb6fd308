package kernelkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

func TestArgReduceAxes(t *testing.T) {
	axis, axes, flat, err := kernelkit.ArgReduceAxes(3, core.Attrs{"axis": -1})
	require.NoError(t, err)
	assert.Equal(t, 2, axis)
	assert.Equal(t, []int{2}, axes)
	assert.False(t, flat)

	_, axes, flat, err = kernelkit.ArgReduceAxes(3, core.Attrs{})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, axes, "no axis: over the flattened tensor")
	assert.True(t, flat)

	_, axes, flat, err = kernelkit.ArgReduceAxes(0, core.Attrs{})
	require.NoError(t, err)
	assert.Empty(t, axes, "a scalar is its own flat search")
	assert.True(t, flat)

	_, _, _, err = kernelkit.ArgReduceAxes(2, core.Attrs{"axis": 5})
	assert.Error(t, err)
}

func TestSplitEinsumLabels(t *testing.T) {
	// "bij,bjk->bik": b is kept, j is summed.
	s := kernelkit.SplitEinsumLabels([]int{'b', 'i', 'j'}, []int{'b', 'j', 'k'}, func(l int) bool { return l == 'b' })
	assert.Equal(t, kernelkit.EinsumLabels{Batch: []int{'b'}, Contracted: []int{'j'}, AFree: []int{'i'}, BFree: []int{'k'}}, s)
}
