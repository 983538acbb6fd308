package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A backend without a kernel for an op runs it on the CPU, and the call is
// counted for that device and op.
func TestFallbacksAreCounted(t *testing.T) {
	dev := registerNoKernelBackend(t)
	core.ResetFallbacks()
	x := core.FromSlice([]float32{1, -2, 3}, core.Shape{3}).To(dev)
	require.NoError(t, x.Err())
	for range 3 {
		require.NoError(t, core.Call1("abs", nil, x).Err())
	}
	assert.Equal(t, int64(3), core.FallbackCount(dev))
	assert.Contains(t, core.Fallbacks(), core.Fallback{Device: dev.String(), Op: "abs", Count: 3})
	core.ResetFallbacks()
	assert.Zero(t, core.FallbackCount(dev))
}

// registerNoKernelBackend registers (once) a device whose backend holds
// memory like the CPU's but has no kernels.
func registerNoKernelBackend(t *testing.T) core.Device {
	t.Helper()
	cpu, err := core.BackendFor(core.CPU)
	require.NoError(t, err)
	core.RegisterBackend("fake", -1, func() (core.Backend, error) { return fakeBackend{cpu}, nil })
	return core.Device{Kind: "fake"}
}
