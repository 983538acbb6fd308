package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// Sums and means with few, long groups take two launches (parts, then the
// parts summed); they must equal the CPU's. The cases cover a scalar
// result, the leading axes (a bias gradient), a middle axis, a group
// length that does not divide into parts, a transposed view, f16 input and
// an empty group beside full ones.
func TestSplitSumsMatchCPU(t *testing.T) {
	needGPU(t)
	cases := []struct {
		name  string
		shape core.Shape
		attrs core.Attrs
		view  func(*core.Tensor) *core.Tensor
		dtype core.DType
	}{
		{"scalar", core.Shape{8, 32, 64}, nil, nil, core.F32},
		{"leading axes", core.Shape{8, 128, 64}, core.Attrs{"axes": []int{0, 1}}, nil, core.F32},
		{"middle axis", core.Shape{3, 1000, 5}, core.Attrs{"axes": []int{1}}, nil, core.F32},
		{"odd length", core.Shape{7919}, nil, nil, core.F32},
		{"keepdim", core.Shape{4001, 3}, core.Attrs{"axes": []int{0}, "keepdim": true}, nil, core.F32},
		{"transposed view", core.Shape{600, 7}, core.Attrs{"axes": []int{1}},
			func(x *core.Tensor) *core.Tensor { return x.Transpose() }, core.F32},
		{"f16", core.Shape{3000}, nil, nil, core.F16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vals := randn(c.shape, 3)
			for _, op := range []string{"sum", "mean"} {
				run := func(dev core.Device) *core.Tensor {
					x := core.FromFloat64s(c.dtype, c.shape, vals, dev)
					if c.view != nil {
						x = c.view(x)
					}
					return core.Call1(op, c.attrs, x)
				}
				closeTo(t, run(gpu).To(core.CPU), run(core.CPU), 1e-4)
			}
		})
	}
	empty := core.Call1("mean", core.Attrs{"axes": []int{0}}, core.FromFloat64s(core.F32, core.Shape{0, 3}, nil, gpu))
	got, err := empty.Float64s()
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, v := range got {
		require.True(t, v != v, "mean of an empty group is NaN, got %v", v)
	}
}

// The weight and bias gradients of layer norm sum over every row; with
// many rows they take the split path.
func TestLayerNormWeightGradsOverManyRows(t *testing.T) {
	needGPU(t)
	shape := core.Shape{2000, 16}
	xv, wv, bv := randn(shape, 1), randn(core.Shape{16}, 2), randn(core.Shape{16}, 3)
	run := func(dev core.Device) []*core.Tensor {
		x := core.FromFloat64s(core.F32, shape, xv, dev).SetRequiresGrad(true)
		w := core.FromFloat64s(core.F32, core.Shape{16}, wv, dev).SetRequiresGrad(true)
		b := core.FromFloat64s(core.F32, core.Shape{16}, bv, dev).SetRequiresGrad(true)
		y := core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{16}, "eps": 1e-5}, x, w, b)
		loss := core.Call1("sum", nil, core.Call1("mul", nil, y, core.Call1("sin", nil, x)))
		require.NoError(t, loss.Backward())
		return []*core.Tensor{x.Grad(), w.Grad(), b.Grad()}
	}
	g, c := run(gpu), run(core.CPU)
	for i := range g {
		closeTo(t, g[i].To(core.CPU), c[i], 1e-3)
	}
}
