package onnx

import (
	"github.com/webtensor/webtensor/core"
)

// Elementwise operators: each is one registry op or a short composition of
// them, so that traced graphs fuse them on the GPU like hand-written code.

func call(name string, a core.Attrs, ins ...*core.Tensor) *core.Tensor {
	return core.Call1(name, a, ins...)
}

// like is a rank-0 tensor of value v with x's dtype and device.
func like(x *core.Tensor, v float64) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	return core.Scalar(v, x.DType(), x.Device())
}

func one(t *core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{t}, t.Err() }

// unary maps an operator to a registry op of one input.
func unary(op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) { return one(call(op, nil, c.in(0))) }
}

// binaryOp maps an operator to a registry op of two broadcast inputs.
func binaryOp(op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) { return one(call(op, nil, c.in(0), c.in(1))) }
}

// compose1 is an operator written as a function of its one input.
func compose1(f func(x *core.Tensor) *core.Tensor) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) { return one(f(c.in(0))) }
}

func init() {
	for onnxName, op := range map[string]string{
		"Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Reciprocal": "reciprocal",
		"Floor": "floor", "Ceil": "ceil", "Round": "round", "Sign": "sign", "Sin": "sin", "Cos": "cos",
		"Tan": "tan", "Tanh": "tanh", "Sigmoid": "sigmoid", "Relu": "relu", "Erf": "erf", "IsNaN": "isnan",
		"Not": "logical_not",
	} {
		def(nil, unary(op), onnxName)
	}
	for onnxName, op := range map[string]string{
		"Add": "add", "Sub": "sub", "Mul": "mul", "Equal": "eq", "Less": "lt", "Greater": "gt",
		"LessOrEqual": "le", "GreaterOrEqual": "ge", "And": "logical_and", "Or": "logical_or", "Xor": "logical_xor",
	} {
		def(nil, binaryOp(op), onnxName)
	}
	// Identity passes any value through: a tensor, a sequence or an optional.
	defValues(nil, func(c *ctx) ([]Value, error) {
		if v := c.value(0); v != nil {
			return []Value{v}, nil
		}
		c.in(0)
		return nil, nil
	}, "Identity")
	def(nil, divide, "Div")
	def([]string{"fmod"}, mod, "Mod")
	def(nil, pow, "Pow")
	def(nil, compose1(asin), "Asin")
	def(nil, compose1(acos), "Acos")
	def(nil, compose1(func(x *core.Tensor) *core.Tensor { return call("atan2", nil, x, like(x, 1)) }), "Atan")
	def(nil, compose1(sinh), "Sinh")
	def(nil, compose1(cosh), "Cosh")
	def(nil, compose1(asinh), "Asinh")
	def(nil, compose1(acosh), "Acosh")
	def(nil, compose1(atanh), "Atanh")
	def(nil, compose1(softsign), "Softsign")
	def(nil, compose1(func(x *core.Tensor) *core.Tensor { return call("softplus", nil, x) }), "Softplus")
	def(nil, compose1(mish), "Mish")
	def([]string{"alpha"}, func(c *ctx) ([]*core.Tensor, error) {
		return one(call("leaky_relu", core.Attrs{"negative_slope": c.attrFloat("alpha", 0.01)}, c.in(0)))
	}, "LeakyRelu")
	def([]string{"alpha"}, func(c *ctx) ([]*core.Tensor, error) {
		return one(call("elu", core.Attrs{"alpha": c.attrFloat("alpha", 1)}, c.in(0)))
	}, "Elu")
	def([]string{"alpha", "gamma"}, selu, "Selu")
	def([]string{"alpha"}, celu, "Celu")
	def([]string{"alpha", "beta"}, hardSigmoid, "HardSigmoid")
	def(nil, compose1(func(x *core.Tensor) *core.Tensor { return call("mul", nil, x, hardSig(x, 1.0/6, 0.5)) }), "HardSwish")
	def([]string{"alpha"}, thresholdedRelu, "ThresholdedRelu")
	def([]string{"bias", "lambd"}, shrink, "Shrink")
	def(nil, prelu, "PRelu")
	def([]string{"approximate"}, func(c *ctx) ([]*core.Tensor, error) {
		return one(call("gelu", core.Attrs{"approximate": c.attrString("approximate", "none")}, c.in(0)))
	}, "Gelu")
	def([]string{"alpha"}, func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		return one(call("mul", nil, x, call("sigmoid", nil, call("mul", nil, x, like(x, c.attrFloat("alpha", 1))))))
	}, "Swish")
	def([]string{"detect_negative", "detect_positive"}, isInf, "IsInf")
	def(nil, clip, "Clip")
	def(nil, variadic("maximum"), "Max")
	def(nil, variadic("minimum"), "Min")
	def(nil, variadic("add"), "Sum")
	def(nil, mean, "Mean")
	def(nil, func(c *ctx) ([]*core.Tensor, error) { return one(call("where", nil, c.in(0), c.in(1), c.in(2))) }, "Where")
	def([]string{"direction"}, bitShift, "BitShift")
}

