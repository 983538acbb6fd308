package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// Convolutions: their geometry (ConvGeom) is core/oprules'.

// convDTypes requires one floating dtype for x, weight and bias, as PyTorch does.
func convDTypes(in []Meta) error {
	for i, name := range []string{"weight", "bias"} {
		if i+1 >= len(in) {
			break
		}
		if m := in[i+1]; m.DType != Invalid && m.DType != in[0].DType {
			return fmt.Errorf("input is %s but %s is %s; cast one of them", in[0].DType, name, m.DType)
		}
	}
	return nil
}

func checkBias(in []Meta, channels int) error {
	if len(in) < 3 || in[2].DType == Invalid {
		return nil
	}
	if b := in[2].Shape; len(b) != 1 || b[0] != channels {
		return fmt.Errorf("bias must have shape [%d] (one value per output channel), got %v", channels, b)
	}
	return nil
}

// inferConv builds an Infer for an op whose result is one side of geom.
func inferConv(geom func(x, w Shape, a Attrs) (oprules.ConvGeom, error), gridOut bool) func([]Meta, Attrs) ([]Meta, error) {
	return func(in []Meta, a Attrs) ([]Meta, error) {
		if err := convDTypes(in); err != nil {
			return nil, err
		}
		g, err := geom(in[0].Shape, in[1].Shape, a)
		if err != nil {
			return nil, err
		}
		out := g.ImageShape()
		if gridOut {
			out = g.GridShape()
		}
		if err := checkBias(in, out[len(out)-g.Dims-1]); err != nil {
			return nil, err
		}
		return []Meta{{Shape: out, DType: in[0].DType}}, nil
	}
}

// convAttrSpecs are the attributes of conv ops, in PyTorch's argument order.
func convAttrSpecs(transposed bool) []AttrSpec {
	specs := []AttrSpec{
		{Name: "stride", Kind: AttrInts, Default: []int{1}, Doc: "step between windows: one value for every spatial dim or one per dim"},
		{Name: "padding", Kind: AttrInts, Default: []int{0}, Doc: "implicit zeros on both sides of every spatial dim"},
	}
	if transposed {
		specs = append(specs, AttrSpec{Name: "output_padding", Kind: AttrInts, Default: []int{0},
			Doc: "extra size added to one side of every spatial dim of the output"})
	}
	if !transposed {
		specs = append(specs, AttrSpec{Name: "dilation", Kind: AttrInts, Default: []int{1}, Doc: "spacing between kernel elements"})
	}
	specs = append(specs, AttrSpec{Name: "groups", Kind: AttrInt, Default: 1, Doc: "channel groups convolved independently"})
	if transposed {
		specs = append(specs, AttrSpec{Name: "dilation", Kind: AttrInts, Default: []int{1}, Doc: "spacing between kernel elements"})
	}
	return specs
}

// geomAttrs turns a resolved geometry back into 2-D attributes for the ops
// a backward rule calls.
func geomAttrs(g oprules.ConvGeom) Attrs {
	return Attrs{"stride": g.Stride[:], "padding": g.Padding[:], "dilation": g.Dilation[:], "groups": g.Groups}
}

// convInputs are x, weight and the optional bias, all floating point.
func convInputs() []InputSpec {
	return []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly},
		{Name: "bias", DTypes: floatsOnly, Optional: true}}
}

// biasGrad sums a result gradient over every dim but the channels.
func biasGrad(gy *Tensor, g oprules.ConvGeom) *Tensor {
	axes := []int{}
	for i := 0; i < gy.Rank(); i++ {
		if i != gy.Rank()-g.Dims-1 {
			axes = append(axes, i)
		}
	}
	return call1("sum", Attrs{"axes": axes}, gy)
}

func needBias(c *GradCtx) bool { return len(c.Inputs) > 2 && c.Inputs[2] != nil && c.Need[2] }

