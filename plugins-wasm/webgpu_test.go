package plugins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// A plugin op that carries WGSL runs as that shader on the WebGPU backend
// (not through the CPU behind it), forward and backward, and agrees with
// its wasm CPU kernel.
func TestPluginWGSLRunsOnWebGPU(t *testing.T) {
	gpu := webgputest.Device
	be := webgputest.Need(t)
	loadExample(t, "cclip.wasm")
	require.NotNil(t, be.Kernel("cclip.soft_clip"), "the WGSL kernel is used on webgpu")
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

// The default tuning policy, built from plugins-wasm/policies/kernel-variant,
// steers the WebGPU backend's matmul variant: its proposal is timed against
// the current choice, recorded with its reason, and can be rolled back.
func TestDefaultPolicyTunesWebGPUMatmul(t *testing.T) {
	gpu := webgputest.Device
	g := webgputest.Need(t)
	p := loadExample(t, "policy-kernel-variant.wasm")
	assert.Equal(t, []string{"kernel_variant"}, p.Policies())
	pol, err := p.Policy("kernel_variant")
	require.NoError(t, err)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	g.ForgetTuning()
	g.SetPolicy(pol)
	t.Cleanup(func() { g.SetPolicy(nil); g.ForgetTuning() })

	a := core.Call1("randn", core.Attrs{"shape": []int{96, 80}, "seed": 3})
	b := core.Call1("randn", core.Attrs{"shape": []int{80, 72}, "seed": 4})
	want, err := a.Matmul(b).Float64s()
	require.NoError(t, err)
	got, err := a.To(gpu).Matmul(b.To(gpu)).Float64s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, want, got, 1e-3)

	const key = "matmul|b0-m6-k6-n6-v4"
	rec, ok := g.Tuning()[key]
	require.True(t, ok, "decisions: %v", g.Tuning())
	assert.Equal(t, "tuning.kernel_variant", rec.Policy)
	assert.NotEmpty(t, rec.Proposed)
	assert.NotEmpty(t, rec.Reason)
	assert.Empty(t, rec.Error)
	assert.Contains(t, rec.Timings, rec.Variant, "the kept variant was measured")
	assert.Equal(t, rec.Kept, rec.Variant == rec.Proposed)
	if g.Capabilities().Software {
		assert.Equal(t, "regblock4", rec.Proposed, "the policy's rule for software drivers")
	}

	back, err := g.RollbackTuning(key)
	require.NoError(t, err)
	assert.Contains(t, back.Reason, "rolled back")
	assert.Equal(t, back.Variant, g.Tuning()[key].Variant)
	_, err = g.RollbackTuning("matmul|nothing-here")
	assert.Error(t, err)
}
