package core

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core/oprules"
)

// Loss functions with torch.nn.functional's semantics: "reduction" is mean,
// sum or none; class dimension 1 (0 for an unbatched [C] input); weights
// per class; ignore_index for class targets. Backward rules are internal
// ops whose kernels apply the closed-form gradients.

func lossReductionAttr() AttrSpec {
	return AttrSpec{Name: "reduction", Kind: AttrString, Default: "mean", Enum: []string{"mean", "sum", "none"},
		Doc: "mean, sum or none (per-element losses)"}
}

func lossIgnoreIndexAttr() AttrSpec {
	return AttrSpec{Name: "ignore_index", Kind: AttrInt, Default: -100, Doc: "class target that contributes no loss and no gradient"}
}

// lossOutput is the loss shape: per element for reduction none, else a scalar.
func lossOutput(perElement Shape, d DType, a Attrs) []Meta {
	if a.String("reduction") == "none" {
		return []Meta{{Shape: perElement.Clone(), DType: d}}
	}
	return []Meta{{Shape: Shape{}, DType: d}}
}

// classRowShape is x without its class dim.
func classRowShape(x Shape) Shape {
	if len(x) == 1 {
		return Shape{}
	}
	return append(x[:1:1].Clone(), x[2:]...)
}

// checkClassTargets validates logits or log-probabilities against class
// targets (integers of the row shape) and an optional weight [C].
func checkClassTargets(x, target, weight Meta, allowProbs bool) error {
	if len(x.Shape) == 0 {
		return fmt.Errorf("input must have a class dim ([C] or [N, C, ...]), got a scalar")
	}
	rows := classRowShape(x.Shape)
	switch {
	case target.DType.IsInt():
		if !target.Shape.Equal(rows) {
			return fmt.Errorf("class targets have shape %v, want %v for input %v", target.Shape, rows, x.Shape)
		}
	case allowProbs && target.DType.IsFloat():
		if !target.Shape.Equal(x.Shape) || target.DType != x.DType {
			return fmt.Errorf("probability targets %v %s must match input %v %s", target.Shape, target.DType, x.Shape, x.DType)
		}
	case allowProbs:
		return fmt.Errorf("targets must be integer class indices or float probabilities, got %s", target.DType)
	default:
		return fmt.Errorf("targets must be integer class indices, got %s", target.DType)
	}
	_, c, _ := oprules.ClassLayout(x.Shape)
	return normCheckParam("weight", weight, Shape{c}, x.DType)
}

func inferCrossEntropy(in []Meta, a Attrs) ([]Meta, error) {
	if err := checkClassTargets(in[0], in[1], in[2], true); err != nil {
		return nil, err
	}
	if ls := a.Float("label_smoothing"); !(ls >= 0 && ls <= 1) {
		return nil, fmt.Errorf("label_smoothing must be in [0, 1], got %v", ls)
	}
	return lossOutput(classRowShape(in[0].Shape), in[0].DType, a), nil
}

func inferNLL(in []Meta, a Attrs) ([]Meta, error) {
	if err := checkClassTargets(in[0], in[1], in[2], false); err != nil {
		return nil, err
	}
	return lossOutput(classRowShape(in[0].Shape), in[0].DType, a), nil
}

// inferClassLossBackward: input, target, g, weight? give d(input) and, for
// probability targets, d(target).
func inferClassLossBackward(fwd func([]Meta, Attrs) ([]Meta, error)) func([]Meta, Attrs) ([]Meta, error) {
	return func(in []Meta, a Attrs) ([]Meta, error) {
		out, err := fwd([]Meta{in[0], in[1], in[3]}, a)
		if err != nil {
			return nil, err
		}
		if !in[2].Shape.Equal(out[0].Shape) || in[2].DType != out[0].DType {
			return nil, fmt.Errorf("gradient %v %s does not match the loss %v %s", in[2].Shape, in[2].DType, out[0].Shape, out[0].DType)
		}
		grads := []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}
		if in[1].DType.IsFloat() {
			grads = append(grads, Meta{Shape: in[0].Shape.Clone(), DType: in[0].DType})
		}
		return grads, nil
	}
}

