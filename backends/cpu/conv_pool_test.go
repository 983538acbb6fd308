package cpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Hand-computed cases, adjoint identities on inputs large enough to split
// into parallel column blocks, and error cases of the convolution, pooling
// and resampling ops. The reference vectors cover torch agreement.

func cpF32(shape core.Shape, vals ...float32) *core.Tensor { return core.FromSlice(vals, shape) }

func cpSeq(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i + 1)
	}
	return out
}

func cpCall(t *testing.T, op string, a core.Attrs, in ...*core.Tensor) *core.Tensor {
	t.Helper()
	out := core.Call1(op, a, in...)
	require.NoError(t, out.Err())
	return out
}

func cpSum(x *core.Tensor) *core.Tensor { return core.Call1("sum", nil, x) }

func TestConv2dHandComputed(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 3, 3}, cpSeq(9)...)
	w := cpF32(core.Shape{1, 1, 2, 2}, 1, 1, 1, 1)
	b := cpF32(core.Shape{1}, 0.5)
	y := cpCall(t, "conv2d", nil, x, w, b)
	assert.Equal(t, core.Shape{1, 1, 2, 2}, y.Shape())
	assert.Equal(t, []float64{12.5, 16.5, 24.5, 28.5}, f64s(t, y))

	// Windows start at -1 and 1: the padding contributes zeros.
	y = cpCall(t, "conv2d", core.Attrs{"stride": 2, "padding": 1}, x, w)
	assert.Equal(t, []float64{1, 5, 11, 28}, f64s(t, y))

	// Dilation 2 on a 2x2 kernel reaches the four corners.
	y = cpCall(t, "conv2d", core.Attrs{"dilation": []int{2}}, x, w)
	assert.Equal(t, []float64{1 + 3 + 7 + 9}, f64s(t, y))
}

func TestConv2dGroupsKeepChannelsApart(t *testing.T) {
	x := cpF32(core.Shape{2, 1, 1}, 3, 5) // unbatched (C, H, W)
	w := cpF32(core.Shape{2, 1, 1, 1}, 10, 100)
	y := cpCall(t, "conv2d", core.Attrs{"groups": 2}, x, w)
	assert.Equal(t, core.Shape{2, 1, 1}, y.Shape())
	assert.Equal(t, []float64{30, 500}, f64s(t, y))
}

func TestConv2dGradHandComputed(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 3, 3}, cpSeq(9)...).SetRequiresGrad(true)
	w := cpF32(core.Shape{1, 1, 2, 2}, 1, 1, 1, 1).SetRequiresGrad(true)
	b := cpF32(core.Shape{1}, 0).SetRequiresGrad(true)
	require.NoError(t, cpSum(cpCall(t, "conv2d", nil, x, w, b)).Backward())
	// Each input element gets one unit per window covering it; each weight
	// element the sum of the inputs it met; the bias one per output.
	assert.Equal(t, []float64{1, 2, 1, 2, 4, 2, 1, 2, 1}, f64s(t, x.Grad()))
	assert.Equal(t, []float64{12, 16, 24, 28}, f64s(t, w.Grad()))
	assert.Equal(t, []float64{4}, f64s(t, b.Grad()))
}

func TestConv1dHandComputed(t *testing.T) {
	w := cpF32(core.Shape{1, 1, 3}, 1, 0, -1)
	y := cpCall(t, "conv1d", nil, cpF32(core.Shape{1, 1, 5}, cpSeq(5)...), w)
	assert.Equal(t, core.Shape{1, 1, 3}, y.Shape())
	assert.Equal(t, []float64{-2, -2, -2}, f64s(t, y))

	// Unbatched, padded windows start at -1, 1 and 3.
	x := cpF32(core.Shape{1, 5}, cpSeq(5)...).SetRequiresGrad(true)
	y = cpCall(t, "conv1d", core.Attrs{"padding": 1, "stride": 2}, x, cpF32(core.Shape{1, 1, 3}, 1, 2, -1))
	assert.Equal(t, core.Shape{1, 3}, y.Shape())
	assert.Equal(t, []float64{0, 4, 14}, f64s(t, y))
	require.NoError(t, cpSum(y).Backward())
	assert.Equal(t, []float64{2, 0, 2, 0, 2}, f64s(t, x.Grad()))
}

