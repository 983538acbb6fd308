//go:build linux && cgo

package cuda_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// The graph IR's fusion on CUDA: a layer's bias, activation and residual
// chain fused into one kernel and into the product's epilogue, compared
// with the same graph run op by op.
func TestGraphFusionOnCUDA(t *testing.T) {
	needEmulator(t)
	dev := emuDevice
	on := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed, "device": dev.String()})
	}
	w, b := on(1, 16, 8), on(2, 8)
	layer := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := in[0]
		h := core.Call1("gelu", nil, core.Call1("add", nil, core.Call1("matmul", nil, x, w), b))
		y := core.Call1("tanh", nil, core.Call1("mul", nil, core.Call1("sub", nil, h, core.Call1("slice", core.Attrs{"axis": 1, "start": 0, "stop": 8}, x)), h))
		return []*core.Tensor{core.Call1("sum", core.Attrs{"axes": []int{1}}, core.Call1("exp", nil, y))}, nil
	}
	x := on(3, 4, 16)
	g, err := ir.Trace(layer, x)
	require.NoError(t, err)
	_, _, _, err = g.Optimize()
	require.NoError(t, err)
	plain, err := g.Run(x)
	require.NoError(t, err)
	report, err := g.Fuse(dev)
	require.NoError(t, err)
	assert.Positive(t, report.Elementwise+report.Epilogues+report.Reductions, "something fused:\n%s", g)
	fused, err := g.Run(x)
	require.NoError(t, err)
	a, err := plain[0].Float64s()
	require.NoError(t, err)
	c, err := fused[0].Float64s()
	require.NoError(t, err)
	for i := range a {
		require.InDelta(t, a[i], c[i], 1e-5+1e-5*math.Abs(a[i]), "element %d\n%s", i, g)
	}
}
