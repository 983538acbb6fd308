package onnx

import (
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Normalisations and dropout (inference).

func init() {
	def([]string{"epsilon", "momentum", "training_mode"}, batchNorm, "BatchNormalization")
	def([]string{"epsilon"}, func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		if x.Rank() < 2 {
			c.fail("input shape %v has no channel dim", x.Shape())
			return nil, nil
		}
		return one(call("group_norm", core.Attrs{"num_groups": x.Shape()[1], "eps": c.attrFloat("epsilon", 1e-5)}, x, c.in(1), c.in(2)))
	}, "InstanceNormalization")
	def([]string{"axis", "epsilon", "stash_type"}, layerNorm, "LayerNormalization")
	def([]string{"epsilon", "num_groups", "stash_type"}, groupNorm, "GroupNormalization")
	def([]string{"axis", "epsilon", "stash_type"}, rmsNorm, "RMSNormalization")
	def([]string{"axis", "p"}, func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		n := call("norm", core.Attrs{"axes": []int{c.axis(c.attrInt("axis", -1), x.Rank())}, "keepdim": true, "ord": float64(c.attrInt("p", 2))}, x)
		// A zero vector normalises to zeros, not 0/0 (as ONNX's reference).
		return one(call("where", nil, call("eq", nil, n, like(n, 0)), like(x, 0), call("div", nil, x, n)))
	}, "LpNormalization")
	def([]string{"axes"}, meanVarianceNorm, "MeanVarianceNormalization")
	def([]string{"alpha", "beta", "bias", "size"}, lrn, "LRN")
	def([]string{"seed", "ratio"}, dropout, "Dropout")
}

// channelShape is [1, C, 1, ...] for a per-channel parameter of x.
func channelShape(x *core.Tensor, c int) []int {
	shape := make([]int, x.Rank())
	for i := range shape {
		shape[i] = 1
	}
	if len(shape) > 1 {
		shape[1] = c
	}
	return shape
}

// batchNorm in inference form folds the statistics into one scale and one
// shift per channel, two elementwise ops that fuse with their neighbours.
// In training mode (opset 14 and later) it normalises with the batch's
// mean and (population) variance over every axis but the channel's, and
// also returns the running statistics updated with momentum.
func batchNorm(c *ctx) ([]*core.Tensor, error) {
	x, scale, bias, mean, variance := c.in(0), c.in(1), c.in(2), c.in(3), c.in(4)
	training := c.attrInt("training_mode", 0) != 0
	if c.n.opset < 14 && c.nout > 1 {
		c.fail("the training outputs of BatchNormalization before opset 14 (the model imports opset %d) are not supported", c.n.opset)
		return nil, nil
	}
	if c.nout > 1 && !training {
		c.fail("running_mean and running_var are outputs only in training mode")
		return nil, nil
	}
	eps := c.attrFloat("epsilon", 1e-5)
	if training {
		if x.Rank() < 2 || c.err != nil {
			c.fail("input shape %v has no channel dim", x.Shape())
			return nil, nil
		}
		axes := []int{0}
		for a := 2; a < x.Rank(); a++ {
			axes = append(axes, a)
		}
		batchMean := call("mean", core.Attrs{"axes": axes}, x)
		batchVar := call("mean", core.Attrs{"axes": axes}, call("square", nil, call("sub", nil, x, batchMean.Reshape(channelShape(x, x.Shape()[1])))))
		momentum := c.attrFloat("momentum", 0.9)
		runMean := call("add", nil, call("mul", nil, mean, like(mean, momentum)), call("mul", nil, batchMean, like(batchMean, 1-momentum)))
		runVar := call("add", nil, call("mul", nil, variance, like(variance, momentum)), call("mul", nil, batchVar, like(batchVar, 1-momentum)))
		mean, variance = batchMean, batchVar
		y := normalize(x, scale, bias, mean, variance, eps)
		return []*core.Tensor{y, runMean, runVar}, y.Err()
	}
	return one(normalize(x, scale, bias, mean, variance, eps))
}

// normalize is (x - mean) / sqrt(variance + eps) * scale + bias per channel,
// as one scale and one shift.
func normalize(x, scale, bias, mean, variance *core.Tensor, eps float64) *core.Tensor {
	a := call("mul", nil, scale, call("rsqrt", nil, call("add", nil, variance, like(variance, eps))))
	b := call("sub", nil, bias, call("mul", nil, mean, a))
	shape := channelShape(x, scale.Numel())
	return call("add", nil, call("mul", nil, x, a.Reshape(shape)), b.Reshape(shape))
}

// normAxes is axis..rank-1 for the layer-style norms.
func normAxes(c *ctx, x *core.Tensor) []int {
	ax := c.axis(c.attrInt("axis", -1), x.Rank())
	axes := []int{}
	for a := ax; a < x.Rank(); a++ {
		axes = append(axes, a)
	}
	return axes
}

