package onnx

import (
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// The integer products of quantized models: MatMulInteger and
// ConvInteger (i32 results), QLinearMatMul and QLinearConv (requantized
// to 8 bits). Operands have their zero points taken off in i32, as ONNX's
// reference does, so every product is exact.

func init() {
	def(nil, matmulInteger, "MatMulInteger")
	def(nil, qlinearMatMul, "QLinearMatMul")
	def(convAttrs, convInteger, "ConvInteger")
	def(convAttrs, qlinearConv, "QLinearConv")
}

// eightBit checks that the inputs named (by position; "" skips one) are
// u8 or i8 where given, the types ONNX allows for quantized operands.
func eightBit(c *ctx, names ...string) {
	for i, what := range names {
		if t := c.opt(i); what != "" && t != nil && t.DType() != core.U8 && t.DType() != core.I8 {
			c.fail("%s (input %d) is %s, want uint8 or int8", what, i, t.DType())
		}
	}
}

// centred is x - zp in i32; zp may be absent.
func centred(x, zp *core.Tensor) *core.Tensor {
	x = x.Cast(core.I32)
	if zp == nil {
		return x
	}
	return call("sub", nil, x, zp.Cast(core.I32))
}

// matmulInteger multiplies in i32: ONNX's result type, exact for every
// sum of 8-bit products that fits it, and a matmul every backend has.
func matmulInteger(c *ctx) ([]*core.Tensor, error) {
	eightBit(c, "A", "B", "a_zero_point", "b_zero_point")
	a, b := c.in(0), c.in(1)
	za := c.opt(2)
	if za != nil && za.Rank() == 1 && a.Rank() >= 2 && za.Numel() > 1 {
		za = za.Reshape([]int{za.Numel(), 1}) // one zero point per row of a
	}
	if c.err != nil {
		return nil, nil
	}
	return one(call("matmul", nil, centred(a, za), centred(b, c.opt(3))))
}

// requantize maps an i32 accumulator onto the output's 8-bit grid:
// round_half_even(acc * scale + zp), saturated to out's range.
func requantize(acc, scale, zp *core.Tensor, out core.DType) *core.Tensor {
	lo, hi := intRange(out)
	y := call("mul", nil, acc.Cast(core.F32), scale.Cast(core.F32))
	y = call("round", nil, y)
	if zp != nil {
		y = call("add", nil, y, zp.Cast(core.F32))
	}
	return call("clamp", core.Attrs{"min": lo, "max": hi}, y).Cast(out)
}

// qlinearScale is a_scale * b_scale / y_scale, computed in the scales'
// own type (float16 scales round as the reference's float16 arithmetic
// does) before it meets the accumulator.
func qlinearScale(a, b, y *core.Tensor) *core.Tensor {
	return call("div", nil, call("mul", nil, a, b), y)
}

// requantizedType is the element type of a requantized output: the output zero
// point's, else the first operand's.
func requantizedType(c *ctx, zpInput int) core.DType {
	if zp := c.opt(zpInput); zp != nil {
		return zp.DType()
	}
	return c.in(0).DType()
}

func qlinearMatMul(c *ctx) ([]*core.Tensor, error) {
	eightBit(c, "a", "", "a_zero_point", "b", "", "b_zero_point", "", "y_zero_point")
	a, as, b, bs, ys := c.in(0), c.in(1), c.in(3), c.in(4), c.in(6)
	za, zb := c.opt(2), c.opt(5)
	if za != nil && za.Rank() == 1 && za.Numel() > 1 && a.Rank() >= 2 {
		za = za.Reshape([]int{za.Numel(), 1})
		as = as.Reshape([]int{as.Numel(), 1})
	}
	if c.err != nil {
		return nil, nil
	}
	acc := call("matmul", nil, centred(a, za), centred(b, zb))
	return one(requantize(acc, qlinearScale(as, bs, ys), c.opt(7), requantizedType(c, 7)))
}

// integerConv convolves two i32 tensors exactly with the registry's float
// convolution: each operand (a centred 8-bit value, |v| <= 255) splits
// into v = 16*high + low with low in [0, 16), so each of the four partial
// convolutions sums products of at most 16*16 and stays an exact f32
// integer below 2^24 for up to 65536 taps (a single f32 convolution of
// 8-bit values is exact only to about 258 taps).
func integerConv(c *ctx, x, w *core.Tensor) *core.Tensor {
	split := func(v *core.Tensor) (high, low *core.Tensor) {
		sixteen := like(v, 16)
		return call("floor_divide", nil, v, sixteen).Cast(core.F32), call("remainder", nil, v, sixteen).Cast(core.F32)
	}
	xh, xl := split(x)
	wh, wl := split(w)
	part := func(a, b *core.Tensor) *core.Tensor {
		y := convolve(c, a, b, nil)
		if y == nil {
			return nil
		}
		return call("round", nil, y).Cast(core.I32)
	}
	hh, hl, lh, ll := part(xh, wh), part(xh, wl), part(xl, wh), part(xl, wl)
	if c.err != nil {
		return nil
	}
	y := call("mul", nil, hh, like(hh, 256))
	y = call("add", nil, y, call("mul", nil, call("add", nil, hl, lh), like(hh, 16)))
	return call("add", nil, y, ll)
}

// perChannel shapes a per-output-channel parameter (1-D, one value per
// filter) to broadcast over [N, M, spatial...] or over W's [M, C, k...].
func perChannel(p *core.Tensor, rank int) *core.Tensor {
	if p == nil || p.Rank() != 1 || p.Numel() == 1 {
		return p
	}
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = p.Numel()
	return p.Reshape(shape)
}

// filterParam shapes a per-filter parameter to W's [M, C, k...].
func filterParam(p *core.Tensor, rank int) *core.Tensor {
	if p == nil || p.Rank() != 1 || p.Numel() == 1 {
		return p
	}
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = p.Numel()
	return p.Reshape(shape)
}

func convInteger(c *ctx) ([]*core.Tensor, error) {
	eightBit(c, "x", "w", "x_zero_point", "w_zero_point")
	x, w := c.in(0), c.in(1)
	if c.err != nil || w.Err() != nil {
		return nil, w.Err()
	}
	if zx := c.opt(2); zx != nil && zx.Numel() != 1 {
		c.fail("x_zero_point has shape %v, want a single value (per-tensor)", zx.Shape())
		return nil, nil
	}
	return oneOrFail(c, integerConv(c, centred(x, c.opt(2)), centred(w, filterParam(c.opt(3), w.Rank()))))
}

// qlinearConv is ConvInteger, plus the i32 bias, requantized with
// x_scale * w_scale / y_scale (w_scale per tensor or per output channel).
func qlinearConv(c *ctx) ([]*core.Tensor, error) {
	eightBit(c, "x", "", "x_zero_point", "w", "", "w_zero_point", "", "y_zero_point")
	x, xs, w, ws, ys := c.in(0), c.in(1), c.in(3), c.in(4), c.in(6)
	bias := c.opt(8)
	if bias != nil && c.inType(8) != pb.TensorProto_INT32 {
		c.fail("B (input 8) is %s, want int32", bias.DType())
	}
	if c.err != nil || w.Err() != nil {
		return nil, w.Err()
	}
	acc := integerConv(c, centred(x, c.opt(2)), centred(w, filterParam(c.opt(5), w.Rank())))
	if acc == nil {
		return nil, nil
	}
	if bias != nil {
		acc = call("add", nil, acc, perChannel(bias, acc.Rank()))
	}
	scale := qlinearScale(xs, perChannel(ws, acc.Rank()), ys)
	return one(requantize(acc, scale, c.opt(7), requantizedType(c, 7)))
}
