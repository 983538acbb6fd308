//go:build linux && cgo

package cuda_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/webtensor/webtensor/backends/cuda"
)

// TestMain keeps compiled kernels (NVRTC's CUBINs, the emulator's shared
// libraries) in the repository's build folder rather than the user's cache,
// unless the caller names a cache (the GPU device check shares one between
// its test binaries).
func TestMain(m *testing.M) {
	if os.Getenv("WEBTENSOR_CACHE_DIR") == "" {
		if dir, err := filepath.Abs("../../build/test-cache"); err == nil {
			os.Setenv("WEBTENSOR_CACHE_DIR", dir)
		}
	}
	// Every kernel cache hit, on the emulator and a GPU, checks that its
	// key names one source.
	cuda.VerifyKernelKeys()
	os.Exit(m.Run())
}
