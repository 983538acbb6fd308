package plugins_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

// A plugin op that carries WGSL runs as that shader on the WebGPU backend
// (not through the CPU behind it), forward and backward, and agrees with
// its wasm CPU kernel.
func TestPluginWGSLRunsOnWebGPU(t *testing.T) {
	if os.Getenv("XDG_RUNTIME_DIR") == "" {
		t.Setenv("NODEVICE_SELECT", "1")
	}
	gpu := core.Device{Kind: "webgpu"}
	be, err := core.BackendFor(gpu)
	if err != nil {
		t.Skipf("no WebGPU adapter: %v", err)
	}
	loadExample(t, "cclip.wasm")
	require.NotNil(t, be.(*webgpu.Backend).Kernel("cclip.soft_clip"), "the WGSL kernel is used on webgpu")
	vals := []float32{-3, -1, -0.25, 0, 0.5, 2, 4}
	up := []float32{1, 2, 3, 4, 5, 6, 7}
	attrs := core.Attrs{"limit": 1.5}
	yCPU, dxCPU := forwardBackward(t, "cclip.soft_clip", attrs, core.FromSlice(vals, core.Shape{7}), up)
	x := core.FromSlice(vals, core.Shape{7}, gpu)
	x.SetRequiresGrad(true)
	y := core.Call1("cclip.soft_clip", attrs, x)
	require.NoError(t, y.Err())
	assert.Equal(t, gpu, y.Device())
	yv, err := y.Float64s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, yCPU, yv, 1e-5)
	require.NoError(t, y.Backward(core.FromSlice(up, core.Shape{7}, gpu)))
	dx, err := x.Grad().Float64s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, dxCPU, dx, 1e-5)
	// A strided view goes in as a dense copy: the shader indexes x[i].
	big := core.FromSlice([]float32{9, -3, 9, 0.5, 9, 2}, core.Shape{3, 2}, gpu)
	col := core.Call1("slice", core.Attrs{"axis": 1, "start": 1, "stop": 2}, big)
	out, err := core.Call1("cclip.soft_clip", attrs, col).Float64s()
	require.NoError(t, err)
	want, _ := core.Call1("cclip.soft_clip", attrs, core.FromSlice([]float32{-3, 0.5, 2}, core.Shape{3, 1})).Float64s()
	assert.InDeltaSlice(t, want, out, 1e-5)
}
