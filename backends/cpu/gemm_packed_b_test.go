package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// A weight packed once (PackWeight) gives FuseEpiloguePacked the bits of
// FuseEpilogue on the weight itself: several column and depth panels,
// ragged edges, a transposed weight (a PyTorch Linear's [out, in] read as
// its transpose), a product too small for the blocked path (which reads the
// weight, not the panels), and a weight packed for another micro-kernel
// (the panels are then ignored, not misread).
func TestPackedWeightGivesTheBitsOfTheUnpackedProduct(t *testing.T) {
	be := &Backend{}
	rng := rand.New(rand.NewPCG(5, 6))
	tensor := func(shape ...int) *core.Tensor {
		v := randF32(rng, core.Shape(shape).Numel())
		return core.FromSlice(v, core.Shape(shape))
	}
	gelu := &fusion.Expr{Op: "gelu", Args: []*fusion.Expr{fusion.BiasAdd}}
	check := func(what string, x, w, bias *core.Tensor, e *fusion.Expr) {
		t.Helper()
		want, err := be.FuseEpilogue("matmul", []*core.Tensor{x, w}, nil, e, []*core.Tensor{bias})
		require.NoError(t, err, what)
		p, err := be.PackWeight(w)
		require.NoError(t, err, what)
		require.Same(t, w, p.Weight())
		got, err := be.FuseEpiloguePacked(x, p, e, []*core.Tensor{bias})
		require.NoError(t, err, what)
		g, _ := got.Float32s()
		wv, _ := want.Float32s()
		require.Equal(t, want.Shape(), got.Shape(), what)
		for i := range wv {
			if math.Float32bits(g[i]) != math.Float32bits(wv[i]) {
				t.Fatalf("%s: element %d = %v, unpacked %v", what, i, g[i], wv[i])
			}
		}
	}
	// k 600 and n 1100: three depth panels and two column blocks.
	check("dense", tensor(2, 70, 600), tensor(600, 1100), tensor(1100), fusion.BiasAdd)
	wt := tensor(530, 300).Transpose(core.Attrs{"dim0": 0, "dim1": 1})
	check("transposed weight", tensor(97, 300), wt, tensor(530), gelu)
	check("small product", tensor(3, 5), tensor(5, 4), tensor(4), fusion.BiasAdd)

	w := tensor(300, 200)
	p, err := be.PackWeight(w)
	require.NoError(t, err)
	pm := p.(*PackedMatrix)
	pm.nr++ // as if packed for another kernel's sliver width
	x, bias := tensor(64, 300), tensor(200)
	got, err := be.FuseEpiloguePacked(x, pm, fusion.BiasAdd, []*core.Tensor{bias})
	require.NoError(t, err)
	want, err := be.FuseEpilogue("matmul", []*core.Tensor{x, w}, nil, fusion.BiasAdd, []*core.Tensor{bias})
	require.NoError(t, err)
	g, _ := got.Float32s()
	wv, _ := want.Float32s()
	require.Equal(t, wv, g, "panels of another geometry are not read")

	_, err = be.PackWeight(tensor(2, 3, 4))
	require.Error(t, err, "a batch of matrices is not a weight")
}
