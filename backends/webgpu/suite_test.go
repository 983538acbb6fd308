package webgpu_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/backends/backendtest"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

var gpu = core.Device{Kind: "webgpu"}

func TestMain(m *testing.M) {
	// Tuning decisions go to a private cache, not the user's.
	cache, err := os.MkdirTemp("", "wt-cache")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", cache)
	}
	// Every kernel cache hit checks that its key names one source.
	webgpu.VerifyKernelKeys()
	switch b, err := core.BackendFor(gpu); {
	case errors.Is(err, webgpu.ErrNoAdapter):
		fmt.Printf("webgpu: no adapter: %v\n", err)
	case err != nil:
		fmt.Printf("webgpu: an adapter exists but the backend did not open (the GPU tests fail): %v\n", err)
	default:
		fmt.Printf("webgpu adapter: %s\n", b.Capabilities().Description)
	}
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// needGPU skips when no WebGPU adapter exists on this machine, saying why,
// and fails when one exists but the backend does not open.
func needGPU(t *testing.T) *webgpu.Backend {
	t.Helper()
	return webgputest.Need(t)
}

// suiteOnGPU runs one of backendtest's shared suites on the GPU: a backend
// adds only its device, and the skip where that is absent.
func suiteOnGPU(t *testing.T, suite func(*testing.T, core.Device)) {
	t.Helper()
	needGPU(t)
	suite(t, gpu)
}

// The WebGPU backend runs the shared suite: every op's reference vectors,
// compared with the same tolerances as the CPU backend.
func TestOpsMatchReference(t *testing.T) { suiteOnGPU(t, backendtest.RunVectors) }

func TestGradientsMatchFiniteDifferences(t *testing.T) { suiteOnGPU(t, backendtest.RunGradCheck) }

// Complex64 as pairs of f32 on the GPU, against math/cmplx.
func TestComplexMatchesMathCmplx(t *testing.T) { suiteOnGPU(t, backendtest.RunComplex) }

// u16 (held widened as u32) against Go's arithmetic; u64 must be refused.
func TestUnsignedMatchesGo(t *testing.T) { suiteOnGPU(t, backendtest.RunUnsigned) }

// Row bodies (rms_norm, the collectives) past the samples' sizes: long
// rows, more rows than one grid dimension holds.
func TestRowBodies(t *testing.T) { suiteOnGPU(t, backendtest.RunRowBodies) }

// Every op's f32 call after the same call in bf16 and f16, whose f32-word
// kernels round on store: each must be compiled and cached apart.
func TestKernelsKeyedByNarrowDTypes(t *testing.T) { suiteOnGPU(t, backendtest.RunNarrowFirst) }

// TestKernelCoverage fails when an op of the registry has no WebGPU kernel,
// so a new op cannot quietly run on the CPU behind the GPU.
func TestKernelCoverage(t *testing.T) {
	needGPU(t)
	missing, needed := core.MissingKernels("webgpu")
	t.Logf("webgpu kernels: %d of %d ops that need one", needed-len(missing), needed)
	if len(missing) > 0 {
		t.Errorf("ops without a WebGPU kernel (they would run on the CPU behind it): %s", strings.Join(missing, " "))
	}
}
