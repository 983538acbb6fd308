package webgpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Mesa's lavapipe stops every shader loop after 65,535 iterations per
// thread, counted over all its loops and over the threads of a SIMD group,
// without an error (backends/webgpu/gpu_looplimit.go). These tests run each op
// whose threads loop over an input-sized range just past that limit, with
// the smallest sizes that cross it, and require the CPU's answer, or, for
// the ops refused there, the error that names the limit. On a GPU without
// the limit they check the one-thread kernels on the same sizes.

// loopLimitMsg is what every refusal for the loop limit says.
const loopLimitMsg = "silently stops every shader loop after"

// positive is a tensor of values in [0.5, 4.5): a sum that stops short of
// its members is off by percents, where random signs could hide it.
func positive(shape core.Shape, seed uint64, d core.Device) *core.Tensor {
	v := randn(shape, seed)
	for i := range v {
		v[i] = math.Abs(v[i]) + 0.5
	}
	return core.FromFloat64s(core.F32, shape, v, d)
}

// pastLimit compares the outputs of f on the GPU with the CPU's. A
// refusable op may instead fail naming the loop limit.
func pastLimit(t *testing.T, f func(d core.Device) []*core.Tensor, tol float64, refusable bool) {
	t.Helper()
	want, got := f(core.CPU), f(gpu)
	for _, g := range got {
		if err := g.Err(); err != nil && refusable {
			require.ErrorContains(t, err, loopLimitMsg)
			return
		}
	}
	require.Len(t, got, len(want))
	for i := range want {
		closeTo(t, got[i].To(core.CPU), want[i], tol)
	}
}

// outputs runs op and returns its outputs, or one tensor carrying its error.
func outputs(op string, attrs core.Attrs, ins ...*core.Tensor) []*core.Tensor {
	outs, err := core.Call(op, ins, attrs)
	if err != nil {
		return []*core.Tensor{core.ErrTensor(err)}
	}
	return outs
}

// withGrads runs f on leaves that require gradients, backpropagates a
// fixed positive upstream gradient and returns f's value and the leaves'
// gradients (a failing backward as a tensor carrying its error).
func withGrads(f func(ts ...*core.Tensor) *core.Tensor, leaves ...*core.Tensor) []*core.Tensor {
	for _, l := range leaves {
		l.SetRequiresGrad(true)
	}
	y := f(leaves...)
	if y.Err() != nil {
		return []*core.Tensor{y}
	}
	if err := y.Backward(positive(y.Shape(), 99, y.Device())); err != nil {
		return []*core.Tensor{core.ErrTensor(err)}
	}
	outs := []*core.Tensor{y.Detach()}
	for _, l := range leaves {
		if l.Grad() != nil {
			outs = append(outs, l.Grad())
		}
	}
	return outs
}