func TestConvTranspose2dHandComputed(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 2, 2}, 1, 2, 3, 4)
	w := cpF32(core.Shape{1, 1, 2, 2}, 1, 1, 1, 1)
	y := cpCall(t, "conv_transpose2d", core.Attrs{"stride": 2}, x, w)
	assert.Equal(t, core.Shape{1, 1, 4, 4}, y.Shape())
	assert.Equal(t, []float64{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, f64s(t, y))

	// output_padding adds a last row and column no window reaches: bias only.
	y = cpCall(t, "conv_transpose2d", core.Attrs{"stride": 2, "output_padding": 1}, x, w, cpF32(core.Shape{1}, 0.5))
	assert.Equal(t, core.Shape{1, 1, 5, 5}, y.Shape())
	v := f64s(t, y)
	assert.Equal(t, []float64{1.5, 1.5, 2.5, 2.5, 0.5}, v[:5])
	assert.Equal(t, []float64{0.5, 0.5, 0.5, 0.5, 0.5}, v[20:])
}

// randTensor makes deterministic values in [-1, 1).
func cpRand(d core.DType, shape ...int) *core.Tensor {
	s := core.Shape(shape)
	vals := make([]float64, s.Numel())
	for i := range vals {
		vals[i] = 2*numerics.PhiloxUniform(uint64(len(vals)), 7, i) - 1
	}
	return core.FromFloat64s(d, s, vals)
}

func cpDot(t *testing.T, a, b *core.Tensor) float64 {
	t.Helper()
	v, err := core.Call1("sum", nil, core.Call1("mul", nil, a, b)).Item()
	require.NoError(t, err)
	return v
}

// TestConvAdjointIdentities checks <conv(x, w), y> = <x, convT(y, w)> =
// <w, weight_grad(x, y)> on shapes that split into several column blocks
// and run in parallel (over images, or within a single one), with and
// without the pointwise shortcut, in f32 and f64.
func TestConvAdjointIdentities(t *testing.T) {
	cases := []struct {
		name  string
		x, w  []int
		attrs core.Attrs
	}{
		{"blocks", []int{2, 3, 70, 66}, []int{4, 3, 3, 3}, core.Attrs{"padding": 1}},
		{"stride_dilation_groups", []int{3, 4, 41, 37}, []int{6, 2, 3, 2}, core.Attrs{"stride": []int{2, 3}, "dilation": []int{2, 1}, "padding": []int{2, 1}, "groups": 2}},
		{"pointwise", []int{2, 8, 40, 40}, []int{5, 8, 1, 1}, nil},
		{"single_image", []int{1, 6, 70, 70}, []int{4, 6, 3, 3}, core.Attrs{"stride": 2, "padding": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range []core.DType{core.F32, core.F64} {
				x, w := cpRand(d, c.x...), cpRand(d, c.w...)
				y := cpCall(t, "conv2d", c.attrs, x, w)
				gy := cpRand(d, y.Shape()...)
				g, err := oprules.Conv2dGeom(x.Shape(), w.Shape(), cpAttrs(c.attrs))
				require.NoError(t, err)
				ta := core.Attrs{"output_padding": g.TransposedOutputPadding()}
				wa := core.Attrs{"kernel_size": []int{c.w[2], c.w[3]}}
				for k, v := range c.attrs {
					ta[k], wa[k] = v, v
				}
				dx := cpCall(t, "conv_transpose2d", ta, gy, w)
				dw := cpCall(t, "_conv2d_weight_grad", wa, x, gy)
				require.Equal(t, x.Shape(), dx.Shape())
				require.Equal(t, w.Shape(), dw.Shape())
				want := cpDot(t, y.Cast(core.F64), gy.Cast(core.F64))
				tol := 1e-9 * math.Abs(want)
				if d == core.F32 {
					tol = 1e-4 * (1 + math.Abs(want))
				}
				assert.InDelta(t, want, cpDot(t, x.Cast(core.F64), dx.Cast(core.F64)), tol, "%s input adjoint", d)
				assert.InDelta(t, want, cpDot(t, w.Cast(core.F64), dw.Cast(core.F64)), tol, "%s weight adjoint", d)
			}
		})
	}
}

func cpAttrs(a core.Attrs) core.Attrs {
	out := core.Attrs{"stride": []int{1}, "padding": []int{0}, "dilation": []int{1}, "groups": 1}
	for k, v := range a {
		if i, ok := v.(int); ok && k != "groups" {
			v = []int{i}
		}
		out[k] = v
	}
	return out
}

