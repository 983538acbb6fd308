package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// FuseMaps hands its outputs' recycled blocks over without clearing them,
// so every element of every output must be written: a root computed in
// place, a root two trees share (copied), an input returned as it is and a
// constant, over several blocks and a short last one, with every cached
// block full of NaN bytes.
func TestFuseMapsWritesEveryElementOfRecycledOutputs(t *testing.T) {
	defer PoisonCacheForTest()()
	const n = 3*fusedBlock + 7
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i)*0.5, float32(n-i)
	}
	leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
	sum := &fusion.Expr{Op: "add", Args: []*fusion.Expr{leaf(0), leaf(1)}}
	prod := &fusion.Expr{Op: "mul", Args: []*fusion.Expr{sum, leaf(1)}}
	two := &fusion.Expr{Op: fusion.Const, Value: 2}
	for range 3 { // the later rounds get the earlier rounds' released blocks
		x := core.FromSlice(xs, core.Shape{n})
		y := core.FromSlice(ys, core.Shape{n})
		outs, err := (&Backend{}).FuseMaps([]*fusion.Expr{sum, prod, sum, leaf(0), two}, []*core.Tensor{x, y}, core.Shape{n}, core.F32)
		require.NoError(t, err)
		for k, o := range outs {
			got, err := o.Float32s()
			require.NoError(t, err)
			for i, v := range got {
				want := [...]float32{xs[i] + ys[i], (xs[i] + ys[i]) * ys[i], xs[i] + ys[i], xs[i], 2}[k]
				require.False(t, math.IsNaN(float64(v)), "output %d element %d not written", k, i)
				require.Equal(t, want, v, "output %d element %d", k, i)
			}
			o.Release()
		}
	}
}