// inferPointwiseLoss broadcasts input and target (promoted already).
func inferPointwiseLoss(in []Meta, a Attrs) ([]Meta, error) {
	s, err := BroadcastShapes(in[0].Shape, in[1].Shape)
	if err != nil {
		return nil, err
	}
	if a.Float("beta") < 0 {
		return nil, fmt.Errorf("beta must be non-negative, got %v", a.Float("beta"))
	}
	return lossOutput(s, in[0].DType, a), nil
}

func inferPointwiseLossBackward(in []Meta, a Attrs) ([]Meta, error) {
	if in[1].DType != in[0].DType {
		return nil, fmt.Errorf("input dtype %s differs from target dtype %s", in[0].DType, in[1].DType)
	}
	out, err := inferPointwiseLoss(in, a)
	if err != nil {
		return nil, err
	}
	if !in[2].Shape.Equal(out[0].Shape) || in[2].DType != out[0].DType {
		return nil, fmt.Errorf("gradient %v %s does not match the loss %v %s", in[2].Shape, in[2].DType, out[0].Shape, out[0].DType)
	}
	s, _ := BroadcastShapes(in[0].Shape, in[1].Shape)
	return []Meta{{Shape: s, DType: in[0].DType}, {Shape: s.Clone(), DType: in[0].DType}}, nil
}

// inferBCEWithLogits: targets match the input; weight and pos_weight
// broadcast to it.
func inferBCEWithLogits(in []Meta, a Attrs) ([]Meta, error) {
	x, t := in[0], in[1]
	if !t.Shape.Equal(x.Shape) || t.DType != x.DType {
		return nil, fmt.Errorf("targets %v %s must match input %v %s", t.Shape, t.DType, x.Shape, x.DType)
	}
	for i, name := range []string{"weight", "pos_weight"} {
		m := in[2+i]
		if m.DType == Invalid {
			continue
		}
		if m.DType != x.DType {
			return nil, fmt.Errorf("%s has dtype %s, input has %s", name, m.DType, x.DType)
		}
		if b, err := BroadcastShapes(m.Shape, x.Shape); err != nil || !b.Equal(x.Shape) {
			return nil, fmt.Errorf("%s of shape %v does not broadcast to input shape %v", name, m.Shape, x.Shape)
		}
	}
	return lossOutput(x.Shape, x.DType, a), nil
}

func inferBCEWithLogitsBackward(in []Meta, a Attrs) ([]Meta, error) {
	out, err := inferBCEWithLogits([]Meta{in[0], in[1], in[3], in[4]}, a)
	if err != nil {
		return nil, err
	}
	if !in[2].Shape.Equal(out[0].Shape) || in[2].DType != out[0].DType {
		return nil, fmt.Errorf("gradient %v %s does not match the loss %v %s", in[2].Shape, in[2].DType, out[0].Shape, out[0].DType)
	}
	d := in[0].DType
	return []Meta{{Shape: in[0].Shape.Clone(), DType: d}, {Shape: in[0].Shape.Clone(), DType: d}}, nil
}

// lossBackward runs a loss's backward op on (input, target, g, rest...)
// and maps its outputs onto the inputs: d(input), d(target), nothing else.
func lossBackward(op string) func(*GradCtx) ([]*Tensor, error) {
	return func(c *GradCtx) ([]*Tensor, error) {
		ins := append([]*Tensor{c.Inputs[0], c.Inputs[1], c.Grads[0]}, c.Inputs[2:]...)
		outs, err := Call(op, ins, c.Attrs)
		if err != nil {
			return nil, err
		}
		grads := make([]*Tensor, len(c.Inputs))
		copy(grads, outs)
		return grads, nil
	}
}

var classTargetTypes = append(slices.Clone(floatsOnly), intIndex...)

func classLossInputs(probs bool) []InputSpec {
	targets := intIndex
	if probs {
		targets = classTargetTypes
	}
	return []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "target", DTypes: targets},
		{Name: "weight", DTypes: floatsOnly, Optional: true, NoGrad: true}}
}

func crossEntropyAttrs() []AttrSpec {
	return []AttrSpec{lossReductionAttr(), lossIgnoreIndexAttr(),
		{Name: "label_smoothing", Kind: AttrFloat, Default: 0.0, Doc: "mix the target with the uniform distribution by this amount"}}
}