func TestConvolutionsPastLoopLimit(t *testing.T) {
	backend := needGPU(t)
	cases := map[string]func(d core.Device) []*core.Tensor{
		// A 1x1 weight gradient over a 260x260 image: 67,860 iterations.
		"weight gradient over a large image": func(d core.Device) []*core.Tensor {
			return outputs("_conv2d_weight_grad", core.Attrs{"kernel_size": []int{1, 1}},
				positive(core.Shape{1, 1, 260, 260}, 1, d), positive(core.Shape{1, 1, 260, 260}, 2, d))
		},
		// Batch 3 of 149x149 gradients, strided and dilated: 67,053.
		"strided dilated weight gradient": func(d core.Device) []*core.Tensor {
			return outputs("_conv2d_weight_grad", core.Attrs{"kernel_size": []int{3, 3}, "stride": []int{2}, "padding": []int{1}, "dilation": []int{2}},
				positive(core.Shape{3, 2, 300, 300}, 1, d), positive(core.Shape{3, 3, 149, 149}, 2, d))
		},
		// A kernel of 70,000 taps, with bias and padding.
		"conv1d with a long kernel": func(d core.Device) []*core.Tensor {
			return outputs("conv1d", core.Attrs{"padding": []int{2}},
				positive(core.Shape{2, 1, 70000}, 1, d), positive(core.Shape{3, 1, 70000}, 2, d), positive(core.Shape{3}, 3, d))
		},
		// Four channels of 130x130 windows per group: 68,124.
		"grouped strided conv2d": func(d core.Device) []*core.Tensor {
			return outputs("conv2d", core.Attrs{"groups": 2, "stride": []int{2}, "padding": []int{1}},
				positive(core.Shape{1, 8, 130, 130}, 1, d), positive(core.Shape{2, 4, 130, 130}, 2, d), positive(core.Shape{2}, 3, d))
		},
		// 5,100 input channels of 3x3 windows: 66,300.
		"conv_transpose2d over many channels": func(d core.Device) []*core.Tensor {
			return outputs("conv_transpose2d", core.Attrs{"stride": []int{2}, "padding": []int{1}},
				positive(core.Shape{1, 5100, 2, 2}, 1, d), positive(core.Shape{5100, 2, 3, 3}, 2, d), positive(core.Shape{2}, 3, d))
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-4, false) })
	}
	// A fused epilogue is applied once the parts are added.
	t.Run("conv1d with a fused epilogue", func(t *testing.T) {
		x, w, b, extra := positive(core.Shape{2, 1, 70000}, 1, core.CPU), positive(core.Shape{3, 1, 70000}, 2, core.CPU),
			positive(core.Shape{3}, 3, core.CPU), positive(core.Shape{2, 3, 1}, 4, core.CPU)
		leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
		e := &fusion.Expr{Op: "relu", Args: []*fusion.Expr{{Op: "sub", Args: []*fusion.Expr{leaf(0), leaf(1)}}}}
		got, err := backend.FuseEpilogue("conv1d", []*core.Tensor{x.To(gpu), w.To(gpu), b.To(gpu)}, nil, e, []*core.Tensor{extra.To(gpu)})
		require.NoError(t, err)
		want := core.Call1("relu", nil, core.Call1("sub", nil, core.Call1("conv1d", nil, x, w, b), extra))
		closeTo(t, got.To(core.CPU), want, 1e-4)
	})
}

