package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
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

// alongAxis makes a quantization parameter broadcast against x: a scalar
// as is, a 1-D one (per-axis) along axis, and a blocked one (block_size:
// the same rank as x, one value per block of block_size along axis)
// repeated over its block, the last block cut to x's length.
func alongAxis(c *ctx, p, x *core.Tensor) *core.Tensor {
	if p == nil || p.Rank() == 0 || (p.Rank() == 1 && p.Numel() == 1) {
		return p
	}
	ax := c.axis(c.attrInt("axis", 1), x.Rank())
	if block := int(c.attrInt("block_size", 0)); block != 0 {
		ps, xs := p.Shape(), x.Shape()
		ok := block > 0 && len(ps) == len(xs) && c.err == nil && (xs[ax]+block-1)/block == ps[ax]
		for i := range ps {
			ok = ok && (i == ax || ps[i] == xs[i])
		}
		if !ok {
			c.fail("blocked quantization: parameter shape %v does not give one value per block of %d along axis %d of shape %v",
				ps, block, ax, xs)
			return p
		}
		p = call("repeat_interleave", core.Attrs{"repeats": block, "axis": ax}, p)
		return call("slice", core.Attrs{"axis": ax, "start": 0, "stop": xs[ax]}, p)
	}
	if p.Rank() != 1 {
		c.fail("parameter shape %v is neither a scalar nor per-axis (1-D); blocked quantization needs block_size", p.Shape())
		return p
	}
	shape := make([]int, x.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[ax] = p.Numel()
	return p.Reshape(shape)
}

// quantType is the element type QuantizeLinear produces: the zero
// point's, else output_dtype, else uint8.
func quantType(c *ctx) elemType {
	out := elemType(pb.TensorProto_UINT8)
	if c.has("output_dtype") {
		out = elemType(c.attrInt("output_dtype", 0))
	}
	if c.opt(2) != nil {
		zp := c.inType(2)
		if c.has("output_dtype") && zp != out {
			c.fail("output_dtype %s and the zero point's type %s differ", typeName(out), typeName(zp))
		}
		out = zp
	}
	return out
}

func quantizeLinear(c *ctx) ([]*core.Tensor, error) {
	x, scale, zp := c.in(0), c.in(1), c.opt(2)
	out := quantType(c)
	scale, zp = alongAxis(c, scale, x), alongAxis(c, zp, x)
	work := core.F32
	if c.has("precision") {
		var err error
		if work, err = dtypeOf(int32(c.attrInt("precision", 0))); err != nil || !work.IsFloat() {
			c.fail("precision %s is not a float type webtensor has", typeName(elemType(c.attrInt("precision", 0))))
		}
	}
	if c.err != nil {
		return nil, nil
	}
	c.setType(0, out)
	q := call("div", nil, x.Cast(work), scale.Cast(work)).Cast(core.F32)
	if nt := narrowOf(out); nt != nil && nt.float != nil {
		// The float types take no rounding to integers: x / scale (plus a
		// zero point, which ONNX requires to be 0 for float8) is cast,
		// saturating unless saturate is 0.
		if zp != nil {
			q = call("add", nil, q, zp.Cast(core.F32))
		}
		return oneErr(castTo(q, out, c.attrInt("saturate", 1) != 0, "up"))
	}
	dt, err := heldType(int32(out))
	if err != nil {
		return nil, err
	}
	if dt.IsFloat() || dt == core.Bool {
		c.fail("quantizing to %s is not supported (integer, float8 and float4 types only)", typeName(out))
		return nil, nil
	}
	lo, hi := intRange(dt)
	if nt := narrowOf(out); nt != nil {
		lo, hi = float64(nt.lo), float64(nt.hi)
	}
	return one(quantizeTo(q, zp, lo, hi, dt))
}

// quantize rounds x / scale half to even, adds the zero point and
// saturates to out's range.
func quantize(x, scale, zp *core.Tensor, out core.DType) *core.Tensor {
	lo, hi := intRange(out)
	return quantizeTo(call("div", nil, x.Cast(core.F32), scale.Cast(core.F32)), zp, lo, hi, out)
}

func quantizeTo(q, zp *core.Tensor, lo, hi float64, out core.DType) *core.Tensor {
	q = call("round", nil, q)
	if zp != nil {
		q = call("add", nil, q, zp.Cast(core.F32))
	}
	return call("clamp", core.Attrs{"min": lo, "max": hi}, q).Cast(out)
}

func oneErr(t *core.Tensor, err error) ([]*core.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return one(t)
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
	c.setType(0, naturalType(out))
	// f32 holds every value of the 8- and 16-bit types (and the narrow
	// ones) exactly; 32- and 64-bit integers need f64.
	work := core.F32
	switch c.inType(0) {
	case pb.TensorProto_INT32, pb.TensorProto_UINT32, pb.TensorProto_INT64, pb.TensorProto_UINT64:
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
