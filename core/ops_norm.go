package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// Normalisation layers. Their backward rules are internal ops with CPU
// kernels: the closed-form gradients recompute the statistics from x, which
// is cheaper and more accurate than differentiating a chain of mean, var and
// rsqrt ops.

// normCheckTrailing checks that normalized_shape is the tail of x's shape.
func normCheckTrailing(x Shape, ns []int) error {
	if len(ns) == 0 {
		return fmt.Errorf("normalized_shape must have at least one dim, got %v", ns)
	}
	if len(ns) > len(x) || !x[len(x)-len(ns):].Equal(Shape(ns)) {
		return fmt.Errorf("normalized_shape %v is not the trailing dims of input shape %v", ns, x)
	}
	return nil
}

// normCheckParam checks an optional per-feature input (weight, bias,
// running statistics): absent, or of shape want and x's dtype.
func normCheckParam(name string, m Meta, want Shape, d DType) error {
	if m.DType == Invalid {
		return nil
	}
	if !m.Shape.Equal(want) {
		return fmt.Errorf("%s has shape %v, want %v", name, m.Shape, want)
	}
	if m.DType != d {
		return fmt.Errorf("%s has dtype %s, input has %s", name, m.DType, d)
	}
	return nil
}

// normCheckGrad checks that a gradient input matches x.
func normCheckGrad(x, g Meta) error {
	if !g.Shape.Equal(x.Shape) || g.DType != x.DType {
		return fmt.Errorf("gradient %v %s does not match input %v %s", g.Shape, g.DType, x.Shape, x.DType)
	}
	return nil
}

func inferLayerNorm(in []Meta, a Attrs) ([]Meta, error) {
	ns := a.Ints("normalized_shape")
	if err := normCheckTrailing(in[0].Shape, ns); err != nil {
		return nil, err
	}
	for i, name := range []string{"weight", "bias"} {
		if i+1 < len(in) {
			if err := normCheckParam(name, in[i+1], Shape(ns), in[0].DType); err != nil {
				return nil, err
			}
		}
	}
	return InferSame(in[:1], a)
}

// inferNormBackward gives dx and one gradient of shape param per param.
func inferNormBackward(params int, paramShape func(Shape, Attrs) Shape, check func([]Meta, Attrs) ([]Meta, error)) func([]Meta, Attrs) ([]Meta, error) {
	return func(in []Meta, a Attrs) ([]Meta, error) {
		if err := normCheckGrad(in[0], in[1]); err != nil {
			return nil, err
		}
		fwd := append([]Meta{in[0]}, in[2:]...)
		if _, err := check(fwd, a); err != nil {
			return nil, err
		}
		out := []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}
		for range params {
			out = append(out, Meta{Shape: paramShape(in[0].Shape, a), DType: in[0].DType})
		}
		return out, nil
	}
}

func normTrailingShape(_ Shape, a Attrs) Shape { return Shape(a.Ints("normalized_shape")).Clone() }

func normChannelShape(x Shape, _ Attrs) Shape { return Shape{x[1]} }

func inferGroupNorm(in []Meta, a Attrs) ([]Meta, error) {
	x := in[0].Shape
	if len(x) < 2 {
		return nil, fmt.Errorf("input must have shape [N, C, ...], got %v", x)
	}
	g := a.Int("num_groups")
	if g <= 0 || x[1]%g != 0 {
		return nil, fmt.Errorf("num_groups %d must be positive and divide the %d channels of input %v", g, x[1], x)
	}
	for i, name := range []string{"weight", "bias"} {
		if i+1 < len(in) {
			if err := normCheckParam(name, in[i+1], Shape{x[1]}, in[0].DType); err != nil {
				return nil, err
			}
		}
	}
	return InferSame(in[:1], a)
}