func TestConvF32MatchesF64(t *testing.T) {
	a := core.Attrs{"stride": 2, "padding": 1, "groups": 2}
	x, w, b := cpRand(core.F64, 2, 4, 33, 35), cpRand(core.F64, 6, 2, 3, 3), cpRand(core.F64, 6)
	want := f64s(t, cpCall(t, "conv2d", a, x, w, b))
	got := f64s(t, cpCall(t, "conv2d", a, x.Cast(core.F32), w.Cast(core.F32), b.Cast(core.F32)))
	assert.InDeltaSlice(t, want, got, 1e-5)
	wantT := f64s(t, cpCall(t, "conv_transpose2d", a, x, cpRand(core.F64, 4, 3, 3, 3), b))
	gotT := f64s(t, cpCall(t, "conv_transpose2d", a, x.Cast(core.F32), cpRand(core.F32, 4, 3, 3, 3), b.Cast(core.F32)))
	assert.InDeltaSlice(t, wantT, gotT, 1e-5)
}

func TestConvTransposeGradWhenOutputPaddingReachesStride(t *testing.T) {
	// output_padding 1 with stride 1 is legal thanks to dilation 2; the
	// input gradient then comes from the internal op, not from conv2d.
	x := cpRand(core.F64, 1, 2, 4, 3).SetRequiresGrad(true)
	w := cpRand(core.F64, 2, 3, 2, 2)
	y := cpCall(t, "conv_transpose2d", core.Attrs{"dilation": 2, "output_padding": 1}, x, w)
	assert.Equal(t, core.Shape{1, 3, 7, 6}, y.Shape())
	gy := cpRand(core.F64, y.Shape()...)
	require.NoError(t, y.Backward(gy))
	assert.InDelta(t, cpDot(t, y, gy), cpDot(t, x.Detach(), x.Grad()), 1e-9)
}

func TestConvEmptyBatch(t *testing.T) {
	y := cpCall(t, "conv2d", core.Attrs{"padding": 1}, cpRand(core.F32, 0, 2, 4, 4), cpRand(core.F32, 3, 2, 3, 3), cpRand(core.F32, 3))
	assert.Equal(t, core.Shape{0, 3, 4, 4}, y.Shape())
	y = cpCall(t, "conv_transpose2d", nil, cpRand(core.F32, 0, 2, 4, 4), cpRand(core.F32, 2, 3, 3, 3))
	assert.Equal(t, core.Shape{0, 3, 6, 6}, y.Shape())
	y = cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 2}, cpRand(core.F32, 0, 2, 4, 4))
	assert.Equal(t, core.Shape{0, 2, 2, 2}, y.Shape())
}

func TestMaxPool2d(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 4, 4}, cpSeq(16)...)
	assert.Equal(t, []float64{6, 8, 14, 16}, f64s(t, cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 2}, x)))

	// ceil_mode keeps a last window that hangs over the end.
	y := cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 3, "stride": 2, "ceil_mode": true}, cpF32(core.Shape{1, 4, 4}, cpSeq(16)...))
	assert.Equal(t, core.Shape{1, 2, 2}, y.Shape())
	assert.Equal(t, []float64{11, 12, 15, 16}, f64s(t, y))

	nan := float32(math.NaN())
	y = cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 2}, cpF32(core.Shape{1, 1, 2, 4}, 1, nan, 3, 4, 5, 6, 7, float32(math.Inf(-1))))
	v := f64s(t, y)
	assert.True(t, math.IsNaN(v[0]), "NaN wins its window, got %v", v[0])
	assert.Equal(t, 7.0, v[1])

	ints := core.FromSlice([]int32{-5, -3, -9, -1}, core.Shape{1, 1, 2, 2})
	yi := cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 2}, ints)
	assert.Equal(t, core.I32, yi.DType())
	assert.Equal(t, []float64{-1}, f64s(t, yi))
}

func TestMaxPool2dGradGoesToFirstMaximum(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 2, 4}, 2, 2, 1, 9, 2, 0, 9, 3).SetRequiresGrad(true)
	require.NoError(t, cpSum(cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 2}, x)).Backward())
	assert.Equal(t, []float64{1, 0, 0, 1, 0, 0, 0, 0}, f64s(t, x.Grad()))

	// Overlapping windows add up at a shared maximum.
	x = cpF32(core.Shape{1, 1, 3, 3}, 0, 0, 0, 0, 5, 0, 0, 0, 0).SetRequiresGrad(true)
	require.NoError(t, cpSum(cpCall(t, "max_pool2d", core.Attrs{"kernel_size": 2, "stride": 1}, x)).Backward())
	assert.Equal(t, []float64{0, 0, 0, 0, 4, 0, 0, 0, 0}, f64s(t, x.Grad()))
}