// divide is true division for floats and, as ONNX (and C) define it for
// integers, division truncated toward zero: floor division corrected where
// the operands' signs differ and the division is inexact.
func divide(c *ctx) ([]*core.Tensor, error) {
	a, b := c.in(0), c.in(1)
	if a.DType().IsFloat() {
		return one(call("div", nil, a, b))
	}
	q := call("floor_divide", nil, a, b)
	if !a.DType().IsSigned() {
		return one(q)
	}
	r := call("remainder", nil, a, b)
	zero := like(a, 0)
	inexact := call("ne", nil, r, zero)
	signsDiffer := call("logical_xor", nil, call("lt", nil, a, zero), call("lt", nil, b, zero))
	fix := call("logical_and", nil, inexact, signsDiffer)
	return one(call("where", nil, fix, call("add", nil, q, like(q, 1)), q))
}

// mod is Python's % (sign of the divisor) when fmod is 0, and C's fmod
// (sign of the dividend) when it is 1: the remainder moved by one divisor
// where its sign disagrees with the dividend's.
func mod(c *ctx) ([]*core.Tensor, error) {
	a, b := c.in(0), c.in(1)
	r := call("remainder", nil, a, b)
	if c.attrInt("fmod", 0) == 0 {
		return one(r)
	}
	zero := like(r, 0)
	wrong := call("logical_and", nil, call("ne", nil, r, zero),
		call("logical_xor", nil, call("lt", nil, r, zero), call("lt", nil, a, zero)))
	return one(call("where", nil, wrong, call("sub", nil, r, b), r))
}

// pow keeps the base's dtype, as ONNX does, where the registry promotes.
func pow(c *ctx) ([]*core.Tensor, error) {
	a, b := c.in(0), c.in(1)
	y := call("pow", nil, a, b)
	if y.Err() == nil && y.DType() != a.DType() {
		y = y.Cast(a.DType())
	}
	return one(y)
}

func oneMinusSquare(x *core.Tensor) *core.Tensor {
	return call("sqrt", nil, call("sub", nil, like(x, 1), call("mul", nil, x, x)))
}

func asin(x *core.Tensor) *core.Tensor { return call("atan2", nil, x, oneMinusSquare(x)) }
func acos(x *core.Tensor) *core.Tensor { return call("atan2", nil, oneMinusSquare(x), x) }

// sinh through expm1 keeps its precision near zero.
func sinh(x *core.Tensor) *core.Tensor {
	return call("mul", nil, call("sub", nil, call("expm1", nil, x), call("expm1", nil, call("neg", nil, x))), like(x, 0.5))
}

func cosh(x *core.Tensor) *core.Tensor {
	return call("mul", nil, call("add", nil, call("exp", nil, x), call("exp", nil, call("neg", nil, x))), like(x, 0.5))
}

// asinh is odd: computing it on |x| avoids cancellation for negative x.
func asinh(x *core.Tensor) *core.Tensor {
	ax := call("abs", nil, x)
	r := call("log", nil, call("add", nil, ax, call("sqrt", nil, call("add", nil, call("mul", nil, ax, ax), like(x, 1)))))
	return call("mul", nil, call("sign", nil, x), r)
}

func acosh(x *core.Tensor) *core.Tensor {
	return call("log", nil, call("add", nil, x, call("sqrt", nil, call("sub", nil, call("mul", nil, x, x), like(x, 1)))))
}

func atanh(x *core.Tensor) *core.Tensor {
	return call("mul", nil, call("sub", nil, call("log1p", nil, x), call("log1p", nil, call("neg", nil, x))), like(x, 0.5))
}

func softsign(x *core.Tensor) *core.Tensor {
	return call("div", nil, x, call("add", nil, call("abs", nil, x), like(x, 1)))
}

