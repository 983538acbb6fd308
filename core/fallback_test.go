package core_test

import (
	"errors"
	"fmt"
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
	assert.Contains(t, core.Fallbacks(), core.Fallback{Device: dev.String(), Op: "abs", Count: 3, Kind: core.FallbackCPU})
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

// Declared host work is counted beside the fallbacks, with its reason, and
// is not a fallback; undeclared work has no reason (the conformance report
// refuses it); the CPU device does no host work.
func TestHostWorkIsCountedWithItsReason(t *testing.T) {
	dev := core.Device{Kind: "fake"}
	core.DeclareHostWork("fake", "test_host_op", "reads the test's indices back")
	core.DeclareHostWork(core.AnyDevice, "test.Library", "searches on the host")
	core.ResetFallbacks()
	core.CountHostWork(dev, "test_host_op")
	core.CountHostWork(dev, "test_host_op")
	core.CountHostWork(dev, "test.Library")
	core.CountHostWork(dev, "test_undeclared")
	core.CountHostWork(core.CPU, "test_host_op")
	assert.Equal(t, []core.Fallback{
		{Device: "fake:0", Op: "test.Library", Count: 1, Kind: core.FallbackHost, Reason: "searches on the host"},
		{Device: "fake:0", Op: "test_host_op", Count: 2, Kind: core.FallbackHost, Reason: "reads the test's indices back"},
		{Device: "fake:0", Op: "test_undeclared", Count: 1, Kind: core.FallbackHost},
	}, core.Fallbacks())
	assert.Zero(t, core.FallbackCount(dev), "host work is not a CPU fallback")
	assert.Contains(t, core.DeclaredHostWork(), core.HostWork{Backend: "fake", Op: "test_host_op", Reason: "reads the test's indices back"})
	m := core.BuildManifest()
	assert.Contains(t, m.HostWork, core.HostWork{Backend: core.AnyDevice, Op: "test.Library", Reason: "searches on the host"})
	core.ResetFallbacks()
	assert.Empty(t, core.Fallbacks())
}

// A backend that finds no device is ErrNoDevice as well as
// ErrDeviceUnavailable; one that fails otherwise is only the latter, which
// nothing may skip over.
func TestNoDeviceIsToldFromAFailure(t *testing.T) {
	core.RegisterBackend("nodevice", -1, func() (core.Backend, error) {
		return nil, fmt.Errorf("nodevice: no adapter: %w", core.ErrNoDevice)
	})
	core.RegisterBackend("broken", -1, func() (core.Backend, error) {
		return nil, errors.New("broken: the driver refused a device")
	})
	_, err := core.BackendFor(core.Device{Kind: "nodevice"})
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrDeviceUnavailable)
	assert.ErrorIs(t, err, core.ErrNoDevice)
	assert.Contains(t, err.Error(), core.NoDeviceText, "SDKs over the C ABI see only the message")
	_, err = core.BackendFor(core.Device{Kind: "broken"})
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrDeviceUnavailable)
	assert.NotErrorIs(t, err, core.ErrNoDevice)
	assert.NotContains(t, err.Error(), core.NoDeviceText)
}