func TestAvgPool2d(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 4, 4}, cpSeq(16)...)
	assert.Equal(t, []float64{3.5, 5.5, 11.5, 13.5}, f64s(t, cpCall(t, "avg_pool2d", core.Attrs{"kernel_size": 2}, x)))

	ones := cpF32(core.Shape{1, 1, 2, 2}, 1, 1, 1, 1)
	a := core.Attrs{"kernel_size": 2, "stride": 1, "padding": 1}
	assert.Equal(t, []float64{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25}, f64s(t, cpCall(t, "avg_pool2d", a, ones)))
	a["count_include_pad"] = false
	assert.Equal(t, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}, f64s(t, cpCall(t, "avg_pool2d", a, ones)))
	a["divisor_override"] = 2
	assert.Equal(t, []float64{0.5, 1, 0.5, 1, 2, 1, 0.5, 1, 0.5}, f64s(t, cpCall(t, "avg_pool2d", a, ones)))

	xg := cpF32(core.Shape{1, 1, 2, 2}, 1, 2, 3, 4).SetRequiresGrad(true)
	require.NoError(t, cpSum(cpCall(t, "avg_pool2d", core.Attrs{"kernel_size": 2, "stride": 1, "padding": 1}, xg)).Backward())
	assert.Equal(t, []float64{1, 1, 1, 1}, f64s(t, xg.Grad()), "four windows of divisor 4 cover every element")
}

func TestAdaptiveAvgPool2d(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 3, 3}, cpSeq(9)...).SetRequiresGrad(true)
	y := cpCall(t, "adaptive_avg_pool2d", core.Attrs{"output_size": 2}, x)
	assert.Equal(t, []float64{3, 4, 6, 7}, f64s(t, y), "windows [0,2) and [1,3) overlap")
	require.NoError(t, cpSum(y).Backward())
	assert.Equal(t, []float64{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25}, f64s(t, x.Grad()))

	up := cpCall(t, "adaptive_avg_pool2d", core.Attrs{"output_size": []int{2, 4}}, cpF32(core.Shape{1, 1, 2}, 1, 2))
	assert.Equal(t, []float64{1, 1, 2, 2, 1, 1, 2, 2}, f64s(t, up))
}

func TestInterpolate(t *testing.T) {
	x := cpF32(core.Shape{1, 1, 2, 2}, 1, 2, 3, 4).SetRequiresGrad(true)
	y := cpCall(t, "interpolate", core.Attrs{"size": 3}, x)
	assert.Equal(t, []float64{1, 1, 2, 1, 1, 2, 3, 3, 4}, f64s(t, y), "nearest source is floor(dst*2/3)")
	require.NoError(t, cpSum(y).Backward())
	assert.Equal(t, []float64{4, 2, 2, 1}, f64s(t, x.Grad()))

	row := cpF32(core.Shape{1, 1, 1, 2}, 0, 1)
	assert.Equal(t, []float64{0, 0.25, 0.75, 1}, f64s(t, cpCall(t, "interpolate", core.Attrs{"size": []int{1, 4}, "mode": "bilinear"}, row)))
	assert.Equal(t, []float64{0, 0.5, 1}, f64s(t, cpCall(t, "interpolate", core.Attrs{"size": []int{1, 3}, "mode": "bilinear", "align_corners": true}, row)))

	// An explicit scale_factor maps indices by 1/scale, not by in/out.
	y = cpCall(t, "interpolate", core.Attrs{"scale_factor": []float64{1, 2.6}}, cpF32(core.Shape{1, 1, 1, 3}, 1, 2, 3))
	assert.Equal(t, core.Shape{1, 1, 1, 7}, y.Shape())
	assert.Equal(t, []float64{1, 1, 1, 2, 2, 2, 3}, f64s(t, y))
}

