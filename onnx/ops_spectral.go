package onnx

import "github.com/webtensor/webtensor/core"

// DFT over the registry's transforms, which take ONNX's own layout: a
// complex signal as real pairs in a trailing dimension of 2 (a real one
// has a trailing 1). Det is the registry's.

func init() {
	def([]string{"axis", "inverse", "onesided"}, dft, "DFT")
	def(nil, func(c *ctx) ([]*core.Tensor, error) { return one(call("det", nil, c.in(0))) }, "Det")
	for onnxName, op := range map[string]string{"BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor"} {
		def(nil, binaryOp(op), onnxName)
	}
	def(nil, unary("bitwise_invert"), "BitwiseNot")
}

func dft(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if c.err != nil {
		return nil, c.err
	}
	shape := x.Shape()
	r := len(shape)
	if r < 2 || (shape[r-1] != 1 && shape[r-1] != 2) {
		c.fail("DFT's input is [batch, signal..., 1] (real) or [..., 2] (complex), got shape %v", shape)
		return nil, c.err
	}
	// The axis is an attribute (default 1) until opset 20, an optional
	// input (default -2) from it.
	axis := c.attrInt("axis", 1)
	if c.n.opset >= 20 {
		axis = -2
		if v, ok := c.ints(2); ok {
			if len(v) != 1 {
				c.fail("axis must be one value, got %v", v)
				return nil, c.err
			}
			axis = v[0]
		}
	}
	a := int(axis)
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r-1 {
		c.fail("axis %d is not a signal axis of an input of shape %v (the last dimension holds the parts)", axis, shape)
		return nil, c.err
	}
	inverse, onesided := c.attrInt("inverse", 0) != 0, c.attrInt("onesided", 0) != 0
	n := shape[a]
	if inverse && onesided {
		n = 2 * (n - 1)
	}
	if v, ok := c.scalar(1); ok {
		n = int(v)
	}
	if c.err != nil {
		return nil, c.err
	}
	if n < 1 {
		c.fail("dft_length must be positive, got %d", n)
		return nil, c.err
	}
	d := x.DType()
	if d != core.F64 {
		x = x.Cast(core.F32)
	}
	attrs := core.Attrs{"n": n, "axis": a}
	var out *core.Tensor
	switch {
	case !inverse && onesided && shape[r-1] == 1:
		out = call("rfft", attrs, call("squeeze", core.Attrs{"axes": []int{r - 1}}, x))
	case inverse && onesided:
		out = call("unsqueeze", core.Attrs{"axis": -1}, call("irfft", attrs, pairs(x)))
	case inverse:
		out = call("ifft", attrs, pairs(x))
	default:
		out = call("fft", attrs, pairs(x))
		if onesided {
			out = call("slice", core.Attrs{"axis": a, "stop": n/2 + 1}, out)
		}
	}
	return one(out.Cast(d))
}

// pairs is x with a trailing 2: a real signal [..., 1] gains zero
// imaginary parts.
func pairs(x *core.Tensor) *core.Tensor {
	if s := x.Shape(); s[len(s)-1] == 2 {
		return x
	}
	return core.Concat([]*core.Tensor{x, core.ZerosLike(x)}, core.Attrs{"axis": -1})
}
