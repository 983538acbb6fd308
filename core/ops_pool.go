package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// Pooling and resampling over NCHW input with PyTorch semantics. Their
// backward rules are internal ops with their own kernels: a pooling gradient
// is a scatter that no combination of public ops expresses cheaply. The
// geometry (PoolGeom, InterpGeom) is core/oprules'.

// maxPoolDTypes are the dtypes PyTorch's CPU max_pool2d accepts.
var maxPoolDTypes = []DType{F32, F16, BF16, F64, I64, I32, I16, I8, U8}

func maxPoolAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "kernel_size", Kind: AttrInts, Required: true, Doc: "window size: one value or (kH, kW)"},
		{Name: "stride", Kind: AttrInts, Doc: "step between windows; absent means kernel_size"},
		{Name: "padding", Kind: AttrInts, Default: []int{0}, Doc: "implicit -inf padding on both sides, at most half the kernel"},
		{Name: "dilation", Kind: AttrInts, Default: []int{1}, Doc: "spacing between window elements"},
		{Name: "ceil_mode", Kind: AttrBool, Default: false, Doc: "round the output size up instead of down"},
	}
}

func avgPoolAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "kernel_size", Kind: AttrInts, Required: true, Doc: "window size: one value or (kH, kW)"},
		{Name: "stride", Kind: AttrInts, Doc: "step between windows; absent means kernel_size"},
		{Name: "padding", Kind: AttrInts, Default: []int{0}, Doc: "implicit zero padding on both sides, at most half the kernel"},
		{Name: "ceil_mode", Kind: AttrBool, Default: false, Doc: "round the output size up instead of down"},
		{Name: "count_include_pad", Kind: AttrBool, Default: true, Doc: "count padding zeros in the divisor"},
		{Name: "divisor_override", Kind: AttrInt, Doc: "divide every window by this instead; absent means the window size"},
	}
}

func interpAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "size", Kind: AttrInts, Doc: "output size: one value or (H, W); give size or scale_factor"},
		{Name: "scale_factor", Kind: AttrFloats, Doc: "multiplier of the spatial size: one value or (sH, sW)"},
		{Name: "mode", Kind: AttrString, Default: "nearest", Enum: []string{"nearest", "bilinear"}, Doc: "resampling algorithm"},
		{Name: "align_corners", Kind: AttrBool, Doc: "bilinear only: map corner pixel centres onto each other"},
	}
}

// inputShapeAttr names the forward input's shape for the backward ops whose
// result shape the gradient alone does not fix.
var inputShapeAttr = AttrSpec{Name: "input_shape", Kind: AttrInts, Required: true, Doc: "shape of the forward input"}

// sameGrad checks that a backward op's incoming gradient has the forward
// result's shape and returns the forward input's meta as the result.
func sameGrad(grad Meta, out, in Shape) ([]Meta, error) {
	if !grad.Shape.Equal(out) {
		return nil, fmt.Errorf("grad has shape %v, the forward result has %v", grad.Shape, out)
	}
	return []Meta{{Shape: in, DType: grad.DType}}, nil
}

func withInputShape(specs []AttrSpec) []AttrSpec { return append(specs, inputShapeAttr) }

func gradWithShape(c *GradCtx, op string) *Tensor {
	a := c.Attrs.Clone()
	a["input_shape"] = []int(c.Inputs[0].shape)
	return call1(op, a, c.Grad(0))
}

