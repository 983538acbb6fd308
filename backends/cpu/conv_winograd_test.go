package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The Winograd path (conv_winograd.go) against the float64 kernels and the
// direct float32 path, on the shapes it takes: odd grids (the last tiles
// half outside), no padding, asymmetric padding, groups, more channels
// than one k panel holds, and the unit-stride conv_transpose2d, which runs
// as a forward convolution. Each case must also give the same bits on one
// thread and from the transforms' Go loops (which take the tiles the
// vector kernels leave), and differ from the direct path's somewhere (else
// it did not run).
func TestConvWinogradMatchesF64(t *testing.T) {
	cases := []struct {
		x, w  []int
		attrs core.Attrs
	}{
		{[]int{2, 16, 13, 15}, []int{16, 16, 3, 3}, core.Attrs{"padding": 1}},
		{[]int{1, 40, 17, 20}, []int{33, 40, 3, 3}, core.Attrs{}},
		{[]int{2, 64, 13, 15}, []int{48, 32, 3, 3}, core.Attrs{"padding": 2, "groups": 2}},
		{[]int{1, 300, 16, 16}, []int{20, 300, 3, 3}, core.Attrs{"padding": 1}},
		// Three k panels of 176, 176 and 168 channels: the last one's slivers
		// are shorter than the others', on blocks of two slivers.
		{[]int{2, 520, 32, 32}, []int{16, 520, 3, 3}, core.Attrs{"padding": 1}},
		{[]int{2, 16, 20, 8}, []int{17, 16, 3, 3}, core.Attrs{"padding": []int{1, 2}}},
		{[]int{5, 24, 8, 8}, []int{64, 24, 3, 3}, core.Attrs{"padding": 1}},
	}
	f32 := func(x *core.Tensor) *core.Tensor { return x.Cast(core.F32) }
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			x, w, b := cpRand(core.F64, c.x...), cpRand(core.F64, c.w...), cpRand(core.F64, c.w[0])
			y := cpCall(t, "conv2d", c.attrs, x, w, b)
			gy := cpRand(core.F64, y.Shape()...)
			bt := cpRand(core.F64, c.x[1])
			for _, p := range []struct {
				name      string
				want, got func() *core.Tensor
			}{
				{"conv2d", func() *core.Tensor { return y },
					func() *core.Tensor { return cpCall(t, "conv2d", c.attrs, f32(x), f32(w), f32(b)) }},
				{"conv_transpose2d", func() *core.Tensor { return cpCall(t, "conv_transpose2d", c.attrs, gy, w, bt) },
					func() *core.Tensor { return cpCall(t, "conv_transpose2d", c.attrs, f32(gy), f32(w), f32(bt)) }},
			} {
				want, got := f64s(t, p.want()), f64s(t, p.got())
				restore := cpu.SetWinogradForTest(false)
				direct := f64s(t, p.got())
				restore()
				require.Len(t, got, len(want))
				// f32 against f64, relative to the output's scale: the
				// direct path's error bounds the Winograd path's, with room.
				scale, errW, errD := 0.0, 0.0, 0.0
				for k := range want {
					scale = max(scale, math.Abs(want[k]))
					errW = max(errW, math.Abs(got[k]-want[k]))
					errD = max(errD, math.Abs(direct[k]-want[k]))
				}
				assert.Less(t, errW/scale, 1e-6, "%s: Winograd error (direct %.2g)", p.name, errD/scale)
				differ := 0
				for k := range got {
					if got[k] != direct[k] {
						differ++
					}
				}
				assert.Positive(t, differ, "%s: the Winograd path did not run (its bits equal the direct path's)", p.name)
				restore = cpu.SetNumThreadsForTest(1)
				one := f64s(t, p.got())
				restore()
				assert.Equal(t, got, one, "%s: the same bits on one thread", p.name)
				restore = cpu.WinogradScalarForTest()
				scalar := f64s(t, p.got())
				restore()
				assert.Equal(t, got, scalar, "%s: the same bits from the transforms' Go loops", p.name)
			}
		})
	}
}

// Random shapes the Winograd path takes (channels, grids, padding, groups
// and batch drawn), each against the direct path within the same scale
// of error: the fixed cases above pick the edges, these what they missed.
func TestConvWinogradRandomShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	for i := range 24 {
		groups := 1 + rng.IntN(2)
		inC, outC := groups*(16+rng.IntN(24)), groups*(16+rng.IntN(24))
		h, w := 3+rng.IntN(30), 3+rng.IntN(30)
		pad := []int{rng.IntN(3), rng.IntN(3)}
		batch := 1 + rng.IntN(3)
		if batch*(h+2*pad[0]-2)*(w+2*pad[1]-2) < 256 {
			h, w = h+16, w+16 // below winogradMinOutputs the direct path runs
		}
		attrs := core.Attrs{"padding": pad, "groups": groups}
		x, wt := cpRand(core.F64, batch, inC, h, w), cpRand(core.F64, outC, inC/groups, 3, 3)
		want := f64s(t, cpCall(t, "conv2d", attrs, x, wt))
		got := f64s(t, cpCall(t, "conv2d", attrs, x.Cast(core.F32), wt.Cast(core.F32)))
		scale, worst := 0.0, 0.0
		for k := range want {
			scale, worst = max(scale, math.Abs(want[k])), max(worst, math.Abs(got[k]-want[k]))
		}
		assert.Less(t, worst/scale, 1e-6, "case %d: x %dx%dx%dx%d, %d out channels, padding %v, groups %d",
			i, batch, inC, h, w, outC, pad, groups)
	}
}
