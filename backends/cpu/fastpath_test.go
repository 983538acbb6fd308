package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Dense f32 operands take fast paths that read them in place (comparisons
// into bool, where, relu, dropout, sums over leading axes). The general path reads
// float64: the same values in f64 must give the same bits once rounded to
// f32, including NaN, infinities and signed zeros.
func TestF32FastPathsMatchGeneralPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := make([]float32, 300*70)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64())
	}
	copy(vals, []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))})
	x32 := core.FromSlice(vals, core.Shape{300, 70})
	x64 := core.Call1("cast", core.Attrs{"dtype": core.F64}, x32)
	same := func(what string, got, want *core.Tensor) {
		t.Helper()
		require.NoError(t, got.Err(), what)
		require.NoError(t, want.Err(), what)
		g, _ := got.Float64s()
		w, _ := core.Call1("cast", core.Attrs{"dtype": got.DType()}, want).Float64s()
		require.Equal(t, len(w), len(g), what)
		for i := range w {
			if math.Float64bits(g[i]) != math.Float64bits(w[i]) && !(math.IsNaN(g[i]) && math.IsNaN(w[i])) {
				t.Fatalf("%s: element %d: %v, general path %v", what, i, g[i], w[i])
			}
		}
	}
	for _, op := range []string{"gt", "lt", "eq", "ne", "ge", "le"} {
		zero32, zero64 := core.Scalar(0, core.F32, core.CPU), core.Scalar(0, core.F64, core.CPU)
		same(op+" scalar", core.Call1(op, nil, x32, zero32), core.Call1(op, nil, x64, zero64))
		same(op+" scalar first", core.Call1(op, nil, zero32, x32), core.Call1(op, nil, zero64, x64))
		y32 := core.Call1("neg", nil, x32)
		same(op+" full", core.Call1(op, nil, x32, y32), core.Call1(op, nil, x64, core.Call1("cast", core.Attrs{"dtype": core.F64}, y32)))
	}
	same("relu", core.Call1("relu", nil, x32), core.Call1("relu", nil, x64))
	mask32 := core.Call1("gt", nil, x32, core.Scalar(0, core.F32, core.CPU))
	mask64 := core.Call1("gt", nil, x64, core.Scalar(0, core.F64, core.CPU))
	same("where", core.Call1("where", nil, mask32, x32, core.Scalar(-0.5, core.F32, core.CPU)),
		core.Call1("where", nil, mask64, x64, core.Scalar(-0.5, core.F64, core.CPU)))
	same("where both full", core.Call1("where", nil, mask32, core.Call1("neg", nil, x32), x32),
		core.Call1("where", nil, mask64, core.Call1("neg", nil, x64), x64))
	for _, p := range []float64{0.5, 0.3} {
		a := core.Attrs{"p": p, "training": true, "seed": 7, "offset": 11}
		same("dropout", core.Call1("dropout", a, x32), core.Call1("dropout", a, x64))
	}
	for _, axes := range [][]int{{0}, {0, 1}, nil} {
		a := core.Attrs{"axes": axes}
		if axes == nil {
			a = nil
		}
		same("sum", core.Call1("sum", a, x32), core.Call1("sum", a, x64))
		same("mean", core.Call1("mean", a, x32), core.Call1("mean", a, x64))
	}
	assert.Equal(t, core.Shape{70}, core.Call1("sum", core.Attrs{"axes": []int{0}}, x32).Shape())
}