// inferBatchNorm checks x [N, C, ...] and the optional running_mean,
// running_var, weight, bias (in that order from in[1]).
func inferBatchNorm(in []Meta, a Attrs) ([]Meta, error) {
	x := in[0]
	if len(x.Shape) < 2 {
		return nil, fmt.Errorf("input must have shape [N, C, ...], got %v", x.Shape)
	}
	c := Shape{x.Shape[1]}
	for i, name := range []string{"running_mean", "running_var", "weight", "bias"} {
		if err := normCheckParam(name, in[i+1], c, x.DType); err != nil {
			return nil, err
		}
	}
	if (in[1].DType == Invalid) != (in[2].DType == Invalid) {
		return nil, fmt.Errorf("give both running_mean and running_var or neither")
	}
	training := a.Bool("training")
	if !training && in[1].DType == Invalid {
		return nil, fmt.Errorf("running_mean and running_var are required when training is false")
	}
	if n := oprules.BatchNormCount(x.Shape); training && n <= 1 {
		return nil, fmt.Errorf("training needs more than 1 value per channel, input %v has %d", x.Shape, n)
	}
	return []Meta{{Shape: x.Shape.Clone(), DType: x.DType}, {Shape: c, DType: x.DType}, {Shape: c.Clone(), DType: x.DType}}, nil
}

// inferBatchNormBackward: x, g, running_mean?, running_var?, weight?,
// g_mean?, g_var? give dx, dweight, dbias.
func inferBatchNormBackward(in []Meta, a Attrs) ([]Meta, error) {
	if err := normCheckGrad(in[0], in[1]); err != nil {
		return nil, err
	}
	if _, err := inferBatchNorm([]Meta{in[0], in[2], in[3], in[4], {}}, a); err != nil {
		return nil, err
	}
	c := Shape{in[0].Shape[1]}
	for i, name := range []string{"gradient of running_mean", "gradient of running_var"} {
		if err := normCheckParam(name, in[5+i], c, in[0].DType); err != nil {
			return nil, err
		}
	}
	d := in[0].DType
	return []Meta{{Shape: in[0].Shape.Clone(), DType: d}, {Shape: c, DType: d}, {Shape: c.Clone(), DType: d}}, nil
}

func normEpsAttr(def float64) AttrSpec {
	return AttrSpec{Name: "eps", Kind: AttrFloat, Default: def, Doc: "added to the variance for numerical stability"}
}

func normalizedShapeAttr() AttrSpec {
	return AttrSpec{Name: "normalized_shape", Kind: AttrInts, Required: true, Doc: "trailing dims to normalise over"}
}

// nnAbsent leaves an optional sample input out.
var nnAbsent = Gen{Absent: true}

// nnPositive is a sample input in [0.5, 2): variances, scales.
func nnPositive(d DType, shape ...int) Gen { return GU(d, 0.5, 2, shape...) }

// nnAffine is a weight and a bias of c features.
func nnAffine(d DType, c int) []Gen { return []Gen{G(d, c), G(d, c)} }

