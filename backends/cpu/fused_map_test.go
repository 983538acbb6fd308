package cpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// FuseMap reads inputs broadcast along trailing dimensions (a per-channel
// bias, a norm's statistics) by repeating each element, along leading ones
// by wrapping around, and the rest from a dense copy: every form gives the
// op chain's bits, over blocks that start inside a run and runs longer and
// shorter than a block.
func TestFuseMapBroadcastLeavesMatchTheOpChain(t *testing.T) {
	leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
	op := func(name string, args ...*fusion.Expr) *fusion.Expr { return &fusion.Expr{Op: name, Args: args} }
	for _, c := range []struct {
		out   core.Shape
		other []int
	}{
		{core.Shape{2, 3, 4, 5}, []int{3, 1, 1}},
		{core.Shape{2, 3, 4, 5}, []int{1, 3, 1, 1}},
		{core.Shape{2, 3, 4, 5}, []int{3, 4, 1}},
		{core.Shape{2, 3, 4, 5}, []int{2, 1, 1, 1}},
		{core.Shape{3, 1500}, []int{3, 1}},       // runs shorter than a block, starting inside one
		{core.Shape{2, 3, 4096}, []int{3, 1}},    // runs longer than a block
		{core.Shape{2, 3, 4, 5}, []int{4, 5}},    // leading broadcast
		{core.Shape{2, 3, 4, 5}, []int{3, 1, 5}}, // neither: a dense copy
		{core.Shape{7, 9}, []int{1}},
	} {
		t.Run(fmt.Sprint(c.out, c.other), func(t *testing.T) {
			x := core.Call1("randn", core.Attrs{"shape": []int(c.out), "seed": 3})
			b := core.Call1("randn", core.Attrs{"shape": c.other, "seed": 4})
			tree := op("mul", op("add", leaf(0), leaf(1)), op("sub", leaf(1), leaf(0)))
			got, err := (&Backend{}).FuseMap(tree, []*core.Tensor{x, b}, c.out, core.F32)
			require.NoError(t, err)
			sum := core.Call1("add", nil, x, b)
			want := core.Call1("mul", nil, sum, core.Call1("sub", nil, b, x))
			g, err := got.Float32s()
			require.NoError(t, err)
			w, err := want.Float32s()
			require.NoError(t, err)
			require.Equal(t, w, g)
		})
	}
}

// Views whose rows are dense but apart (a slice of the last dim, over one
// or several leading dims) are read row by row in place; other views (a
// transpose) from a dense copy; both give the op chain's bits.
func TestFuseMapViewLeavesMatchTheOpChain(t *testing.T) {
	leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
	tree := &fusion.Expr{Op: "mul", Args: []*fusion.Expr{&fusion.Expr{Op: "add", Args: []*fusion.Expr{leaf(0), leaf(1)}}, leaf(1)}}
	big := core.Call1("randn", core.Attrs{"shape": []int{2, 300, 70}, "seed": 5})
	views := map[string]*core.Tensor{
		"last-dim slice": core.Call1("slice", core.Attrs{"axis": -1, "start": 3, "stop": 38, "step": 1}, big),
		"2-d slice":      core.Call1("slice", core.Attrs{"axis": -1, "start": 0, "stop": 35, "step": 1}, core.Call1("reshape", core.Attrs{"shape": []int{600, 70}}, big)),
		"transpose":      core.Call1("transpose", core.Attrs{"dim0": 1, "dim1": 2}, core.Call1("slice", core.Attrs{"axis": 1, "start": 0, "stop": 35, "step": 1}, big)),
	}
	for name, v := range views {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, v.Err())
			require.False(t, v.IsContiguous(), "the case needs a view")
			x := core.Call1("randn", core.Attrs{"shape": []int(v.Shape()), "seed": 6})
			got, err := (&Backend{}).FuseMap(tree, []*core.Tensor{x, v}, v.Shape(), core.F32)
			require.NoError(t, err)
			want := core.Call1("mul", nil, core.Call1("add", nil, x, v), v)
			g, err := got.Float32s()
			require.NoError(t, err)
			w, err := want.Float32s()
			require.NoError(t, err)
			require.Equal(t, w, g)
		})
	}
}
