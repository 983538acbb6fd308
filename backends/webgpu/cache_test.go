package webgpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// After its first step, a training loop finds every kernel compiled: the
// kernel cache's hit ratio over the next 10 steps is at least 95% (the IR
// issue's target; here it is all of them).
func TestTrainingLoopHitsTheKernelCache(t *testing.T) {
	dev := testGPU
	g := gpuBackend(t)
	core.ManualSeed(3)
	l1, err := nn.NewLinear(8, 32, nn.WithDevice(dev))
	require.NoError(t, err)
	l2, err := nn.NewLinear(32, 4, nn.WithDevice(dev))
	require.NoError(t, err)
	model, err := nn.NewSequential(l1, &nn.GELU{}, l2)
	require.NoError(t, err)
	opt, err := nn.NewAdam(model.Parameters(), nn.DefaultAdam())
	require.NoError(t, err)
	x := core.Call1("randn", core.Attrs{"shape": []int{16, 8}, "device": dev.String()})
	y := core.Call1("randint", core.Attrs{"shape": []int{16}, "high": 4, "device": dev.String()})
	step := func() {
		opt.ZeroGrad()
		loss := core.Call1("cross_entropy", nil, model.Forward(x), y)
		require.NoError(t, loss.Backward())
		require.NoError(t, opt.Step())
		_, err := loss.Item()
		require.NoError(t, err)
	}
	step() // warm-up: compiles what the loop needs
	before := g.KernelCacheStats()
	for range 10 {
		step()
	}
	after := g.KernelCacheStats()
	lookups, hits := after.Lookups-before.Lookups, after.Hits-before.Hits
	require.Greater(t, lookups, int64(50))
	ratio := float64(hits) / float64(lookups)
	assert.GreaterOrEqual(t, ratio, 0.95, "%d of %d lookups hit", hits, lookups)
	t.Logf("kernel cache over 10 warm steps: %d lookups, %d hits (%.1f%%)", lookups, hits, 100*ratio)
}
