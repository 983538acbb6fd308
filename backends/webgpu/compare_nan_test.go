package webgpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// TestNotEqualWithNaN: NaN != anything is true (IEEE 754, NumPy, the CPU).
// WGSL's != on floats became SPIR-V's ordered not-equal, which lavapipe made
// false for NaN; the kernels and fused trees now negate ==.
func TestNotEqualWithNaN(t *testing.T) {
	needGPU(t)
	nan := math.NaN()
	a := core.FromFloat64s(core.F32, core.Shape{5}, []float64{nan, nan, 1, 0, math.Inf(1)})
	b := core.FromFloat64s(core.F32, core.Shape{5}, []float64{nan, 1, nan, math.Copysign(0, -1), math.Inf(1)})
	for _, op := range []string{"ne", "eq", "lt", "le", "gt", "ge"} {
		want, err := core.Call1(op, nil, a, b).Float64s()
		require.NoError(t, err)
		got, err := core.Call1(op, nil, a.To(gpu), b.To(gpu)).Float64s()
		require.NoError(t, err)
		require.Equal(t, want, got, op)
	}
	ne, err := core.Call1("ne", nil, a.To(gpu), b.To(gpu)).Float64s()
	require.NoError(t, err)
	require.Equal(t, []float64{1, 1, 1, 0, 0}, ne)
}
