package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// WebGPU holds i64 in 32-bit integers: an integer arange that fits is
// exact there, one that does not is refused instead of wrapping.
func TestArangeNarrowsI64OnlyWhenItFits(t *testing.T) {
	needGPU(t)
	x := core.Call1("arange", core.Attrs{"start": -(1 << 31), "stop": 1<<31 - 1, "step": 1 << 30, "device": gpu.String()})
	require.NoError(t, x.Err())
	got, err := x.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{-(1 << 31), -(1 << 30), 0, 1 << 30}, got)

	for _, a := range []core.Attrs{
		{"start": 1 << 31, "stop": 1<<31 + 2},
		{"start": 1 << 53, "stop": 1<<53 + 3},
		{"start": 0.5, "stop": 4e9, "step": 1e9, "dtype": core.I64},
	} {
		a["device"] = gpu.String()
		_, err := core.Call("arange", nil, a)
		require.Error(t, err, "%v", a)
		assert.Contains(t, err.Error(), "32-bit integers")
	}
}