func init() {
	grad := []InputSpec{{Name: "grad", DTypes: floatsOnly}}
	MustRegister(
		&OpDef{
			Name: "max_pool2d", Category: "pool", Doc: "2-D max pooling over NCHW input; NaN wins, as torch.nn.functional.max_pool2d.",
			Inputs: []InputSpec{{Name: "input", DTypes: maxPoolDTypes}}, Attrs: maxPoolAttrs(),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				g, err := oprules.Pool2dGeom(in[0].Shape, a, true)
				return []Meta{{Shape: g.OutShape(), DType: in[0].DType}}, err
			},
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				return []*Tensor{call1("_max_pool2d_backward", c.Attrs, c.Grad(0), c.Inputs[0])}, nil
			},
			Samples: maxPoolSamples(),
		},
		&OpDef{
			Name: "avg_pool2d", Category: "pool", Doc: "2-D average pooling over NCHW input, as torch.nn.functional.avg_pool2d.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}}, Attrs: avgPoolAttrs(),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				g, err := oprules.Pool2dGeom(in[0].Shape, a, false)
				return []Meta{{Shape: g.OutShape(), DType: in[0].DType}}, err
			},
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				return []*Tensor{gradWithShape(c, "_avg_pool2d_backward")}, nil
			},
			Samples: avgPoolSamples(),
		},
		&OpDef{
			Name: "adaptive_avg_pool2d", Category: "pool", Doc: "2-D average pooling to a fixed output size, as torch.nn.functional.adaptive_avg_pool2d.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}},
			Attrs:  []AttrSpec{{Name: "output_size", Kind: AttrInts, Required: true, Doc: "output size: one value or (H, W)"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				g, err := oprules.AdaptivePool2dGeom(in[0].Shape, a.Ints("output_size"))
				return []Meta{{Shape: g.OutShape(), DType: in[0].DType}}, err
			},
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				return []*Tensor{call1("_adaptive_avg_pool2d_backward", Attrs{"input_shape": []int(c.Inputs[0].shape)}, c.Grad(0))}, nil
			},
			Samples: adaptivePoolSamples(),
		},
		&OpDef{
			Name: "interpolate", Category: "pool", Doc: "Resize NCHW input by nearest or bilinear sampling, as torch.nn.functional.interpolate.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}}, Attrs: interpAttrs(),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				g, err := oprules.InterpolateGeom(in[0].Shape, a)
				return []Meta{{Shape: g.OutShape(), DType: in[0].DType}}, err
			},
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				return []*Tensor{gradWithShape(c, "_interpolate_backward")}, nil
			},
			Samples: interpSamples(),
		},
		&OpDef{
			Name: "_max_pool2d_backward", Category: "pool", Internal: true,
			Doc:    "Gradient of max_pool2d: each window's gradient goes to its first maximum.",
			Inputs: []InputSpec{grad[0], {Name: "input", DTypes: floatsOnly, NoGrad: true}}, Attrs: maxPoolAttrs(),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if in[0].DType != in[1].DType {
					return nil, fmt.Errorf("grad is %s but input is %s", in[0].DType, in[1].DType)
				}
				g, err := oprules.Pool2dGeom(in[1].Shape, a, true)
				if err != nil {
					return nil, err
				}
				return sameGrad(in[0], g.OutShape(), g.InShape())
			},
			Samples: maxPoolBackwardSamples(),
		},
		&OpDef{
			Name: "_avg_pool2d_backward", Category: "pool", Internal: true, Doc: "Gradient of avg_pool2d.",
			Inputs: grad, Attrs: withInputShape(avgPoolAttrs()),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				g, err := oprules.Pool2dGeom(a.Ints("input_shape"), a, false)
				if err != nil {
					return nil, err
				}
				return sameGrad(in[0], g.OutShape(), g.InShape())
			},
			Samples: avgPoolBackwardSamples(),
		},
		&OpDef{
			Name: "_adaptive_avg_pool2d_backward", Category: "pool", Internal: true, Doc: "Gradient of adaptive_avg_pool2d.",
			Inputs: grad, Attrs: []AttrSpec{inputShapeAttr},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				s := in[0].Shape
				if len(s) < 3 {
					return nil, fmt.Errorf("grad must be (N, C, H, W) or (C, H, W), got shape %v", s)
				}
				g, err := oprules.AdaptivePool2dGeom(a.Ints("input_shape"), []int(s[len(s)-2:]))
				if err != nil {
					return nil, err
				}
				return sameGrad(in[0], g.OutShape(), g.InShape())
			},
			Samples: adaptivePoolBackwardSamples(),
		},
		&OpDef{
			Name: "_interpolate_backward", Category: "pool", Internal: true, Doc: "Gradient of interpolate.",
			Inputs: grad, Attrs: withInputShape(interpAttrs()),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				g, err := oprules.InterpolateGeom(a.Ints("input_shape"), a)
				if err != nil {
					return nil, err
				}
				return sameGrad(in[0], g.OutShape(), g.InShape())
			},
			Samples: interpBackwardSamples(),
		},
	)
}

func maxPoolSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 1, 2, 4, 4)}, Attrs: Attrs{"kernel_size": []int{2}}},
		{Name: "stride_padding", Inputs: []Gen{G(F32, 2, 2, 5, 5)}, Attrs: Attrs{"kernel_size": []int{3}, "stride": []int{1}, "padding": []int{1}}},
		{Name: "dilation_asymmetric", Inputs: []Gen{G(F32, 1, 2, 7, 6)},
			Attrs: Attrs{"kernel_size": []int{2, 3}, "stride": []int{2, 1}, "padding": []int{1}, "dilation": []int{2, 1}}},
		{Name: "ceil_mode_unbatched", Inputs: []Gen{G(F32, 2, 5, 5)}, Attrs: Attrs{"kernel_size": []int{2}, "ceil_mode": true}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 2, 4, 5).AsStrided()}, Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{1}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 1, 6, 6)}, Attrs: Attrs{"kernel_size": []int{3}, "stride": []int{2}, "padding": []int{1}}},
		{Name: "special", Inputs: []Gen{G(F32, 1, 2, 4, 4).WithKind("special")}, Attrs: Attrs{"kernel_size": []int{2}}, NoGrad: true},
		{Name: "i32", Inputs: []Gen{GI(I32, -50, 50, 1, 2, 4, 4)}, Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{1}}},
	}
}

func avgPoolSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 1, 2, 4, 4)}, Attrs: Attrs{"kernel_size": []int{2}}},
		{Name: "padding_exclude", Inputs: []Gen{G(F32, 2, 2, 5, 5)},
			Attrs: Attrs{"kernel_size": []int{3}, "stride": []int{2}, "padding": []int{1}, "count_include_pad": false}},
		{Name: "ceil_mode", Inputs: []Gen{G(F32, 1, 2, 5, 5)},
			Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{2}, "padding": []int{1}, "ceil_mode": true}},
		{Name: "ceil_exclude_asymmetric", Inputs: []Gen{G(F32, 1, 1, 6, 7)},
			Attrs: Attrs{"kernel_size": []int{3, 2}, "stride": []int{2, 3}, "padding": []int{1}, "ceil_mode": true, "count_include_pad": false}},
		{Name: "divisor_override_unbatched", Inputs: []Gen{G(F32, 2, 4, 4)},
			Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{1}, "divisor_override": 3}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 2, 4, 4).AsStrided()}, Attrs: Attrs{"kernel_size": []int{2}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 1, 5, 5)}, Attrs: Attrs{"kernel_size": []int{3}, "stride": []int{1}, "padding": []int{1}}},
		{Name: "f16", Inputs: []Gen{G(F16, 1, 2, 4, 4)}, Attrs: Attrs{"kernel_size": []int{2}}},
	}
}

func adaptivePoolSamples() []Sample {
	return []Sample{
		{Name: "down", Inputs: []Gen{G(F32, 1, 2, 5, 7)}, Attrs: Attrs{"output_size": []int{3, 4}}},
		{Name: "up", Inputs: []Gen{G(F32, 1, 2, 2, 3)}, Attrs: Attrs{"output_size": []int{4, 5}}},
		{Name: "square_unbatched", Inputs: []Gen{G(F32, 3, 6, 6)}, Attrs: Attrs{"output_size": []int{4}}},
		{Name: "global", Inputs: []Gen{G(F32, 2, 3, 4, 4)}, Attrs: Attrs{"output_size": []int{1, 1}}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 2, 5, 5).AsStrided()}, Attrs: Attrs{"output_size": []int{2, 3}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 1, 7, 5)}, Attrs: Attrs{"output_size": []int{3, 2}}},
		{Name: "bf16", Inputs: []Gen{G(BF16, 1, 2, 4, 4)}, Attrs: Attrs{"output_size": []int{3}}},
	}
}