func mish(x *core.Tensor) *core.Tensor {
	return call("mul", nil, x, call("tanh", nil, call("softplus", nil, x)))
}

func selu(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	alpha, gamma := c.attrFloat("alpha", 1.67326319217681884765625), c.attrFloat("gamma", 1.05070102214813232421875)
	return one(call("mul", nil, call("elu", core.Attrs{"alpha": alpha}, x), like(x, gamma)))
}

// celu(x) = alpha * elu(x / alpha) with elu's alpha 1.
func celu(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	alpha := c.attrFloat("alpha", 1)
	return one(call("mul", nil, call("elu", nil, call("div", nil, x, like(x, alpha))), like(x, alpha)))
}

func hardSig(x *core.Tensor, alpha, beta float64) *core.Tensor {
	y := call("add", nil, call("mul", nil, x, like(x, alpha)), like(x, beta))
	return call("clamp", core.Attrs{"min": 0.0, "max": 1.0}, y)
}

func hardSigmoid(c *ctx) ([]*core.Tensor, error) {
	return one(hardSig(c.in(0), c.attrFloat("alpha", 0.2), c.attrFloat("beta", 0.5)))
}

func thresholdedRelu(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	return one(call("where", nil, call("gt", nil, x, like(x, c.attrFloat("alpha", 1))), x, like(x, 0)))
}

func shrink(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	bias, lambd := c.attrFloat("bias", 0), c.attrFloat("lambd", 0.5)
	low := call("where", nil, call("lt", nil, x, like(x, -lambd)), call("add", nil, x, like(x, bias)), like(x, 0))
	return one(call("where", nil, call("gt", nil, x, like(x, lambd)), call("sub", nil, x, like(x, bias)), low))
}

func prelu(c *ctx) ([]*core.Tensor, error) {
	x, slope := c.in(0), c.in(1)
	return one(call("where", nil, call("lt", nil, x, like(x, 0)), call("mul", nil, x, slope), x))
}

func isInf(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	inf := call("isinf", nil, x)
	neg, pos := c.attrInt("detect_negative", 1) != 0, c.attrInt("detect_positive", 1) != 0
	switch {
	case neg && pos:
		return one(inf)
	case neg:
		return one(call("logical_and", nil, inf, call("lt", nil, x, like(x, 0))))
	case pos:
		return one(call("logical_and", nil, inf, call("gt", nil, x, like(x, 0))))
	}
	return one(call("logical_and", nil, inf, call("logical_not", nil, inf)))
}

// clip takes its bounds as tensors (maximum and minimum), so a traced
// graph keeps them as constants and the clip fuses.
func clip(c *ctx) ([]*core.Tensor, error) {
	y := c.in(0)
	if lo := c.opt(1); lo != nil {
		y = call("maximum", nil, y, lo.Cast(y.DType()))
	}
	if hi := c.opt(2); hi != nil {
		y = call("minimum", nil, y, hi.Cast(y.DType()))
	}
	return one(y)
}

// variadic folds a binary op over every input (Max, Min, Sum).
func variadic(op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		y := c.in(0)
		for i := 1; i < len(c.ins); i++ {
			y = call(op, nil, y, c.in(i))
		}
		return one(y)
	}
}

func mean(c *ctx) ([]*core.Tensor, error) {
	ys, err := variadic("add")(c)
	if err != nil {
		return nil, err
	}
	return one(call("div", nil, ys[0], like(ys[0], float64(len(c.ins)))))
}

// bitShift is the registry's bitwise shifts, whose rules are ONNX's: a
// right shift of a signed type fills with the sign bit, bits shifted past
// the width are discarded, and a count that is negative or at least the
// width leaves only what the sign extension gives (-1 for a right shift of
// a negative value, 0 otherwise). The narrow types shift in the dtype that
// holds them and their result is wrapped back into them (exec).
func bitShift(c *ctx) ([]*core.Tensor, error) {
	x, s := c.in(0), c.in(1)
	if !x.DType().IsInt() || s.DType() != x.DType() {
		c.fail("BitShift takes two tensors of one integer type, got %s and %s", x.DType(), s.DType())
		return nil, nil
	}
	switch dir := c.attrString("direction", ""); dir {
	case "LEFT":
		return one(call("bitwise_left_shift", nil, x, s))
	case "RIGHT":
		return one(call("bitwise_right_shift", nil, x, s))
	default:
		c.fail("direction %q is neither LEFT nor RIGHT", dir)
		return nil, nil
	}
}