// conv2dBackward: the input gradient is the transposed convolution of the
// result gradient with the same weight; output_padding restores the rows the
// strided windows never reached.
func conv2dBackward(c *GradCtx) ([]*Tensor, error) {
	x, w, gy := c.Inputs[0], c.Inputs[1], c.Grad(0)
	g, err := oprules.Conv2dGeom(x.shape, w.shape, c.Attrs)
	if err != nil {
		return nil, err
	}
	res := make([]*Tensor, 3)
	if c.Need[0] {
		a := geomAttrs(g)
		a["output_padding"] = g.TransposedOutputPadding()
		res[0] = call1("conv_transpose2d", a, gy, w)
	}
	if c.Need[1] {
		a := geomAttrs(g)
		a["kernel_size"] = g.Kernel[:]
		res[1] = call1("_conv2d_weight_grad", a, x, gy)
	}
	if needBias(c) {
		res[2] = biasGrad(gy, g)
	}
	return res, nil
}

// conv1dBackward runs the 2-D rules on a unit height.
func conv1dBackward(c *GradCtx) ([]*Tensor, error) {
	x, w, gy := c.Inputs[0], c.Inputs[1], c.Grad(0)
	g, err := oprules.Conv1dGeom(x.shape, w.shape, c.Attrs)
	if err != nil {
		return nil, err
	}
	tall := func(t *Tensor) *Tensor { return call1("unsqueeze", Attrs{"axis": -2}, t) }
	res := make([]*Tensor, 3)
	if c.Need[0] {
		a := geomAttrs(g)
		a["output_padding"] = []int{0, g.TransposedOutputPadding()[0]}
		res[0] = call1("conv_transpose2d", a, tall(gy), tall(w)).Reshape(x.shape)
	}
	if c.Need[1] {
		a := geomAttrs(g)
		a["kernel_size"] = g.Kernel[:]
		res[1] = call1("_conv2d_weight_grad", a, tall(x), tall(gy)).Reshape(w.shape)
	}
	if needBias(c) {
		res[2] = biasGrad(gy, g)
	}
	return res, nil
}

// convTranspose2dBackward: the input gradient is conv2d of the result
// gradient; when output_padding reaches the stride, conv2d would see extra
// window positions, so the internal op that stops at the input size runs.
func convTranspose2dBackward(c *GradCtx) ([]*Tensor, error) {
	x, w, gy := c.Inputs[0], c.Inputs[1], c.Grad(0)
	g, err := oprules.ConvTranspose2dGeom(x.shape, w.shape, c.Attrs)
	if err != nil {
		return nil, err
	}
	res := make([]*Tensor, 3)
	if c.Need[0] {
		if g.OutputPadding[0] < g.Stride[0] && g.OutputPadding[1] < g.Stride[1] {
			res[0] = call1("conv2d", geomAttrs(g), gy, w)
		} else {
			res[0] = call1("_conv_transpose2d_input_grad", c.Attrs, gy, w)
		}
	}
	if c.Need[1] {
		a := geomAttrs(g)
		a["kernel_size"] = g.Kernel[:]
		res[1] = call1("_conv2d_weight_grad", a, gy, x)
	}
	if needBias(c) {
		res[2] = biasGrad(gy, g)
	}
	return res, nil
}

