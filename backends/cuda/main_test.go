//go:build linux && cgo

package cuda_test

import (
	"os"
	"path/filepath"
	"testing"
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
	os.Exit(m.Run())
}
