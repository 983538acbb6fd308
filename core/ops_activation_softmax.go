package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// Activations over an axis (softmax, log_softmax).
// The softmax backward rules are internal ops with fast kernels; they carry
// backward rules of their own, written with registry ops, so second-order
// gradients (gradient penalties, meta-learning) still work.

// softmaxAttrs is the one attribute of the softmax family.
func softmaxAttrs() []AttrSpec {
	return []AttrSpec{{Name: "axis", Kind: AttrInt, Default: -1, Doc: "axis the distribution is taken over"}}
}

func inferSoftmax(in []Meta, a Attrs) ([]Meta, error) {
	if _, err := oprules.SoftmaxAxis(in[0].Shape, a); err != nil {
		return nil, err
	}
	return InferSame(in, a)
}

// inferSoftmaxBackward checks that the output and its gradient agree.
func inferSoftmaxBackward(in []Meta, a Attrs) ([]Meta, error) {
	if !in[0].Shape.Equal(in[1].Shape) || in[0].DType != in[1].DType {
		return nil, fmt.Errorf("output %v %s and gradient %v %s differ", in[0].Shape, in[0].DType, in[1].Shape, in[1].DType)
	}
	return inferSoftmax(in, a)
}

// softmaxAxisSum sums t over the softmax axis, keeping it as size 1.
func softmaxAxisSum(t *Tensor, a Attrs) *Tensor {
	if t.Rank() == 0 {
		return t
	}
	ax, _ := oprules.SoftmaxAxis(t.shape, a)
	return call1("sum", Attrs{"axes": []int{ax}, "keepdim": true}, t)
}

func softmaxSamples() []Sample {
	return []Sample{
		{Name: "rows", Inputs: []Gen{G(F32, 3, 5)}},
		{Name: "axis0", Inputs: []Gen{G(F32, 4, 3)}, Attrs: Attrs{"axis": 0}},
		{Name: "middle_strided", Inputs: []Gen{G(F32, 2, 3, 4).AsStrided()}, Attrs: Attrs{"axis": 1}},
		{Name: "f64", Inputs: []Gen{G(F64, 2, 7)}},
		{Name: "f16", Inputs: []Gen{G(F16, 3, 4)}},
		{Name: "bf16_size1", Inputs: []Gen{G(BF16, 3, 1)}},
		{Name: "scalar", Inputs: []Gen{G(F32)}},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 4)}},
		{Name: "special", Inputs: []Gen{G(F32, 4, 6).WithKind("special")}, NoGrad: true},
	}
}

func softmaxBackwardSamples() []Sample {
	return []Sample{
		{Name: "rows", Inputs: []Gen{GU(F32, 0.05, 1, 3, 5), G(F32, 3, 5)}},
		{Name: "axis0_f64", Inputs: []Gen{GU(F64, -3, -0.1, 4, 3), G(F64, 4, 3)}, Attrs: Attrs{"axis": 0}},
		{Name: "strided", Inputs: []Gen{GU(F32, 0.05, 1, 4, 3).AsStrided(), G(F32, 4, 3)}},
	}
}

func init() {
	MustRegister(
		&OpDef{
			Name: "softmax", Category: "activation", Doc: "Softmax along axis: exp(x - max) / sum(exp(x - max)).",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}}, Attrs: softmaxAttrs(), Infer: inferSoftmax,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				return []*Tensor{call1("_softmax_backward", g.Attrs, g.Outputs[0], g.Grads[0])}, nil
			},
			Samples: softmaxSamples(),
		},
		&OpDef{
			Name: "log_softmax", Category: "activation", Doc: "Log of softmax along axis, computed stably as x - max - log(sum(exp(x - max))).",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}}, Attrs: softmaxAttrs(), Infer: inferSoftmax,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				return []*Tensor{call1("_log_softmax_backward", g.Attrs, g.Outputs[0], g.Grads[0])}, nil
			},
			Samples: softmaxSamples(),
		},
		&OpDef{
			Name: "_softmax_backward", Category: "activation", Internal: true,
			Doc:    "Gradient of softmax from its output y and upstream g: y * (g - sum(g * y, axis)).",
			Inputs: []InputSpec{{Name: "y", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}}, Attrs: softmaxAttrs(),
			Infer: inferSoftmaxBackward,
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				// out = y*(g - s) with s = sum(g*y): the rule is linear in g
				// (and equals itself with g replaced by h), bilinear in y.
				y, g, h := c.Inputs[0], c.Inputs[1], c.Grads[0]
				res := make([]*Tensor, 2)
				if c.Need[0] {
					s := softmaxAxisSum(call1("mul", nil, g, y), c.Attrs)
					hy := softmaxAxisSum(call1("mul", nil, h, y), c.Attrs)
					res[0] = call1("sub", nil, call1("mul", nil, h, call1("sub", nil, g, s)), call1("mul", nil, g, hy))
				}
				if c.Need[1] {
					res[1] = call1("_softmax_backward", c.Attrs, y, h)
				}
				return res, nil
			},
			Samples: softmaxBackwardSamples(),
		},
		&OpDef{
			Name: "_log_softmax_backward", Category: "activation", Internal: true,
			Doc:    "Gradient of log_softmax from its output y and upstream g: g - exp(y) * sum(g, axis).",
			Inputs: []InputSpec{{Name: "y", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}}, Attrs: softmaxAttrs(),
			Infer: inferSoftmaxBackward,
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				// out = g - exp(y)*S with S = sum(g): dg = h - sum(h*exp(y)),
				// dy = -h*exp(y)*S.
				y, g, h := c.Inputs[0], c.Inputs[1], c.Grads[0]
				p := call1("exp", nil, y)
				res := make([]*Tensor, 2)
				if c.Need[0] {
					hp := call1("mul", nil, h, p)
					res[0] = call1("neg", nil, call1("mul", nil, hp, softmaxAxisSum(g, c.Attrs)))
				}
				if c.Need[1] {
					res[1] = call1("sub", nil, h, softmaxAxisSum(call1("mul", nil, h, p), c.Attrs))
				}
				return res, nil
			},
			Samples: softmaxBackwardSamples(),
		},
	)
}