func pointwiseLossDef(name, doc string, attrs []AttrSpec, samples []Sample) *OpDef {
	return &OpDef{
		Name: name, Category: "loss", Doc: doc,
		Inputs:  []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "target", DTypes: floatsOnly}},
		Attrs:   append([]AttrSpec{lossReductionAttr()}, attrs...),
		Promote: true, Infer: inferPointwiseLoss,
		Backward: func(c *GradCtx) ([]*Tensor, error) {
			a := c.Attrs.Clone()
			a["loss"] = name
			return Call("_pointwise_loss_backward", []*Tensor{c.Inputs[0], c.Inputs[1], c.Grads[0]}, a)
		},
		Samples: samples,
	}
}

func pointwiseLossSamples(extra ...Sample) []Sample {
	return append([]Sample{
		{Name: "mean", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}},
		{Name: "sum_strided", Inputs: []Gen{G(F32, 4, 3).AsStrided(), G(F32, 4, 3)}, Attrs: Attrs{"reduction": "sum"}},
		{Name: "none_broadcast", Inputs: []Gen{G(F32, 2, 3), G(F32, 3)}, Attrs: Attrs{"reduction": "none"}},
		{Name: "f64", Inputs: []Gen{G(F64, 5), G(F64, 5)}},
		{Name: "f16", Inputs: []Gen{G(F16, 2, 4), G(F16, 2, 4)}},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 0, 3)}, NoGrad: true},
		{Name: "special", Inputs: []Gen{G(F32, 8).WithKind("special"), G(F32, 8)}, Attrs: Attrs{"reduction": "none"}, NoGrad: true},
	}, extra...)
}

