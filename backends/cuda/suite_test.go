//go:build linux && cgo

package cuda_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/backendtest"
	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

// The shared suite on a real GPU. These skip only when this machine has no
// CUDA device (no driver library, or a driver that sees no GPU); a device
// whose backend fails to open (NVRTC or cuBLAS missing, say) fails them.

var gpu = core.Device{Kind: "cuda"}

func needCUDA(t *testing.T) *cuda.Backend {
	t.Helper()
	useRepoVenv()
	b, err := core.BackendFor(gpu)
	switch {
	case errors.Is(err, cuda.ErrNoDevice):
		t.Skipf("no CUDA device: %v", err)
	case err != nil:
		t.Fatalf("a CUDA device exists but the backend did not open: %v", err)
	}
	return b.(*cuda.Backend)
}

func TestCUDAOpsMatchReference(t *testing.T) {
	b := needCUDA(t)
	t.Logf("device: %s", b.Capabilities().Description)
	backendtest.RunVectors(t, gpu)
}

func TestCUDAGradientsMatchFiniteDifferences(t *testing.T) { suiteOnCUDA(t, backendtest.RunGradCheck) }

func TestCUDAComplex(t *testing.T) { suiteOnCUDA(t, backendtest.RunComplex) }

func TestCUDARowBodies(t *testing.T) { suiteOnCUDA(t, backendtest.RunRowBodies) }

func TestCUDAConcurrentAutograd(t *testing.T) { suiteOnCUDA(t, backendtest.RunConcurrentAutograd) }

// suiteOnCUDA runs one of backendtest's shared suites on the GPU
// (suiteOnEmulator's twin): a backend adds only its device, and the skip
// where that is absent.
func suiteOnCUDA(t *testing.T, suite func(*testing.T, core.Device)) {
	t.Helper()
	needCUDA(t)
	suite(t, gpu)
}

// TestCUDAKernelCoverage lists the ops that have no CUDA kernel yet (they
// run on the CPU behind the GPU, counted as fallbacks).
func TestCUDAKernelCoverage(t *testing.T) {
	missing, n := core.MissingKernels("cuda")
	t.Logf("cuda kernels: %d of %d ops that need one; without: %s", n-len(missing), n, strings.Join(missing, " "))
}

// TestCUDAConformanceColumn writes the Go SDK's cuda column of the
// conformance report to $WT_CONFORMANCE_OUT (the device check sets it).
func TestCUDAConformanceColumn(t *testing.T) {
	out := os.Getenv("WT_CONFORMANCE_OUT")
	if out == "" {
		t.Skip("WT_CONFORMANCE_OUT is not set (the device check sets it)")
	}
	// The conformance runner's own column (fallbacks counted, the warning
	// on, a GPU that fails to open an "open failed" column), without the
	// training check.
	res := conformance.RunColumn(gpu)
	raw, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Without a GPU the backend must say why, naming what it looked for; the
// rest of the process carries on.
func TestAbsentDriverSaysWhy(t *testing.T) {
	_, _, err := cuda.Probe()
	if err == nil {
		t.Skip("a CUDA device is present")
	}
	require.ErrorIs(t, err, cuda.ErrNoDevice)
	_, err = core.BackendFor(gpu)
	require.Error(t, err)
	require.ErrorIs(t, err, core.ErrDeviceUnavailable)
	require.Contains(t, err.Error(), "libcuda.so.1", "the message names the driver library it looked for")
	x := core.Call1("add", nil, core.FromSlice([]float32{1}, core.Shape{1}), core.FromSlice([]float32{2}, core.Shape{1}))
	require.NoError(t, x.Err(), "the CPU works regardless")
}
