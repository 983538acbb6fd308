package webgpu

import (
	"errors"
	"testing"

	"github.com/webtensor/webtensor/core"
)

var testGPU = core.Device{Kind: "webgpu"}

// gpuBackend is this process's WebGPU backend. It skips tb, saying so, only
// where the machine has no adapter, and fails it, with the error, where an
// adapter exists but the backend did not open. (webgputest.Need for the
// tests of this package itself, which cannot import webgputest.)
func gpuBackend(tb testing.TB) *Backend {
	tb.Helper()
	b, err := core.BackendFor(testGPU)
	switch {
	case errors.Is(err, ErrNoAdapter):
		tb.Skipf("no WebGPU adapter on this machine: %v", err)
	case err != nil:
		tb.Fatalf("a WebGPU adapter exists but the backend did not open: %v", err)
	}
	return b.(*Backend)
}