func init() {
	MustRegister(
		&OpDef{
			Name: "layer_norm", Category: "norm", Doc: "Normalise over the trailing normalized_shape dims to zero mean and unit variance, then scale and shift.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly, Optional: true}, {Name: "bias", DTypes: floatsOnly, Optional: true}},
			Attrs:  []AttrSpec{normalizedShapeAttr(), normEpsAttr(1e-5)},
			Infer:  inferLayerNorm,
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				return Call("_layer_norm_backward", []*Tensor{c.Inputs[0], c.Grads[0], c.Inputs[1]}, c.Attrs)
			},
			Samples: []Sample{
				{Name: "affine", Inputs: append([]Gen{G(F32, 3, 4)}, nnAffine(F32, 4)...), Attrs: Attrs{"normalized_shape": []int{4}}},
				{Name: "two_dims", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"normalized_shape": []int{3, 4}}},
				{Name: "weight_only", Inputs: []Gen{G(F32, 4, 5), G(F32, 5)}, Attrs: Attrs{"normalized_shape": []int{5}}},
				{Name: "bias_only_strided", Inputs: []Gen{G(F32, 5, 3).AsStrided(), nnAbsent, G(F32, 3)}, Attrs: Attrs{"normalized_shape": []int{3}, "eps": 1e-3}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 6), G(F64, 6), G(F64, 6)}, Attrs: Attrs{"normalized_shape": []int{6}}},
				{Name: "f16", Inputs: []Gen{G(F16, 3, 8), G(F16, 8), G(F16, 8)}, Attrs: Attrs{"normalized_shape": []int{8}}},
				{Name: "bf16_size1", Inputs: []Gen{G(BF16, 4, 1), G(BF16, 1), G(BF16, 1)}, Attrs: Attrs{"normalized_shape": []int{1}}},
				{Name: "empty", Inputs: append([]Gen{G(F32, 0, 4)}, nnAffine(F32, 4)...), Attrs: Attrs{"normalized_shape": []int{4}}},
			},
		},
		&OpDef{
			Name: "_layer_norm_backward", Category: "norm", Internal: true, Doc: "Gradients of layer_norm: dx, dweight, dbias from x, upstream g and weight.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly, Optional: true}},
			Attrs:  []AttrSpec{normalizedShapeAttr(), normEpsAttr(1e-5)},
			Infer:  inferNormBackward(2, normTrailingShape, inferLayerNorm),
			Samples: []Sample{
				{Name: "affine", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4), G(F32, 4)}, Attrs: Attrs{"normalized_shape": []int{4}}},
				{Name: "two_dims_f64", Inputs: []Gen{G(F64, 2, 3, 2), G(F64, 2, 3, 2)}, Attrs: Attrs{"normalized_shape": []int{3, 2}}},
			},
		},
		&OpDef{
			Name: "rms_norm", Category: "norm", Doc: "Divide by the root mean square over the trailing normalized_shape dims, then scale.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly, Optional: true}},
			Attrs: []AttrSpec{normalizedShapeAttr(),
				{Name: "eps", Kind: AttrFloat, Doc: "added to the mean square; absent means torch.finfo(dtype).eps"}},
			Infer: inferLayerNorm,
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				return Call("_rms_norm_backward", []*Tensor{c.Inputs[0], c.Grads[0], c.Inputs[1]}, c.Attrs)
			},
			GPUBody: &ElementBody{Rows: normRows, Body: rmsNormBody},
			Samples: []Sample{
				{Name: "weight", Inputs: []Gen{G(F32, 3, 4), G(F32, 4)}, Attrs: Attrs{"normalized_shape": []int{4}}},
				{Name: "two_dims", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"normalized_shape": []int{3, 4}}},
				{Name: "eps_strided", Inputs: []Gen{G(F32, 5, 3).AsStrided(), G(F32, 3)}, Attrs: Attrs{"normalized_shape": []int{3}, "eps": 0.1}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 6), G(F64, 6)}, Attrs: Attrs{"normalized_shape": []int{6}}},
				{Name: "f16", Inputs: []Gen{G(F16, 3, 8), G(F16, 8)}, Attrs: Attrs{"normalized_shape": []int{8}, "eps": 1e-6}},
				{Name: "bf16", Inputs: []Gen{G(BF16, 2, 5)}, Attrs: Attrs{"normalized_shape": []int{5}, "eps": 1e-6}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 4), G(F32, 4)}, Attrs: Attrs{"normalized_shape": []int{4}}},
			},
		},
		&OpDef{
			Name: "_rms_norm_backward", Category: "norm", Internal: true, Doc: "Gradients of rms_norm: dx, dweight from x, upstream g and weight.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly, Optional: true}},
			Attrs: []AttrSpec{normalizedShapeAttr(),
				{Name: "eps", Kind: AttrFloat, Doc: "added to the mean square; absent means torch.finfo(dtype).eps"}},
			Infer: inferNormBackward(1, normTrailingShape, inferLayerNorm),
			Samples: []Sample{
				{Name: "weight", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4), G(F32, 4)}, Attrs: Attrs{"normalized_shape": []int{4}}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 3, 2), G(F64, 2, 3, 2)}, Attrs: Attrs{"normalized_shape": []int{3, 2}, "eps": 1e-3}},
			},
		},
		&OpDef{
			Name: "group_norm", Category: "norm", Doc: "Normalise x [N, C, ...] over groups of C/num_groups channels and all spatial dims, then scale and shift per channel.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly, Optional: true}, {Name: "bias", DTypes: floatsOnly, Optional: true}},
			Attrs: []AttrSpec{{Name: "num_groups", Kind: AttrInt, Required: true, Doc: "number of channel groups; divides C"}, normEpsAttr(1e-5),
				{Name: "activation", Kind: AttrString, Default: "none", Enum: []string{"none", "silu"},
					Doc: "applied to the result in the same pass: silu is GroupNorm then SiLU, as diffusion ResNet blocks write it"}},
			Infer:    inferGroupNorm,
			Backward: groupNormBackward,
			Samples: []Sample{
				{Name: "affine", Inputs: append([]Gen{G(F32, 2, 6, 3)}, nnAffine(F32, 6)...), Attrs: Attrs{"num_groups": 3}},
				{Name: "no_affine_4d", Inputs: []Gen{G(F32, 2, 4, 2, 3)}, Attrs: Attrs{"num_groups": 2}},
				{Name: "one_group_2d", Inputs: []Gen{G(F32, 3, 4), G(F32, 4)}, Attrs: Attrs{"num_groups": 1}},
				{Name: "per_channel_strided", Inputs: []Gen{G(F32, 2, 3, 4).AsStrided(), nnAbsent, G(F32, 3)}, Attrs: Attrs{"num_groups": 3, "eps": 1e-3}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 4, 3), G(F64, 4), G(F64, 4)}, Attrs: Attrs{"num_groups": 2}},
				{Name: "f16", Inputs: []Gen{G(F16, 2, 4, 4), G(F16, 4), G(F16, 4)}, Attrs: Attrs{"num_groups": 2}},
				{Name: "empty", Inputs: append([]Gen{G(F32, 0, 4, 2)}, nnAffine(F32, 4)...), Attrs: Attrs{"num_groups": 2}},
				{Name: "silu", Inputs: append([]Gen{G(F32, 2, 6, 3, 2)}, nnAffine(F32, 6)...), Attrs: Attrs{"num_groups": 3, "activation": "silu"}},
				{Name: "silu_f64_no_affine", Inputs: []Gen{G(F64, 2, 4, 3)}, Attrs: Attrs{"num_groups": 2, "activation": "silu"}},
				{Name: "silu_f16", Inputs: []Gen{G(F16, 2, 4, 4), G(F16, 4), G(F16, 4)}, Attrs: Attrs{"num_groups": 2, "activation": "silu"}},
			},
		},
		&OpDef{
			Name: "_group_norm_backward", Category: "norm", Internal: true, Doc: "Gradients of group_norm: dx, dweight, dbias from x, upstream g and weight.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly, Optional: true}},
			Attrs:  []AttrSpec{{Name: "num_groups", Kind: AttrInt, Required: true, Doc: "number of channel groups; divides C"}, normEpsAttr(1e-5)},
			Infer:  inferNormBackward(2, normChannelShape, inferGroupNorm),
			Samples: []Sample{
				{Name: "affine", Inputs: []Gen{G(F32, 2, 4, 3), G(F32, 2, 4, 3), G(F32, 4)}, Attrs: Attrs{"num_groups": 2}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 3, 2), G(F64, 2, 3, 2)}, Attrs: Attrs{"num_groups": 3}},
			},
		},
		batchNormDef(),
		&OpDef{
			Name: "_batch_norm_backward", Category: "norm", Internal: true,
			Doc: "Gradients of batch_norm: dx, dweight, dbias from x, the upstream gradients of y and of the new running statistics, and the running statistics and weight.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly},
				{Name: "running_mean", DTypes: floatsOnly, Optional: true}, {Name: "running_var", DTypes: floatsOnly, Optional: true},
				{Name: "weight", DTypes: floatsOnly, Optional: true},
				{Name: "g_mean", DTypes: floatsOnly, Optional: true}, {Name: "g_var", DTypes: floatsOnly, Optional: true}},
			Attrs: batchNormAttrs(),
			Infer: inferBatchNormBackward,
			Samples: []Sample{
				{Name: "train", Inputs: []Gen{G(F32, 4, 3), G(F32, 4, 3), G(F32, 3), nnPositive(F32, 3), G(F32, 3), G(F32, 3), G(F32, 3)}, Attrs: Attrs{"training": true}},
				{Name: "eval_f64", Inputs: []Gen{G(F64, 2, 3, 2), G(F64, 2, 3, 2), G(F64, 3), nnPositive(F64, 3)}},
			},
		},
	)
}

func batchNormAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "training", Kind: AttrBool, Default: false, Doc: "normalise with batch statistics and update the running ones"},
		{Name: "momentum", Kind: AttrFloat, Default: 0.1, Doc: "weight of the batch statistics in the running update"},
		normEpsAttr(1e-5),
	}
}

func batchNormDef() *OpDef {
	return &OpDef{
		Name: "batch_norm", Category: "norm",
		Doc: "Normalise x [N, C, ...] per channel with batch statistics (training) or running ones; also returns the updated running mean and variance.",
		Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly},
			{Name: "running_mean", DTypes: floatsOnly, Optional: true, NoGrad: true}, {Name: "running_var", DTypes: floatsOnly, Optional: true, NoGrad: true},
			{Name: "weight", DTypes: floatsOnly, Optional: true}, {Name: "bias", DTypes: floatsOnly, Optional: true}},
		Outputs: []string{"y", "running_mean", "running_var"},
		Attrs:   batchNormAttrs(),
		Infer:   inferBatchNorm,
		Backward: func(c *GradCtx) ([]*Tensor, error) {
			in := c.Inputs
			outs, err := Call("_batch_norm_backward", []*Tensor{in[0], c.Grad(0), in[1], in[2], in[3], c.Grads[1], c.Grads[2]}, c.Attrs)
			if err != nil {
				return nil, err
			}
			return []*Tensor{outs[0], nil, nil, outs[1], outs[2]}, nil
		},
		Samples: []Sample{
			{Name: "train_stats", Inputs: append([]Gen{G(F32, 4, 3), G(F32, 3), nnPositive(F32, 3)}, nnAffine(F32, 3)...), Attrs: Attrs{"training": true}},
			{Name: "train_no_stats_3d", Inputs: append([]Gen{G(F32, 3, 2, 4), nnAbsent, nnAbsent}, nnAffine(F32, 2)...), Attrs: Attrs{"training": true}},
			{Name: "train_4d_momentum", Inputs: []Gen{G(F32, 2, 3, 2, 2), G(F32, 3), nnPositive(F32, 3)}, Attrs: Attrs{"training": true, "momentum": 0.3, "eps": 1e-3}},
			{Name: "eval", Inputs: append([]Gen{G(F32, 2, 3, 4), G(F32, 3), nnPositive(F32, 3)}, nnAffine(F32, 3)...)},
			{Name: "eval_strided_no_affine", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 3), nnPositive(F32, 3)}},
			{Name: "train_f64", Inputs: []Gen{G(F64, 5, 2), G(F64, 2), nnPositive(F64, 2), G(F64, 2), G(F64, 2)}, Attrs: Attrs{"training": true}},
			{Name: "eval_f16", Inputs: []Gen{G(F16, 2, 3), G(F16, 3), nnPositive(F16, 3), G(F16, 3), G(F16, 3)}},
			{Name: "eval_empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3), nnPositive(F32, 3)}},
		},
	}
}

// groupNormBackward is group_norm's gradient. With activation silu the
// upstream gradient first goes through SiLU's derivative at the
// normalised value y, recomputed here (the forward kept only silu(y)).
func groupNormBackward(c *GradCtx) ([]*Tensor, error) {
	attrs := Attrs{"num_groups": c.Attrs["num_groups"], "eps": c.Attrs["eps"]}
	g := c.Grads[0]
	if c.Attrs.String("activation") == "silu" {
		y, err := Call("group_norm", []*Tensor{c.Inputs[0], c.Inputs[1], c.Inputs[2]}, attrs)
		if err != nil {
			return nil, err
		}
		g = siluGrad(y[0], g)
	}
	return Call("_group_norm_backward", []*Tensor{c.Inputs[0], g, c.Inputs[1]}, attrs)
}