func interpSamples() []Sample {
	return []Sample{
		{Name: "nearest_size", Inputs: []Gen{G(F32, 1, 2, 3, 4)}, Attrs: Attrs{"size": []int{5, 7}}},
		{Name: "nearest_double", Inputs: []Gen{G(F32, 1, 2, 3, 3)}, Attrs: Attrs{"scale_factor": []float64{2}}},
		{Name: "nearest_fractional_down", Inputs: []Gen{G(F32, 1, 1, 7, 9)}, Attrs: Attrs{"scale_factor": []float64{0.5, 0.7}}},
		{Name: "bilinear_size", Inputs: []Gen{G(F32, 1, 2, 3, 4)}, Attrs: Attrs{"size": []int{5, 6}, "mode": "bilinear"}},
		{Name: "bilinear_align_corners", Inputs: []Gen{G(F32, 2, 1, 4, 3)},
			Attrs: Attrs{"size": []int{3, 7}, "mode": "bilinear", "align_corners": true}},
		{Name: "bilinear_scale", Inputs: []Gen{G(F32, 1, 2, 3, 4)}, Attrs: Attrs{"scale_factor": []float64{1.5, 2.5}, "mode": "bilinear"}},
		{Name: "f64_strided", Inputs: []Gen{G(F64, 1, 2, 4, 4).AsStrided()}, Attrs: Attrs{"size": []int{6, 3}, "mode": "bilinear"}},
		{Name: "f16", Inputs: []Gen{G(F16, 1, 2, 3, 3)}, Attrs: Attrs{"size": []int{4, 5}}},
	}
}

func maxPoolBackwardSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 1, 2, 2, 2), G(F32, 1, 2, 4, 4)}, Attrs: Attrs{"kernel_size": []int{2}}},
		{Name: "overlapping", Inputs: []Gen{G(F32, 2, 2, 5, 5), G(F32, 2, 2, 5, 5)},
			Attrs: Attrs{"kernel_size": []int{3}, "stride": []int{1}, "padding": []int{1}}},
		{Name: "dilation_f64", Inputs: []Gen{G(F64, 1, 1, 4, 4), G(F64, 1, 1, 6, 6)},
			Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{1}, "dilation": []int{2}}},
		{Name: "ceil_mode_unbatched", Inputs: []Gen{G(F32, 2, 3, 3), G(F32, 2, 5, 5)}, Attrs: Attrs{"kernel_size": []int{2}, "ceil_mode": true}},
	}
}

func avgPoolBackwardSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 1, 2, 2, 2)}, Attrs: Attrs{"kernel_size": []int{2}, "input_shape": []int{1, 2, 4, 4}}},
		{Name: "padding_exclude_ceil", Inputs: []Gen{G(F32, 1, 1, 3, 3)},
			Attrs: Attrs{"kernel_size": []int{3}, "stride": []int{2}, "padding": []int{1}, "ceil_mode": true,
				"count_include_pad": false, "input_shape": []int{1, 1, 5, 5}}},
		{Name: "divisor_override_unbatched_f64", Inputs: []Gen{G(F64, 2, 3, 3)},
			Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{1}, "divisor_override": 3, "input_shape": []int{2, 4, 4}}},
	}
}

func adaptivePoolBackwardSamples() []Sample {
	return []Sample{
		{Name: "down", Inputs: []Gen{G(F32, 1, 2, 3, 4)}, Attrs: Attrs{"input_shape": []int{1, 2, 5, 7}}},
		{Name: "up", Inputs: []Gen{G(F32, 1, 1, 4, 5)}, Attrs: Attrs{"input_shape": []int{1, 1, 2, 3}}},
		{Name: "unbatched_f64", Inputs: []Gen{G(F64, 3, 2, 2)}, Attrs: Attrs{"input_shape": []int{3, 5, 5}}},
	}
}

func interpBackwardSamples() []Sample {
	return []Sample{
		{Name: "nearest_size", Inputs: []Gen{G(F32, 1, 2, 5, 7)}, Attrs: Attrs{"size": []int{5, 7}, "input_shape": []int{1, 2, 3, 4}}},
		{Name: "nearest_fractional_down", Inputs: []Gen{G(F32, 1, 1, 3, 6)},
			Attrs: Attrs{"scale_factor": []float64{0.5, 0.7}, "input_shape": []int{1, 1, 7, 9}}},
		{Name: "bilinear_align_corners", Inputs: []Gen{G(F32, 2, 1, 3, 7)},
			Attrs: Attrs{"size": []int{3, 7}, "mode": "bilinear", "align_corners": true, "input_shape": []int{2, 1, 4, 3}}},
		{Name: "bilinear_scale_f64", Inputs: []Gen{G(F64, 1, 2, 4, 10)},
			Attrs: Attrs{"scale_factor": []float64{1.5, 2.5}, "mode": "bilinear", "input_shape": []int{1, 2, 3, 4}}},
	}
}
