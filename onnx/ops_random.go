package onnx

import (
	"github.com/webtensor/webtensor/core"
)

// Random draws come from webtensor's Philox stream, seeded by the node's
// seed attribute when it has one: the distributions are ONNX's, the
// values are not NumPy's (no runtime's are), so the node tests of these
// operators cannot pass and are listed as failing for that reason.

var randomAttrs = []string{"dtype", "seed", "shape", "low", "high", "mean", "scale"}

func init() {
	def(randomAttrs, randomOp(false, "rand"), "RandomUniform")
	def(randomAttrs, randomOp(false, "randn"), "RandomNormal")
	def(randomAttrs, randomOp(true, "rand"), "RandomUniformLike")
	def(randomAttrs, randomOp(true, "randn"), "RandomNormalLike")
	def([]string{"dtype", "seed"}, bernoulli, "Bernoulli")
	def([]string{"interleaved", "num_heads", "rotary_embedding_dim"}, rotaryEmbedding, "RotaryEmbedding")
}

func seedAttrs(c *ctx, a core.Attrs) core.Attrs {
	if c.has("seed") {
		a["seed"] = int(c.attrFloat("seed", 0))
	}
	return a
}

// randomOp draws uniform values scaled to [low, high) or normal values
// scaled by scale around mean, with the shape attribute or, for the Like
// forms, the input's shape.
func randomOp(likeInput bool, op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		dt := core.F32
		var shape core.Shape
		if likeInput {
			x := c.in(0)
			dt, shape = x.DType(), x.Shape()
		} else {
			dims, _ := c.attrInts("shape")
			var err error
			if shape, err = checkDims(dims); err != nil {
				return nil, err
			}
		}
		if c.has("dtype") {
			var err error
			if dt, err = dtypeOf(int32(c.attrInt("dtype", 1))); err != nil {
				return nil, err
			}
		}
		if !dt.IsFloat() {
			c.fail("dtype %s is not a floating-point type", dt)
			return nil, nil
		}
		y := call(op, seedAttrs(c, core.Attrs{"shape": []int(shape), "dtype": dt, "device": c.m.dev.String()}))
		lo, span := c.attrFloat("mean", 0), c.attrFloat("scale", 1)
		if op == "rand" {
			lo, span = c.attrFloat("low", 0), c.attrFloat("high", 1)-c.attrFloat("low", 0)
		}
		return one(call("add", nil, call("mul", nil, y, like(y, span)), like(y, lo)))
	}
}

func bernoulli(c *ctx) ([]*core.Tensor, error) {
	p := c.in(0)
	y := call("bernoulli", seedAttrs(c, core.Attrs{}), p)
	if c.has("dtype") {
		dt, err := dtypeOf(int32(c.attrInt("dtype", 1)))
		if err != nil {
			return nil, err
		}
		y = y.Cast(dt)
	}
	return one(y)
}

// rotaryEmbedding rotates pairs of the first rotary_embedding_dim features
// (halves, or neighbours when interleaved) by the cached angles of each
// position, as ONNX's reference does.
func rotaryEmbedding(c *ctx) ([]*core.Tensor, error) {
	x, cos, sin, pos := c.in(0), c.in(1), c.in(2), c.opt(3)
	if x.Err() != nil {
		return nil, x.Err()
	}
	orig := x.Shape()
	switch len(orig) {
	case 4:
		x = call("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, x)
	case 3:
		heads := int(c.attrInt("num_heads", 0))
		if heads <= 0 || orig[2]%heads != 0 {
			c.fail("3-D input %v needs num_heads dividing its last dim", orig)
			return nil, nil
		}
		x = x.Reshape([]int{orig[0], orig[1], heads, orig[2] / heads})
	default:
		c.fail("input shape %v is not 3-D or 4-D", orig)
		return nil, nil
	}
	head := x.Shape()[3]
	dim := int(c.attrInt("rotary_embedding_dim", 0))
	if dim == 0 {
		dim = head
	}
	if pos != nil {
		cs := cos.Shape()
		flat := pos.Reshape([]int{pos.Numel()})
		cos = call("index_select", nil, cos, flat).Reshape(append(pos.Shape(), cs[len(cs)-1]))
		sin = call("index_select", nil, sin, flat).Reshape(append(pos.Shape(), cs[len(cs)-1]))
	}
	cos, sin = unsqueezeAt(cos, 2), unsqueezeAt(sin, 2)
	rot := call("slice", core.Attrs{"axis": 3, "stop": dim}, x)
	rest := call("slice", core.Attrs{"axis": 3, "start": dim}, x)
	interleaved := c.attrInt("interleaved", 0) != 0
	var x1, x2 *core.Tensor
	if interleaved {
		x1 = call("slice", core.Attrs{"axis": 3, "step": 2}, rot)
		x2 = call("slice", core.Attrs{"axis": 3, "start": 1, "step": 2}, rot)
	} else {
		x1 = call("slice", core.Attrs{"axis": 3, "stop": dim / 2}, rot)
		x2 = call("slice", core.Attrs{"axis": 3, "start": dim / 2}, rot)
	}
	real := call("sub", nil, call("mul", nil, cos, x1), call("mul", nil, sin, x2))
	imag := call("add", nil, call("mul", nil, sin, x1), call("mul", nil, cos, x2))
	if interleaved {
		rot = call("stack", core.Attrs{"axis": -1}, real, imag).Reshape(rot.Shape())
	} else {
		rot = call("concat", core.Attrs{"axis": -1}, real, imag)
	}
	y := call("concat", core.Attrs{"axis": -1}, rot, rest)
	if len(orig) == 3 {
		return one(y.Reshape(orig))
	}
	return one(call("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, y))
}
