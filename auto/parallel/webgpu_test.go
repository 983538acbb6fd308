package parallel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// WebGPU is a device of the measured cluster, its single-device plans are
// priced, and running them (the block and the MLP) gives the CPU's step.
func TestWebGPUInClusterAndPlans(t *testing.T) {
	webgputest.Need(t)
	ws := workers(t, 2)
	dev := webgputest.Device
	c, err := Measure(ws, &dev)
	require.NoError(t, err)
	gpu, ok := c.device("webgpu")
	require.True(t, ok, "devices %v", c.Devices)
	assert.Greater(t, gpu.GFLOPS, 0.0)
	assert.Greater(t, gpu.OpMicros, 0.0)

	b := Block{Batch: 2, Seq: 8, Dim: 16, Heads: 2, Hidden: 24}
	m, err := BlockModel(b)
	require.NoError(t, err)
	plans := Plans(m, c)
	var onGPU Plan
	for _, p := range plans {
		if p.Name() == "single webgpu" {
			onGPU = p
		}
	}
	require.True(t, onGPU.Feasible, "plans %v", plans)
	x, y, w := randomBlock(b, 6)
	ref, err := RunBlockSingle(b, core.Device{Kind: "cpu"}, x, y, w)
	require.NoError(t, err)
	s, err := RunBlockPlan(onGPU, b, ws, x, y, w)
	checkStep(t, "block on webgpu", ref, s, err)

	mlp := MLP{Rows: 8, Dims: []int{16, 32, 8}}
	mx, my, mw := randomModel(mlp, 7)
	mref, err := RunSingle(mlp, core.Device{Kind: "cpu"}, mx, my, mw)
	require.NoError(t, err)
	s, err = RunMLPPlan(onGPU, mlp, ws, mx, my, mw)
	checkStep(t, "MLP on webgpu", mref, s, err)
}