func init() {
	MustRegister(
		&OpDef{
			Name: "conv2d", Category: "conv", Doc: "2-D convolution (cross-correlation) over NCHW input, as torch.nn.functional.conv2d.",
			Inputs: convInputs(), Outputs: []string{"out"}, Attrs: convAttrSpecs(false),
			Infer: inferConv(oprules.Conv2dGeom, true), Backward: conv2dBackward, Samples: conv2dSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "conv1d", Category: "conv", Doc: "1-D convolution (cross-correlation) over NCL input, as torch.nn.functional.conv1d.",
			Inputs: convInputs(), Outputs: []string{"out"}, Attrs: convAttrSpecs(false),
			Infer: inferConv(oprules.Conv1dGeom, true), Backward: conv1dBackward, Samples: conv1dSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "conv_transpose2d", Category: "conv", Doc: "2-D transposed convolution over NCHW input, as torch.nn.functional.conv_transpose2d.",
			Inputs: convInputs(), Outputs: []string{"out"}, Attrs: convAttrSpecs(true),
			Infer: inferConv(oprules.ConvTranspose2dGeom, false), Backward: convTranspose2dBackward, Samples: convTranspose2dSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "_conv2d_weight_grad", Category: "conv", Internal: true,
			Doc:    "Gradient of conv2d with respect to its weight, from the input and the result gradient.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "grad", DTypes: floatsOnly}}, Outputs: []string{"grad_weight"},
			Attrs: append(convAttrSpecs(false), AttrSpec{Name: "kernel_size", Kind: AttrInts, Required: true, Doc: "spatial size of the weight"}),
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if in[0].DType != in[1].DType {
					return nil, fmt.Errorf("input is %s but grad is %s", in[0].DType, in[1].DType)
				}
				g, err := oprules.ConvWeightGradGeom(in[0].Shape, in[1].Shape, a)
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: g.WeightShape(), DType: in[0].DType}}, nil
			},
			Samples: convWeightGradSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "_conv_transpose2d_input_grad", Category: "conv", Internal: true,
			Doc:    "Gradient of conv_transpose2d with respect to its input when output_padding reaches the stride.",
			Inputs: []InputSpec{{Name: "grad", DTypes: floatsOnly}, {Name: "weight", DTypes: floatsOnly}}, Outputs: []string{"grad_input"},
			Attrs: convAttrSpecs(true),
			Infer: inferConv(oprules.ConvTransposeInputGradGeom, true), Samples: convTransposeInputGradSamples(), TolScale: 2,
		},
	)
}

var noBias = Gen{Absent: true}

func conv2dSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 2, 2, 5, 5), G(F32, 3, 2, 3, 3), G(F32, 3)}},
		{Name: "stride_padding", Inputs: []Gen{G(F32, 1, 2, 6, 5), G(F32, 3, 2, 3, 3), noBias},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}}},
		{Name: "dilation_asymmetric", Inputs: []Gen{G(F32, 1, 2, 7, 6), G(F32, 2, 2, 2, 3), G(F32, 2)},
			Attrs: Attrs{"stride": []int{1, 2}, "padding": []int{1, 2}, "dilation": []int{2, 1}}},
		{Name: "groups", Inputs: []Gen{G(F32, 1, 4, 4, 4), G(F32, 6, 2, 3, 3), G(F32, 6)}, Attrs: Attrs{"groups": 2, "padding": []int{1}}},
		{Name: "unbatched_1x1", Inputs: []Gen{G(F32, 3, 4, 4), G(F32, 5, 3, 1, 1), G(F32, 5)}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 3, 4, 4).AsStrided(), G(F32, 2, 3, 2, 2).AsStrided(), G(F32, 2)},
			Attrs: Attrs{"stride": []int{2, 1}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 5, 4), G(F64, 2, 2, 3, 3), G(F64, 2)}, Attrs: Attrs{"padding": []int{1}}},
		{Name: "f16", Inputs: []Gen{G(F16, 1, 2, 4, 4), G(F16, 2, 2, 3, 3), G(F16, 2)}},
	}
}

func conv1dSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 2, 3, 8), G(F32, 4, 3, 3), G(F32, 4)}},
		{Name: "stride_padding_dilation", Inputs: []Gen{G(F32, 1, 2, 11), G(F32, 3, 2, 3), noBias},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{2}, "dilation": []int{2}}},
		{Name: "groups", Inputs: []Gen{G(F32, 2, 4, 6), G(F32, 4, 2, 2), G(F32, 4)}, Attrs: Attrs{"groups": 2}},
		{Name: "unbatched", Inputs: []Gen{G(F32, 3, 7), G(F32, 2, 3, 3), G(F32, 2)}, Attrs: Attrs{"padding": []int{1}}},
		{Name: "strided", Inputs: []Gen{G(F32, 2, 3, 6).AsStrided(), G(F32, 2, 3, 2), G(F32, 2)}, Attrs: Attrs{"stride": []int{3}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 9), G(F64, 3, 2, 4), G(F64, 3)}, Attrs: Attrs{"padding": []int{1}}},
		{Name: "bf16", Inputs: []Gen{G(BF16, 1, 2, 8), G(BF16, 2, 2, 3), G(BF16, 2)}},
	}
}

