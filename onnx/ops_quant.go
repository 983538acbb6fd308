package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Linear quantization, written with elementwise ops so per-axis scales
// broadcast: q = saturate(round_half_even(x / scale) + zero_point) and
// x = (q - zero_point) * scale.

func init() {
	def([]string{"axis", "block_size", "output_dtype", "saturate", "precision"}, quantizeLinear, "QuantizeLinear")
	def([]string{"axis", "block_size", "output_dtype"}, dequantizeLinear, "DequantizeLinear")
	def(nil, dynamicQuantizeLinear, "DynamicQuantizeLinear")
}

// intRange is the saturation range of an integer dtype.
func intRange(d core.DType) (lo, hi float64) {
	switch d {
	case core.U8:
		return 0, math.MaxUint8
	case core.I8:
		return math.MinInt8, math.MaxInt8
	case core.I16:
		return math.MinInt16, math.MaxInt16
	case core.U32:
		return 0, math.MaxUint32
	case core.I32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// alongAxis reshapes a per-axis parameter (1-D) to broadcast on axis of x.
func alongAxis(c *ctx, p, x *core.Tensor) *core.Tensor {
	if p == nil || p.Rank() == 0 || (p.Rank() == 1 && p.Numel() == 1) {
		return p
	}
	if c.attrInt("block_size", 0) != 0 || p.Rank() != 1 {
		c.fail("blocked quantization (parameter shape %v) is not supported", p.Shape())
		return p
	}
	ax := c.axis(c.attrInt("axis", 1), x.Rank())
	shape := make([]int, x.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[ax] = p.Numel()
	return p.Reshape(shape)
}

func quantizeLinear(c *ctx) ([]*core.Tensor, error) {
	x, scale, zp := c.in(0), c.in(1), c.opt(2)
	out := core.U8
	if zp != nil {
		out = zp.DType()
	}
	if c.has("output_dtype") {
		var err error
		if out, err = dtypeOf(int32(c.attrInt("output_dtype", 0))); err != nil {
			return nil, err
		}
	}
	if out.IsFloat() || out == core.Bool {
		c.fail("quantizing to %s is not supported (integer types only)", out)
		return nil, nil
	}
	scale, zp = alongAxis(c, scale, x), alongAxis(c, zp, x)
	if c.err != nil {
		return nil, nil
	}
	return one(quantize(x, scale, zp, out))
}

func quantize(x, scale, zp *core.Tensor, out core.DType) *core.Tensor {
	xf := x.Cast(core.F32)
	q := call("round", nil, call("div", nil, xf, scale.Cast(core.F32)))
	if zp != nil {
		q = call("add", nil, q, zp.Cast(core.F32))
	}
	lo, hi := intRange(out)
	return call("clamp", core.Attrs{"min": lo, "max": hi}, q).Cast(out)
}

func dequantizeLinear(c *ctx) ([]*core.Tensor, error) {
	x, scale, zp := c.in(0), c.in(1), c.opt(2)
	scale, zp = alongAxis(c, scale, x), alongAxis(c, zp, x)
	if c.err != nil || scale.Err() != nil {
		return nil, scale.Err()
	}
	out := scale.DType()
	if c.has("output_dtype") {
		var err error
		if out, err = dtypeOf(int32(c.attrInt("output_dtype", 0))); err != nil {
			return nil, err
		}
	}
	// f32 holds every i8, u8 and i16 exactly; wider types need f64.
	work := core.F32
	if x.DType() == core.I32 || x.DType() == core.U32 || x.DType() == core.I64 {
		work = core.F64
	}
	d := x.Cast(work)
	if zp != nil {
		d = call("sub", nil, d, zp.Cast(work))
	}
	return one(call("mul", nil, d, scale.Cast(work)).Cast(out))
}

// dynamicQuantizeLinear picks the u8 scale and zero point that map
// [min(x, 0), max(x, 0)] onto [0, 255].
func dynamicQuantizeLinear(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	zero := like(x, 0)
	lo := call("minimum", nil, call("min", nil, x), zero)
	hi := call("maximum", nil, call("max", nil, x), zero)
	scale := call("div", nil, call("sub", nil, hi, lo), like(x, 255))
	zp := call("clamp", core.Attrs{"min": 0.0, "max": 255.0}, call("round", nil, call("div", nil, call("neg", nil, lo), scale)))
	y := quantize(x, scale, zp, core.U8)
	return []*core.Tensor{y, scale, zp.Cast(core.U8)}, y.Err()
}
