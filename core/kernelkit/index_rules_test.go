package kernelkit_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// The index rules every backend applies name the first bad entry with its
// value; SDK tests and the backends' tests match these words.
func TestIndexRulesNameTheFirstBadEntry(t *testing.T) {
	assert.NoError(t, kernelkit.CheckSegmentIDs([]int{0, 0, 2}, 3, true))
	assert.EqualError(t, kernelkit.CheckSegmentIDs([]int64{0, 3, -1}, 3, false), "segment_ids[1] = 3 is outside [0, 3)")
	assert.EqualError(t, kernelkit.CheckSegmentIDs([]int{1, 0}, 3, true), "sorted is true but segment_ids[1] = 0 follows 1")
	assert.NoError(t, kernelkit.CheckSegmentIDs([]int{1, 0}, 3, false))

	assert.NoError(t, kernelkit.CheckCSR([]int64{0, 1, 1, 3}, []int64{2, 0, 1}, 3))
	for _, c := range []struct {
		ptr, cols []int
		want      string
	}{
		{[]int{1, 1}, []int{0}, "indptr[0] is 1, want 0"},
		{[]int{0, 2}, []int{0}, "indptr[1] is 2, want the number of entries 1"},
		{[]int{0, 2, 1, 2}, []int{0, 1}, "indptr decreases at 2: 1 after 2"},
		{[]int{0, 1, 2}, []int{0, 3}, "indices[1] = 3 is outside [0, 3)"},
		{nil, nil, "indptr is empty; it has one entry more than the rows"},
	} {
		assert.EqualError(t, kernelkit.CheckCSR(c.ptr, c.cols, 3), c.want)
	}

	assert.EqualError(t, kernelkit.CheckOneHot([]int64{1, -2, 5}, 4), "class index -2 is negative")
	assert.EqualError(t, kernelkit.CheckOneHot([]int64{1, 5}, 4), "class index 5 is out of range for num_classes 4")
	assert.NoError(t, kernelkit.OneHotIndexError(3, 4))
}

// one_hot's class count: the attribute when given (the largest index is
// not read), else the largest index plus one, never below 0.
func TestOneHotClasses(t *testing.T) {
	unread := func() (int64, error) { return 0, errors.New("read") }
	n, err := kernelkit.OneHotClasses(core.Attrs{"num_classes": 6}, 3, unread)
	require.NoError(t, err)
	assert.Equal(t, int64(6), n)
	n, err = kernelkit.OneHotClasses(core.Attrs{"num_classes": -1}, 3, func() (int64, error) { return 4, nil })
	require.NoError(t, err)
	assert.Equal(t, int64(5), n)
	n, err = kernelkit.OneHotClasses(core.Attrs{"num_classes": -1}, 3, func() (int64, error) { return -7, nil })
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = kernelkit.OneHotClasses(core.Attrs{"num_classes": -1}, 0, unread)
	assert.EqualError(t, err, "cannot infer num_classes from an empty tensor; give num_classes")
	_, err = kernelkit.OneHotClasses(core.Attrs{"num_classes": -1}, 2, unread)
	assert.EqualError(t, err, "read")
}
