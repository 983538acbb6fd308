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

// FuseMap, FuseEpilogue and AttentionTransposed allocate their outputs and
// hand the recycled blocks over uncleared too (claimOutput): each must write
// every element, which the NaN bytes of a poisoned cache would show, and
// equal the ops it stands for. Sizes cover the packed product and the small
// one, and attention with a short last row block.
func TestFusedKernelsWriteEveryElementOfRecycledOutputs(t *testing.T) {
	defer PoisonCacheForTest()()
	be := &Backend{}
	ramp := func(shape ...int) *core.Tensor {
		s := core.Shape(shape)
		v := make([]float32, s.Numel())
		for i := range v {
			v[i] = float32((i*37)%23)/11 - 1
		}
		return core.FromSlice(v, s)
	}
	same := func(what string, got, want *core.Tensor) {
		t.Helper()
		g, err := got.Float32s()
		require.NoError(t, err, what)
		w, err := want.Float32s()
		require.NoError(t, err, what)
		require.Equal(t, len(w), len(g), what)
		for i := range w {
			require.False(t, math.IsNaN(float64(g[i])), "%s: element %d not written", what, i)
			require.InDelta(t, w[i], g[i], 1e-4, "%s: element %d", what, i)
		}
	}
	leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
	biasAdd := &fusion.Expr{Op: "add", Args: []*fusion.Expr{leaf(0), leaf(1)}}
	for range 3 { // the later rounds get the earlier rounds' released blocks
		for _, mkn := range [][3]int{{5, 7, 6}, {130, 96, 72}} {
			x, w, bias := ramp(mkn[0], mkn[1]), ramp(mkn[1], mkn[2]), ramp(mkn[2])
			got, err := be.FuseEpilogue("matmul", []*core.Tensor{x, w}, nil, biasAdd, []*core.Tensor{bias})
			require.NoError(t, err)
			same("matmul epilogue", got, core.Call1("add", nil, core.Call1("matmul", nil, x, w), bias))
			got.Release()
		}
		x, y := ramp(3, 1000), ramp(1000)
		got, err := be.FuseMap(biasAdd, []*core.Tensor{x, y}, core.Shape{3, 1000}, core.F32)
		require.NoError(t, err)
		same("fused map", got, core.Call1("add", nil, x, y))
		got.Release()

		q, k, v := ramp(2, 3, 70, 8), ramp(2, 3, 50, 8), ramp(2, 3, 50, 8)
		got, err = be.AttentionTransposed(q, k, v, nil, nil)
		require.NoError(t, err)
		want := core.Call1("scaled_dot_product_attention", nil, q, k, v).Transpose(core.Attrs{"dim0": 1, "dim1": 2}).Contiguous()
		same("transposed attention", got, want)
		got.Release()
	}
}