func TestPoolingPastLoopLimit(t *testing.T) {
	needGPU(t)
	right := map[string]func(d core.Device) []*core.Tensor{
		// Windows of 260x260: 67,860 iterations in one pass.
		"global avg_pool2d": func(d core.Device) []*core.Tensor {
			return outputs("avg_pool2d", core.Attrs{"kernel_size": []int{260}}, positive(core.Shape{1, 1, 260, 260}, 1, d))
		},
		"avg_pool2d padded without the padding counted": func(d core.Device) []*core.Tensor {
			return outputs("avg_pool2d", core.Attrs{"kernel_size": []int{270, 262}, "stride": []int{3, 5}, "padding": []int{100, 3},
				"count_include_pad": false, "ceil_mode": true}, positive(core.Shape{2, 1, 280, 270}, 1, d))
		},
		"avg_pool2d with a divisor": func(d core.Device) []*core.Tensor {
			return outputs("avg_pool2d", core.Attrs{"kernel_size": []int{270, 262}, "stride": []int{3, 5}, "padding": []int{100, 3},
				"divisor_override": 7}, positive(core.Shape{1, 280, 270}, 1, d))
		},
		"dilated max_pool2d": func(d core.Device) []*core.Tensor {
			return outputs("max_pool2d", core.Attrs{"kernel_size": []int{260, 261}, "stride": []int{100}, "padding": []int{100}, "dilation": []int{2}},
				positive(core.Shape{1, 2, 600, 600}, 1, d))
		},
		"global adaptive_avg_pool2d": func(d core.Device) []*core.Tensor {
			return outputs("adaptive_avg_pool2d", core.Attrs{"output_size": []int{1}}, positive(core.Shape{1, 1, 260, 260}, 1, d))
		},
		"adaptive_avg_pool2d to 2x3": func(d core.Device) []*core.Tensor {
			return outputs("adaptive_avg_pool2d", core.Attrs{"output_size": []int{2, 3}}, positive(core.Shape{1, 2, 600, 700}, 1, d))
		},
		// Every output reads the one input: 260x261 steps back.
		"interpolate's gradient from 1x1": func(d core.Device) []*core.Tensor {
			return outputs("_interpolate_backward", core.Attrs{"input_shape": []int{1, 1, 1, 1}, "size": []int{260, 260}},
				positive(core.Shape{1, 1, 260, 260}, 1, d))
		},
		// The middle column is reached from 251 outputs, the last row from
		// all 270: 68,000 steps (an earlier bound missed it).
		"bilinear interpolate's gradient": func(d core.Device) []*core.Tensor {
			return outputs("_interpolate_backward", core.Attrs{"input_shape": []int{1, 2, 2, 3}, "size": []int{270, 301}, "mode": "bilinear"},
				positive(core.Shape{1, 2, 270, 301}, 1, d))
		},
		"bilinear interpolate's gradient with corners aligned": func(d core.Device) []*core.Tensor {
			return outputs("_interpolate_backward", core.Attrs{"input_shape": []int{1, 2, 2, 3}, "size": []int{300, 301}, "mode": "bilinear", "align_corners": true},
				positive(core.Shape{1, 2, 300, 301}, 1, d))
		},
		"nearest interpolate's gradient by scale factors": func(d core.Device) []*core.Tensor {
			return outputs("_interpolate_backward", core.Attrs{"input_shape": []int{1, 2, 2, 3}, "scale_factor": []float64{150.5, 100.3}},
				positive(core.Shape{1, 2, 301, 300}, 1, d))
		},
		// Overlapping dilated windows, within the limit: the gradient walks
		// the covering windows in the CPU's order.
		"max_pool2d's gradient over overlapping windows": func(d core.Device) []*core.Tensor {
			return withGrads(func(ts ...*core.Tensor) *core.Tensor {
				return core.Call1("max_pool2d", core.Attrs{"kernel_size": []int{5}, "stride": []int{2}, "padding": []int{2}, "dilation": []int{2}}, ts[0])
			}, core.Call1("round", nil, positive(core.Shape{1, 2, 40, 41}, 1, d)))
		},
	}
	for name, f := range right {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-4, false) })
	}
	refusable := map[string]func(d core.Device) []*core.Tensor{
		// Each element scans its one 260x260 window for the maximum.
		"global max_pool2d's gradient": func(d core.Device) []*core.Tensor {
			return outputs("_max_pool2d_backward", core.Attrs{"kernel_size": []int{260}},
				positive(core.Shape{1, 1, 1, 1}, 1, d), positive(core.Shape{1, 1, 260, 260}, 2, d))
		},
		// 261x261 windows with stride 1 cover each element.
		"avg_pool2d's gradient with stride 1": func(d core.Device) []*core.Tensor {
			return outputs("_avg_pool2d_backward", core.Attrs{"kernel_size": []int{260}, "stride": []int{1}, "input_shape": []int{1, 1, 300, 300}},
				positive(core.Shape{1, 1, 41, 41}, 1, d))
		},
		"adaptive_avg_pool2d's gradient from 1x1 to 300x300": func(d core.Device) []*core.Tensor {
			return outputs("_adaptive_avg_pool2d_backward", core.Attrs{"input_shape": []int{1, 1, 1, 1}}, positive(core.Shape{1, 1, 300, 300}, 1, d))
		},
	}
	for name, f := range refusable {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-4, true) })
	}
}