func TestConvPoolErrors(t *testing.T) {
	x := cpRand(core.F32, 1, 3, 5, 5)
	w := cpRand(core.F32, 4, 3, 3, 3)
	cases := []struct {
		op    string
		attrs core.Attrs
		in    []*core.Tensor
		want  string
	}{
		{"conv2d", nil, []*core.Tensor{cpRand(core.F32, 3, 5), w}, "got shape [3 5]"},
		{"conv2d", nil, []*core.Tensor{x, cpRand(core.F32, 4, 3, 3)}, "weight must have 4 dims"},
		{"conv2d", nil, []*core.Tensor{x, cpRand(core.F32, 4, 2, 3, 3)}, "has 3 channels"},
		{"conv2d", core.Attrs{"groups": 3}, []*core.Tensor{x, cpRand(core.F32, 4, 1, 3, 3)}, "not divisible by groups 3"},
		{"conv2d", nil, []*core.Tensor{x, cpRand(core.F32, 4, 3, 6, 6)}, "smaller than the dilated kernel size [6 6]"},
		{"conv2d", core.Attrs{"dilation": 3}, []*core.Tensor{x, w}, "smaller than the dilated kernel size [7 7]"},
		{"conv2d", nil, []*core.Tensor{x, w.Cast(core.F64)}, "weight is f64"},
		{"conv2d", nil, []*core.Tensor{x.Cast(core.I32), w}, "dtype i32"},
		{"conv2d", nil, []*core.Tensor{x, w, cpRand(core.F32, 3)}, "bias must have shape [4]"},
		{"conv2d", core.Attrs{"stride": 0}, []*core.Tensor{x, w}, "stride must be at least 1"},
		{"conv2d", core.Attrs{"padding": -1}, []*core.Tensor{x, w}, "padding must be at least 0"},
		{"conv2d", core.Attrs{"stride": []int{1, 1, 1}}, []*core.Tensor{x, w}, "stride must have 1 or 2 values"},
		{"conv2d", core.Attrs{"groups": 0}, []*core.Tensor{x, w}, "groups must be positive"},
		{"conv1d", core.Attrs{"stride": []int{1, 2}}, []*core.Tensor{cpRand(core.F32, 1, 3, 5), cpRand(core.F32, 2, 3, 3)}, "stride must have 1 value"},
		{"conv_transpose2d", core.Attrs{"stride": 2, "output_padding": 2}, []*core.Tensor{x, cpRand(core.F32, 3, 2, 3, 3)}, "output_padding [2 2] must be smaller than stride [2 2] or dilation [1 1]"},
		{"conv_transpose2d", nil, []*core.Tensor{x, w}, "weight [4 3 3 3] has in_channels 4"},
		{"conv_transpose2d", core.Attrs{"padding": 4}, []*core.Tensor{x, cpRand(core.F32, 3, 2, 3, 3)}, "output size [-1 -1] is not positive"},
		{"max_pool2d", core.Attrs{"kernel_size": 2, "padding": 2}, []*core.Tensor{x}, "padding [2 2] must be at most half of kernel_size [2 2]"},
		{"max_pool2d", core.Attrs{"kernel_size": 6}, []*core.Tensor{x}, "too small for kernel_size [6 6]"},
		{"max_pool2d", nil, []*core.Tensor{x}, `missing required attribute "kernel_size"`},
		{"max_pool2d", core.Attrs{"kernel_size": 2}, []*core.Tensor{cpRand(core.F32, 5, 5)}, "got shape [5 5]"},
		{"max_pool2d", core.Attrs{"kernel_size": 2}, []*core.Tensor{cpRand(core.F32, 1, 0, 5, 5)}, "empty channel or spatial dim"},
		{"avg_pool2d", core.Attrs{"kernel_size": 2, "divisor_override": 0}, []*core.Tensor{x}, "divisor_override must be non-zero"},
		{"avg_pool2d", core.Attrs{"kernel_size": 2}, []*core.Tensor{x.Cast(core.I64)}, "dtype i64"},
		{"adaptive_avg_pool2d", core.Attrs{"output_size": 0}, []*core.Tensor{x}, "output_size must be positive"},
		{"adaptive_avg_pool2d", core.Attrs{"output_size": []int{1, 2, 3}}, []*core.Tensor{x}, "output_size must have 1 or 2 values"},
		{"interpolate", core.Attrs{"size": 3, "scale_factor": 2}, []*core.Tensor{x}, "not both"},
		{"interpolate", nil, []*core.Tensor{x}, "either size or scale_factor"},
		{"interpolate", core.Attrs{"size": 3, "align_corners": false}, []*core.Tensor{x}, "align_corners can only be set with mode bilinear"},
		{"interpolate", core.Attrs{"size": 3}, []*core.Tensor{cpRand(core.F32, 3, 5, 5)}, "must be 4-D"},
		{"interpolate", core.Attrs{"size": 3, "mode": "bicubic"}, []*core.Tensor{x}, `"bicubic"`},
		{"interpolate", core.Attrs{"scale_factor": 0.1}, []*core.Tensor{x}, "output [0 0]"},
		{"interpolate", core.Attrs{"scale_factor": math.NaN()}, []*core.Tensor{x}, "positive and finite"},
	}
	for _, c := range cases {
		t.Run(c.op+"/"+c.want, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = core.Call(c.op, c.in, c.attrs) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.op+":")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
