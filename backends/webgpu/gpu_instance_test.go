//go:build !js

package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu"
)

// The instance serves Vulkan, Metal and DX12 only. An OpenGL adapter here
// means newInstance's descriptor did not reach wgpu-native as meant (its
// hand-written C structs no longer match wgpu.h): wgpu would then start
// EGL, whose Mesa driver prints XDG_RUNTIME_DIR errors and loads LLVM into
// the process's global scope, where Triton's copy of LLVM binds to it and
// crashes (README, Troubleshooting).
func TestInstanceServesPrimaryBackendsOnly(t *testing.T) {
	needGPU(t)
	ads := webgpu.Adapters()
	require.NotEmpty(t, ads, "the backend opened, so the instance has an adapter")
	for _, a := range ads {
		assert.Contains(t, []string{"vulkan", "metal", "d3d12"}, a.Backend, "adapter %s (%s)", a.Name, a.Driver)
	}
}