func convTranspose2dSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 1, 2, 3, 3), G(F32, 2, 3, 3, 3), G(F32, 3)}},
		{Name: "stride_padding_output_padding", Inputs: []Gen{G(F32, 2, 2, 3, 3), G(F32, 2, 2, 3, 3), noBias},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}, "output_padding": []int{1}}},
		{Name: "groups_dilation", Inputs: []Gen{G(F32, 1, 4, 3, 3), G(F32, 4, 1, 2, 2), G(F32, 2)},
			Attrs: Attrs{"groups": 2, "dilation": []int{2}}},
		{Name: "output_padding_below_dilation", Inputs: []Gen{G(F32, 1, 1, 3, 4), G(F32, 1, 2, 3, 3), G(F32, 2)},
			Attrs: Attrs{"dilation": []int{2}, "output_padding": []int{1}}},
		{Name: "asymmetric", Inputs: []Gen{G(F32, 1, 2, 3, 4), G(F32, 2, 2, 2, 3), G(F32, 2)},
			Attrs: Attrs{"stride": []int{2, 1}, "padding": []int{0, 1}, "output_padding": []int{1, 0}}},
		{Name: "strided", Inputs: []Gen{G(F32, 1, 2, 3, 3).AsStrided(), G(F32, 2, 2, 2, 2).AsStrided(), G(F32, 2)}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 3, 3), G(F64, 2, 2, 3, 3), G(F64, 2)},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}}},
		{Name: "unbatched_f16", Inputs: []Gen{G(F16, 2, 3, 3), G(F16, 2, 2, 2, 2), noBias}, Attrs: Attrs{"stride": []int{2}}},
	}
}

func convWeightGradSamples() []Sample {
	return []Sample{
		{Name: "basic", Inputs: []Gen{G(F32, 2, 2, 5, 5), G(F32, 2, 3, 3, 3)}, Attrs: Attrs{"kernel_size": []int{3}}},
		{Name: "stride_padding_groups", Inputs: []Gen{G(F32, 1, 4, 6, 6), G(F32, 1, 4, 4, 4)},
			Attrs: Attrs{"kernel_size": []int{2}, "stride": []int{2}, "padding": []int{1}, "groups": 2}},
		{Name: "short_grid", Inputs: []Gen{G(F32, 1, 2, 8, 9), G(F32, 1, 1, 3, 4)},
			Attrs: Attrs{"kernel_size": []int{3}, "dilation": []int{2}}},
		{Name: "unbatched", Inputs: []Gen{G(F32, 2, 4, 4), G(F32, 3, 3, 3)}, Attrs: Attrs{"kernel_size": []int{2}}},
		{Name: "f64", Inputs: []Gen{G(F64, 1, 2, 4, 4), G(F64, 1, 2, 2, 2)}, Attrs: Attrs{"kernel_size": []int{3}}},
	}
}

func convTransposeInputGradSamples() []Sample {
	return []Sample{
		{Name: "dilation_output_padding", Inputs: []Gen{G(F32, 1, 2, 8, 9), G(F32, 1, 2, 3, 3)},
			Attrs: Attrs{"dilation": []int{2}, "output_padding": []int{1}}},
		{Name: "stride_padding", Inputs: []Gen{G(F32, 1, 2, 7, 7), G(F32, 2, 2, 3, 3)},
			Attrs: Attrs{"stride": []int{2}, "padding": []int{1}}},
		{Name: "groups", Inputs: []Gen{G(F32, 1, 2, 5, 5), G(F32, 4, 1, 2, 2)}, Attrs: Attrs{"groups": 2}},
		{Name: "unbatched_f64", Inputs: []Gen{G(F64, 2, 10, 10), G(F64, 1, 2, 2, 2)},
			Attrs: Attrs{"stride": []int{2}, "dilation": []int{3}, "output_padding": []int{2}}},
	}
}