func init() {
	MustRegister(
		&OpDef{
			Name: "cross_entropy", Category: "loss",
			Doc:    "Cross entropy of logits [N, C, ...] (or [C]) with class-index or class-probability targets; optional class weights and label smoothing.",
			Inputs: classLossInputs(true), Attrs: crossEntropyAttrs(),
			Infer: inferCrossEntropy, Backward: lossBackward("_cross_entropy_backward"),
			Samples: []Sample{
				{Name: "classes_strided", Inputs: []Gen{G(F32, 4, 5).AsStrided(), GI(I64, 0, 5, 4)}},
				{Name: "sum_weight", Inputs: []Gen{G(F32, 3, 4), GI(I64, 0, 4, 3), nnPositive(F32, 4)}, Attrs: Attrs{"reduction": "sum"}},
				{Name: "none_ignore_spatial", Inputs: []Gen{G(F32, 2, 3, 4), GI(I64, 0, 4, 2, 4)}, Attrs: Attrs{"reduction": "none", "ignore_index": 3}},
				{Name: "smoothing_weight_ignore", Inputs: []Gen{G(F32, 6, 4), GI(I32, 0, 4, 6), nnPositive(F32, 4)}, Attrs: Attrs{"label_smoothing": 0.1, "ignore_index": 2}},
				{Name: "probs_smoothing", Inputs: []Gen{G(F32, 3, 4), GU(F32, 0, 1, 3, 4)}, Attrs: Attrs{"label_smoothing": 0.2}},
				{Name: "probs_spatial_weight_f64", Inputs: []Gen{G(F64, 2, 3, 2), GU(F64, 0, 1, 2, 3, 2), nnPositive(F64, 3)}},
				{Name: "unbatched", Inputs: []Gen{G(F32, 5), GI(I64, 0, 5)}},
				{Name: "f16", Inputs: []Gen{G(F16, 4, 6), GI(I64, 0, 6, 4)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3), GI(I64, 0, 3, 0)}, NoGrad: true},
			},
		},
		&OpDef{
			Name: "_cross_entropy_backward", Category: "loss", Internal: true,
			Doc:    "Gradients of cross_entropy: d(input) and, for probability targets, d(target).",
			Inputs: append(classLossInputs(true)[:2:2], InputSpec{Name: "g", DTypes: floatsOnly}, classLossInputs(true)[2]),
			Attrs:  crossEntropyAttrs(), Infer: inferClassLossBackward(inferCrossEntropy),
			Samples: []Sample{
				{Name: "smoothing_weight", Inputs: []Gen{G(F32, 4, 3), GI(I64, 0, 3, 4), G(F32), nnPositive(F32, 3)}, Attrs: Attrs{"label_smoothing": 0.1, "ignore_index": 1}},
				{Name: "probs_none_f64", Inputs: []Gen{G(F64, 2, 3, 2), GU(F64, 0, 1, 2, 3, 2), G(F64, 2, 2)}, Attrs: Attrs{"reduction": "none"}},
			},
		},
		&OpDef{
			Name: "nll_loss", Category: "loss",
			Doc:    "Negative log-likelihood of log-probabilities [N, C, ...] (or [C]) at class-index targets, with optional class weights.",
			Inputs: classLossInputs(false), Attrs: []AttrSpec{lossReductionAttr(), lossIgnoreIndexAttr()},
			Infer: inferNLL, Backward: lossBackward("_nll_loss_backward"),
			Samples: []Sample{
				{Name: "mean", Inputs: []Gen{G(F32, 4, 5), GI(I64, 0, 5, 4)}},
				{Name: "weight_ignore", Inputs: []Gen{G(F32, 6, 3), GI(I64, 0, 3, 6), nnPositive(F32, 3)}, Attrs: Attrs{"ignore_index": 1}},
				{Name: "none_spatial", Inputs: []Gen{G(F32, 2, 3, 4), GI(I64, 0, 3, 2, 4)}, Attrs: Attrs{"reduction": "none"}},
				{Name: "sum_strided_i32", Inputs: []Gen{G(F32, 4, 3).AsStrided(), GI(I32, 0, 3, 4)}, Attrs: Attrs{"reduction": "sum"}},
				{Name: "unbatched_f64", Inputs: []Gen{G(F64, 5), GI(I64, 0, 5)}},
				{Name: "f16", Inputs: []Gen{G(F16, 3, 4), GI(I64, 0, 4, 3)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3), GI(I64, 0, 3, 0)}, NoGrad: true},
			},
		},
		&OpDef{
			Name: "_nll_loss_backward", Category: "loss", Internal: true, Doc: "Gradient of nll_loss with respect to its input.",
			Inputs: append(classLossInputs(false)[:2:2], InputSpec{Name: "g", DTypes: floatsOnly}, classLossInputs(false)[2]),
			Attrs:  []AttrSpec{lossReductionAttr(), lossIgnoreIndexAttr()}, Infer: inferClassLossBackward(inferNLL),
			Samples: []Sample{
				{Name: "weight", Inputs: []Gen{G(F32, 4, 3), GI(I64, 0, 3, 4), G(F32), nnPositive(F32, 3)}},
				{Name: "none_f64", Inputs: []Gen{G(F64, 2, 3, 2), GI(I64, 0, 3, 2, 2), G(F64, 2, 2)}, Attrs: Attrs{"reduction": "none", "ignore_index": 0}},
			},
		},
		pointwiseLossDef("mse_loss", "Squared error (input - target)^2, with broadcasting.", nil, pointwiseLossSamples()),
		pointwiseLossDef("l1_loss", "Absolute error |input - target|, with broadcasting.", nil, pointwiseLossSamples()),
		pointwiseLossDef("smooth_l1_loss", "Huber-style loss: 0.5*d^2/beta where |d| < beta, else |d| - 0.5*beta, with d = input - target.",
			[]AttrSpec{{Name: "beta", Kind: AttrFloat, Default: 1.0, Doc: "where the loss changes from quadratic to linear; 0 gives l1_loss"}},
			pointwiseLossSamples(
				Sample{Name: "beta_small", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}, Attrs: Attrs{"beta": 0.3}},
				Sample{Name: "beta_zero", Inputs: []Gen{G(F32, 6), G(F32, 6)}, Attrs: Attrs{"beta": 0.0, "reduction": "sum"}})),
		&OpDef{
			Name: "_pointwise_loss_backward", Category: "loss", Internal: true,
			Doc:    "Gradients of mse_loss, l1_loss or smooth_l1_loss (attribute loss) with respect to input and target, in the broadcast shape.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "target", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly}},
			Attrs: []AttrSpec{{Name: "loss", Kind: AttrString, Required: true, Enum: []string{"mse_loss", "l1_loss", "smooth_l1_loss"}, Doc: "which loss"},
				lossReductionAttr(), {Name: "beta", Kind: AttrFloat, Default: 1.0, Doc: "smooth_l1_loss's beta"}},
			Infer: inferPointwiseLossBackward,
			Samples: []Sample{
				{Name: "mse_broadcast", Inputs: []Gen{G(F32, 2, 3), G(F32, 3), G(F32)}, Attrs: Attrs{"loss": "mse_loss"}},
				{Name: "l1_none", Inputs: []Gen{G(F32, 2, 3), G(F32, 2, 3), G(F32, 2, 3)}, Attrs: Attrs{"loss": "l1_loss", "reduction": "none"}},
				{Name: "smooth_l1_f64", Inputs: []Gen{G(F64, 6), G(F64, 6), G(F64)}, Attrs: Attrs{"loss": "smooth_l1_loss", "beta": 0.5, "reduction": "sum"}},
			},
		},
		&OpDef{
			Name: "binary_cross_entropy_with_logits", Category: "loss",
			Doc: "Binary cross entropy of sigmoid(input) against targets in [0, 1], computed stably from logits; optional weight and pos_weight broadcast to the input.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "target", DTypes: floatsOnly},
				{Name: "weight", DTypes: floatsOnly, Optional: true, NoGrad: true}, {Name: "pos_weight", DTypes: floatsOnly, Optional: true, NoGrad: true}},
			Attrs: []AttrSpec{lossReductionAttr()},
			Infer: inferBCEWithLogits, Backward: lossBackward("_binary_cross_entropy_with_logits_backward"),
			Samples: []Sample{
				{Name: "mean", Inputs: []Gen{G(F32, 3, 4), GU(F32, 0, 1, 3, 4)}},
				{Name: "weights_sum", Inputs: []Gen{G(F32, 3, 4), GU(F32, 0, 1, 3, 4), nnPositive(F32, 3, 1), nnPositive(F32, 4)}, Attrs: Attrs{"reduction": "sum"}},
				{Name: "pos_weight_none", Inputs: []Gen{G(F32, 2, 3), {Shape: Shape{2, 3}, DType: F32, Kind: "bool"}, nnAbsent, nnPositive(F32, 3)}, Attrs: Attrs{"reduction": "none"}},
				{Name: "strided", Inputs: []Gen{GU(F32, -20, 20, 4, 3).AsStrided(), GU(F32, 0, 1, 4, 3)}},
				{Name: "f64", Inputs: []Gen{G(F64, 5), GU(F64, 0, 1, 5), nnPositive(F64, 5)}},
				{Name: "f16", Inputs: []Gen{G(F16, 2, 4), GU(F16, 0, 1, 2, 4)}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 0, 3)}, NoGrad: true},
				{Name: "special", Inputs: []Gen{G(F32, 8).WithKind("special"), GU(F32, 0, 1, 8)}, Attrs: Attrs{"reduction": "none"}, NoGrad: true},
			},
		},
		&OpDef{
			Name: "_binary_cross_entropy_with_logits_backward", Category: "loss", Internal: true,
			Doc: "Gradients of binary_cross_entropy_with_logits with respect to input and target.",
			Inputs: []InputSpec{{Name: "input", DTypes: floatsOnly}, {Name: "target", DTypes: floatsOnly}, {Name: "g", DTypes: floatsOnly},
				{Name: "weight", DTypes: floatsOnly, Optional: true}, {Name: "pos_weight", DTypes: floatsOnly, Optional: true}},
			Attrs: []AttrSpec{lossReductionAttr()},
			Infer: inferBCEWithLogitsBackward,
			Samples: []Sample{
				{Name: "weights", Inputs: []Gen{G(F32, 3, 4), GU(F32, 0, 1, 3, 4), G(F32), nnPositive(F32, 4), nnPositive(F32, 4)}},
				{Name: "none_f64", Inputs: []Gen{G(F64, 2, 3), GU(F64, 0, 1, 2, 3), G(F64, 2, 3)}, Attrs: Attrs{"reduction": "none"}},
			},
		},
	)
}
