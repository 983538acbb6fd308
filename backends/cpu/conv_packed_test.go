package cpu_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The packed float32 convolutions (conv_packed.go) and the float32 pooling
// against the generic float64 kernels, on sizes that leave ragged slivers
// and panels: strides, dilations, groups, asymmetric padding effects,
// non-square images and kernels, batch 1, 1x1 kernels, and inputs that are
// strided or permuted views. Every case also runs on one thread and must
// give the same bits.
func TestConvPackedMatchesF64(t *testing.T) {
	cases := []struct {
		x, w  []int
		attrs core.Attrs
	}{
		{[]int{2, 4, 33, 35}, []int{6, 2, 3, 3}, core.Attrs{"stride": 2, "padding": 1, "groups": 2}},
		{[]int{1, 3, 17, 9}, []int{5, 3, 3, 2}, core.Attrs{"padding": []int{2, 1}, "dilation": []int{2, 1}}},
		{[]int{3, 8, 12, 20}, []int{24, 8, 3, 3}, core.Attrs{"padding": 1}},
		{[]int{2, 6, 7, 11}, []int{9, 2, 1, 1}, core.Attrs{"groups": 3}},
		{[]int{1, 70, 10, 10}, []int{19, 70, 3, 3}, core.Attrs{"padding": 3, "dilation": 2}},
		{[]int{2, 5, 9, 9}, []int{7, 5, 5, 3}, core.Attrs{"stride": []int{1, 2}, "padding": []int{0, 2}}},
		// Channels in eights: the weight gradient packs tap-major (conv_wgrad_taps.go),
		// rows inside the image, at its edges and in the padding.
		{[]int{2, 16, 13, 45}, []int{12, 8, 3, 3}, core.Attrs{"padding": []int{2, 1}, "groups": 2, "stride": []int{2, 1}}},
		{[]int{1, 24, 9, 37}, []int{10, 24, 3, 5}, core.Attrs{"padding": 2, "dilation": []int{1, 2}}},
		{[]int{2, 8, 6, 70}, []int{4, 8, 2, 3}, core.Attrs{}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			x, w, b := cpRand(core.F64, c.x...), cpRand(core.F64, c.w...), cpRand(core.F64, c.w[0])
			y := cpCall(t, "conv2d", c.attrs, x, w, b)
			gy := cpRand(core.F64, y.Shape()...)
			wa := core.Attrs{"kernel_size": c.w[2:]}
			for k, v := range c.attrs {
				wa[k] = v
			}
			f32 := func(x *core.Tensor) *core.Tensor { return x.Cast(core.F32) }
			type pair struct {
				name      string
				want, got func() *core.Tensor
			}
			pairs := []pair{
				{"conv2d", func() *core.Tensor { return y },
					func() *core.Tensor { return cpCall(t, "conv2d", c.attrs, f32(x), f32(w), f32(b)) }},
				{"conv_transpose2d", func() *core.Tensor { return cpCall(t, "conv_transpose2d", c.attrs, gy, w, cpRand(core.F64, c.x[1])) },
					func() *core.Tensor {
						return cpCall(t, "conv_transpose2d", c.attrs, f32(gy), f32(w), cpRand(core.F32, c.x[1]))
					}},
				{"weight_grad", func() *core.Tensor { return cpCall(t, "_conv2d_weight_grad", wa, x, gy) },
					func() *core.Tensor { return cpCall(t, "_conv2d_weight_grad", wa, f32(x), f32(gy)) }},
			}
			for _, p := range pairs {
				want := f64s(t, p.want())
				got := f64s(t, p.got())
				assert.InDeltaSlice(t, want, got, 2e-5, p.name)
				restore := cpu.SetNumThreadsForTest(1)
				one := f64s(t, p.got())
				restore()
				assert.Equal(t, got, one, "%s: the same bits on one thread", p.name)
			}
		})
	}
}

// Views (a permuted and a strided input) read as their dense copies do.
func TestConvPackedReadsViews(t *testing.T) {
	base := cpRand(core.F32, 2, 9, 3, 11)
	perm := core.Call1("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, base) // 2x3x9x11
	w := cpRand(core.F32, 4, 3, 3, 3)
	a := core.Attrs{"padding": 1, "stride": 2}
	assert.Equal(t, f64s(t, cpCall(t, "conv2d", a, core.Call1("contiguous", nil, perm), w)), f64s(t, cpCall(t, "conv2d", a, perm, w)))
	wide := cpRand(core.F32, 1, 2, 8, 16)
	strided := core.Call1("transpose", core.Attrs{"dim0": 2, "dim1": 3}, wide) // 1x2x16x8
	w2 := cpRand(core.F32, 3, 2, 2, 3)
	assert.Equal(t, f64s(t, cpCall(t, "conv2d", nil, core.Call1("contiguous", nil, strided), w2)), f64s(t, cpCall(t, "conv2d", nil, strided, w2)))
	assert.Equal(t, f64s(t, cpCall(t, "_conv2d_weight_grad", core.Attrs{"kernel_size": []int{2, 3}}, strided, cpRand(core.F32, 1, 3, 15, 6))),
		f64s(t, cpCall(t, "_conv2d_weight_grad", core.Attrs{"kernel_size": []int{2, 3}}, core.Call1("contiguous", nil, strided), cpRand(core.F32, 1, 3, 15, 6))))
}

func TestConv1dPackedMatchesF64(t *testing.T) {
	x, w := cpRand(core.F64, 3, 4, 29), cpRand(core.F64, 6, 2, 5)
	a := core.Attrs{"padding": 2, "groups": 2, "dilation": 2}
	assert.InDeltaSlice(t, f64s(t, cpCall(t, "conv1d", a, x, w)), f64s(t, cpCall(t, "conv1d", a, x.Cast(core.F32), w.Cast(core.F32))), 2e-5)
}

// Float32 pooling gives the float64 kernels' values exactly: a max is one
// of its inputs, and an average sums in float64 either way.
func TestPoolF32MatchesF64(t *testing.T) {
	x := cpRand(core.F64, 2, 3, 9, 12)
	for _, a := range []core.Attrs{
		{"kernel_size": 2},
		{"kernel_size": 2, "ceil_mode": true},
		{"kernel_size": 3, "stride": 2, "padding": 1},
		{"kernel_size": []int{2, 3}, "dilation": []int{2, 1}},
	} {
		want := f64s(t, cpCall(t, "max_pool2d", a, x))
		got := f64s(t, cpCall(t, "max_pool2d", a, x.Cast(core.F32)))
		assert.Equal(t, f64s(t, cpCall(t, "max_pool2d", a, x.Cast(core.F32).Cast(core.F64))), got, "max %v", a)
		assert.InDeltaSlice(t, want, got, 1e-6, "max %v", a)
		if _, dil := a["dilation"]; dil {
			continue
		}
		wantAvg := f64s(t, cpCall(t, "avg_pool2d", a, x.Cast(core.F32).Cast(core.F64)))
		gotAvg := f64s(t, cpCall(t, "avg_pool2d", a, x.Cast(core.F32)))
		assert.InDeltaSlice(t, wantAvg, gotAvg, 1e-6, "avg %v", a)
	}
}