// Sorting ranks each element against its whole row, and a Fourier bin is
// a direct sum over the signal: rows of 70,000 are refused on lavapipe
// (and are slow anyway at O(n) per element). An unsorted topk used to
// rank every member of a row in one thread (300 x 301 steps); it is right.
func TestSortsAndTransformsPastLoopLimit(t *testing.T) {
	needGPU(t)
	long := func(d core.Device) *core.Tensor { return positive(core.Shape{70000}, 1, d) }
	refusable := map[string]func(d core.Device) []*core.Tensor{
		"sort":    func(d core.Device) []*core.Tensor { return outputs("sort", nil, long(d)) },
		"argsort": func(d core.Device) []*core.Tensor { return outputs("argsort", nil, long(d)) },
		"topk":    func(d core.Device) []*core.Tensor { return outputs("topk", core.Attrs{"k": 3}, long(d)) },
		"unique":  func(d core.Device) []*core.Tensor { return outputs("unique", nil, core.Call1("round", nil, long(d))) },
		"rfft":    func(d core.Device) []*core.Tensor { return outputs("rfft", nil, long(d)) },
	}
	for name, f := range refusable {
		t.Run(name, func(t *testing.T) { pastLimit(t, f, 1e-3, true) })
	}
	t.Run("unsorted topk", func(t *testing.T) {
		pastLimit(t, func(d core.Device) []*core.Tensor {
			return outputs("topk", core.Attrs{"k": 7, "sorted": false}, positive(core.Shape{4, 300}, 2, d))
		}, 0, false)
	})
}

// Fused attention gives each thread every 64th query row: 4,096 queries
// over 64 keys of 32 dims loop about 280,000 times, and came out wrong;
// such a call takes the composed kernels. Their softmax walks a row of keys
// four times: 17,000 keys take the reductions instead, masked or causal,
// a row with every key masked still giving zeros.
func TestAttentionPastLoopLimit(t *testing.T) {
	needGPU(t)
	t.Run("many queries", func(t *testing.T) {
		pastLimit(t, func(d core.Device) []*core.Tensor {
			q, k, v := positive(core.Shape{1, 4096, 32}, 1, d), positive(core.Shape{1, 64, 32}, 2, d), positive(core.Shape{1, 64, 32}, 3, d)
			return outputs("scaled_dot_product_attention", nil, q, k, v, nil)
		}, 1e-4, false)
	})
	const keys = 17000
	mask := make([]float64, 3*keys)
	for i := range mask {
		if i < keys || i%3 == 0 {
			mask[i] = 1
		}
	}
	mask[0] = 0 // query 0 sees no key
	for name, attrs := range map[string]core.Attrs{"long keys, causal": {"is_causal": true}, "long keys, masked": nil} {
		t.Run(name, func(t *testing.T) {
			pastLimit(t, func(d core.Device) []*core.Tensor {
				var m *core.Tensor
				if attrs == nil {
					m = core.Call1("cast", core.Attrs{"dtype": "bool"}, core.FromFloat64s(core.F32, core.Shape{3, keys}, mask, d))
				}
				return withGrads(func(ts ...*core.Tensor) *core.Tensor {
					return core.Call1("scaled_dot_product_attention", attrs, ts[0], ts[1], ts[2], m)
				}, positive(core.Shape{2, 3, 8}, 1, d), core.Call1("mul", nil, positive(core.Shape{2, keys, 8}, 2, d), core.FromFloat64s(core.F32, core.Shape{1}, []float64{0.1}, d)),
					positive(core.Shape{2, keys, 8}, 3, d))
			}, 1e-4, false)
		})
	}
}

// A replicate pad of 300 on both sides of a 2x3 input sends 301 x 301
// padded positions to each corner's gradient: refused on lavapipe.
func TestPadGradientPastLoopLimit(t *testing.T) {
	needGPU(t)
	pastLimit(t, func(d core.Device) []*core.Tensor {
		return withGrads(func(ts ...*core.Tensor) *core.Tensor {
			return core.Call1("pad", core.Attrs{"pads": []int{300, 300, 300, 300}, "mode": "replicate"}, ts[0])
		}, positive(core.Shape{2, 3}, 1, d))
	}, 1e-4, true)
}