// layerNorm uses the registry op when only Y is wanted and the scale has
// the normalised shape; otherwise (broadcast scale, Mean or InvStdDev
// asked for) it is written out with the statistics.
func layerNorm(c *ctx) ([]*core.Tensor, error) {
	x, scale, bias := c.in(0), c.in(1), c.opt(2)
	axes := normAxes(c, x)
	if c.err != nil || scale.Err() != nil {
		return nil, scale.Err()
	}
	eps := c.attrFloat("epsilon", 1e-5)
	normShape := x.Shape()[axes[0]:]
	if c.nout == 1 && slices.Equal(scale.Shape(), normShape) && (bias == nil || slices.Equal(bias.Shape(), normShape)) && x.DType().IsFloat() {
		ins := []*core.Tensor{x, scale}
		if bias != nil {
			ins = append(ins, bias)
		}
		return one(call("layer_norm", core.Attrs{"normalized_shape": []int(normShape), "eps": eps}, ins...))
	}
	mean := call("mean", core.Attrs{"axes": axes, "keepdim": true}, x)
	centered := call("sub", nil, x, mean)
	variance := call("mean", core.Attrs{"axes": axes, "keepdim": true}, call("mul", nil, centered, centered))
	inv := call("rsqrt", nil, call("add", nil, variance, like(variance, eps)))
	y := call("mul", nil, call("mul", nil, centered, inv), scale)
	if bias != nil {
		y = call("add", nil, y, bias)
	}
	return []*core.Tensor{y, mean, inv}, y.Err()
}

func rmsNorm(c *ctx) ([]*core.Tensor, error) {
	x, scale := c.in(0), c.in(1)
	axes := normAxes(c, x)
	if c.err != nil || scale.Err() != nil {
		return nil, scale.Err()
	}
	eps := c.attrFloat("epsilon", 1e-5)
	normShape := x.Shape()[axes[0]:]
	if slices.Equal(scale.Shape(), normShape) {
		return one(call("rms_norm", core.Attrs{"normalized_shape": []int(normShape), "eps": eps}, x, scale))
	}
	ms := call("mean", core.Attrs{"axes": axes, "keepdim": true}, call("mul", nil, x, x))
	y := call("mul", nil, x, call("rsqrt", nil, call("add", nil, ms, like(ms, eps))))
	return one(call("mul", nil, y, scale))
}

// groupNorm takes per-channel scale and bias (opset 21) or, as opset 18
// did, one per group, repeated over the group's channels.
func groupNorm(c *ctx) ([]*core.Tensor, error) {
	x, scale, bias := c.in(0), c.in(1), c.in(2)
	groups := int(c.attrInt("num_groups", 0))
	if x.Rank() < 2 || groups <= 0 || x.Shape()[1]%groups != 0 {
		c.fail("input shape %v and num_groups %d: channels must split into the groups", x.Shape(), groups)
		return nil, nil
	}
	ch := x.Shape()[1]
	if scale.Numel() == groups && groups != ch {
		scale = call("repeat_interleave", core.Attrs{"repeats": ch / groups}, scale)
		bias = call("repeat_interleave", core.Attrs{"repeats": ch / groups}, bias)
	}
	return one(call("group_norm", core.Attrs{"num_groups": groups, "eps": c.attrFloat("epsilon", 1e-5)}, x, scale, bias))
}

func meanVarianceNorm(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	list, ok := c.attrInts("axes")
	if !ok {
		list = []int64{0, 2, 3}
	}
	a := core.Attrs{"axes": c.axes(list, x.Rank()), "keepdim": true}
	mean := call("mean", a, x)
	centered := call("sub", nil, x, mean)
	std := call("sqrt", nil, call("mean", a, call("mul", nil, centered, centered)))
	return one(call("div", nil, centered, call("add", nil, std, like(std, 1e-9))))
}

// lrn sums squares over a window of channels with an average pool over
// the channel axis of [N, 1, C, rest], padded as ONNX centres the window.
func lrn(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	size := int(c.attrInt("size", 0))
	s := x.Shape()
	if size <= 0 || len(s) < 3 {
		c.fail("size %d and input shape %v: want a positive size and [N, C, ...]", size, s)
		return nil, nil
	}
	alpha, beta, bias := c.attrFloat("alpha", 1e-4), c.attrFloat("beta", 0.75), c.attrFloat("bias", 1)
	rest := core.Shape(s[2:]).Numel()
	sq := call("mul", nil, x, x).Reshape([]int{s[0], 1, s[1], rest})
	sq = call("pad", core.Attrs{"pads": []int{0, 0, (size - 1) / 2, size / 2}}, sq)
	sum := call("avg_pool2d", core.Attrs{"kernel_size": []int{size, 1}, "stride": []int{1, 1}}, sq)
	sum = call("mul", nil, sum, like(sum, alpha)).Reshape(s) // average * size * alpha/size
	den := call("pow", nil, call("add", nil, sum, like(sum, bias)), like(sum, beta))
	return one(call("div", nil, x, den))
}

// dropout is the identity at inference, with an all-true mask, and so is
// training mode with ratio 0. Other training-mode dropout draws a random
// mask, which is refused rather than silently skipped: ONNX leaves the
// generator to the runtime, so no draw would reproduce another runtime's.
// Before opset 12 Dropout has no training_mode input and ratio is an
// attribute: it is always the inference form.
func dropout(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if c.n.opset >= 12 && c.has("ratio") {
		c.fail("ratio is an input since opset 12 (the model imports opset %d), not an attribute", c.n.opset)
		return nil, nil
	}
	ratio := 0.5
	if r, ok := c.scalar(1); ok {
		ratio = r
	}
	if t, ok := c.scalar(2); ok && t != 0 && ratio != 0 {
		c.fail("training mode with ratio %v draws a random mask, which is not supported", ratio)
		return nil, nil
	}
	mask := call("full_like", core.Attrs{"dtype": core.Bool, "value": 1.0}, x)
	return []*core.Tensor{x, mask}, nil
}
