package webgpu_test

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/webtensor/webtensor/backends/backendtest"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

var gpu = core.Device{Kind: "webgpu"}

func TestMain(m *testing.M) {
	// Tuning decisions go to a private cache, not the user's.
	cache, err := os.MkdirTemp("", "wt-cache")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", cache)
	}
	// Mesa's device-select layer wants a runtime dir; without one it prints
	// to stderr on every run.
	if os.Getenv("XDG_RUNTIME_DIR") == "" {
		dir, err := os.MkdirTemp("", "xdg")
		if err == nil {
			os.Setenv("XDG_RUNTIME_DIR", dir)
		}
		os.Setenv("NODEVICE_SELECT", "1")
	}
	if b, err := core.BackendFor(gpu); err != nil {
		fmt.Printf("webgpu: no adapter: %v\n", err)
	} else {
		fmt.Printf("webgpu adapter: %s\n", b.Capabilities().Description)
	}
	code := m.Run()
	os.RemoveAll(os.Getenv("XDG_RUNTIME_DIR"))
	os.RemoveAll(cache)
	os.Exit(code)
}

// needGPU skips when no WebGPU adapter exists on this machine, saying why.
func needGPU(t *testing.T) *webgpu.Backend {
	t.Helper()
	b, err := core.BackendFor(gpu)
	switch {
	case errors.Is(err, webgpu.ErrNoAdapter):
		t.Skipf("no WebGPU adapter: %v", err)
	case err != nil:
		t.Fatalf("a WebGPU adapter exists but the backend did not open: %v", err)
	}
	return b.(*webgpu.Backend)
}

// The WebGPU backend runs the shared suite: every op's reference vectors,
// compared with the same tolerances as the CPU backend.
func TestOpsMatchReference(t *testing.T) {
	needGPU(t)
	backendtest.RunVectors(t, gpu)
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	needGPU(t)
	backendtest.RunGradCheck(t, gpu)
}

// TestKernelCoverage fails when an op of the registry has no WebGPU kernel,
// so a new op cannot quietly run on the CPU behind the GPU.
func TestKernelCoverage(t *testing.T) {
	needGPU(t)
	have := map[string]bool{}
	for _, op := range webgpu.Ops() {
		have[op] = true
	}
	var missing []string
	kernelOps := 0
	for _, def := range core.Ops() {
		if def.View != nil {
			continue // views are layouts made by core; no kernel runs
		}
		kernelOps++
		if !have[def.Name] {
			missing = append(missing, def.Name)
		}
	}
	sort.Strings(missing)
	t.Logf("webgpu kernels: %d of %d ops that need one", kernelOps-len(missing), kernelOps)
	if len(missing) > 0 {
		t.Errorf("ops without a WebGPU kernel (they would run on the CPU behind it): %s", strings.Join(missing, " "))
	}
}
