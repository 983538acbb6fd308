package webgputest

import (
	"errors"
	"testing"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

// Device is webgpu:0, the best adapter.
var Device = core.Device{Kind: "webgpu"}

// Need returns the WebGPU backend of Device, or skips tb where the machine
// has no adapter (webgpu.ErrNoAdapter) and fails it on any other error.
// Need and Present turn on webgpu.VerifyKernelKeys: a test that uses the
// GPU also checks that every kernel it reuses is the one its key names.
func Need(tb testing.TB) *webgpu.Backend {
	tb.Helper()
	webgpu.VerifyKernelKeys()
	b, err := core.BackendFor(Device)
	switch {
	case errors.Is(err, webgpu.ErrNoAdapter):
		tb.Skipf("no WebGPU adapter on this machine: %v", err)
	case err != nil:
		tb.Fatalf("a WebGPU adapter exists but the backend did not open: %v", err)
	}
	return b.(*webgpu.Backend)
}

// Present says whether the WebGPU device opens, for tests that run on every
// device there is: false (logged) where the machine has no adapter, and a
// failure of tb on any other error, as Need.
func Present(tb testing.TB) bool {
	tb.Helper()
	webgpu.VerifyKernelKeys()
	_, err := core.BackendFor(Device)
	switch {
	case errors.Is(err, webgpu.ErrNoAdapter):
		tb.Logf("no WebGPU adapter on this machine (%v): the CPU only", err)
		return false
	case err != nil:
		tb.Fatalf("a WebGPU adapter exists but the backend did not open: %v", err)
	}
	return true
}
