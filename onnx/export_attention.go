package onnx

import (
	"errors"
	"math"
)

// scaled_dot_product_attention is written as the chain exporters write
// for it, which the importer fuses back (fuse.go): MatMul(q, kᵀ), Mul by
// the scale, Add of the mask (a bool mask as 0 or -inf first), Softmax
// over the keys and MatMul by v.
func init() {
	exportOps["scaled_dot_product_attention"] = exportAttention
}

func exportAttention(e *exporter, n *exportNode) error {
	if n.attrs.Bool("is_causal") {
		return errors.New("causal attention has no ONNX form in the exporter yet (pass an explicit mask)")
	}
	q, k := n.Inputs[0], n.Inputs[1]
	if len(q.Shape) < 2 || len(k.Shape) != len(q.Shape) {
		return errors.New("attention with q and k of different ranks has no ONNX form in the exporter")
	}
	names := make([]string, 3) // q, k, v
	for i := range names {
		name, err := e.in(n, i, q.DType)
		if err != nil {
			return err
		}
		names[i] = name
	}
	perm := make([]int, len(k.Shape))
	for i := range perm {
		perm[i] = i
	}
	perm[len(perm)-2], perm[len(perm)-1] = perm[len(perm)-1], perm[len(perm)-2]
	kt := e.emit1("Transpose", []string{names[1]}, intsAttr("perm", perm))
	scores := e.emit1("MatMul", []string{names[0], kt})
	scale := 1 / math.Sqrt(float64(q.Shape[len(q.Shape)-1]))
	if s, ok := n.attrs["scale"].(float64); ok {
		scale = s
	}
	sc, err := e.scalar(scale, q.DType)
	if err != nil {
		return err
	}
	scores = e.emit1("Mul", []string{scores, sc})
	if len(n.Inputs) > 3 && n.Inputs[3] != nil {
		mask, err := e.in(n, 3, n.Inputs[3].DType)
		if err != nil {
			return err
		}
		if !n.Inputs[3].DType.IsFloat() {
			zero, err := e.scalar(0, q.DType)
			if err != nil {
				return err
			}
			ninf, err := e.scalar(math.Inf(-1), q.DType)
			if err != nil {
				return err
			}
			mask = e.emit1("Where", []string{mask, zero, ninf})
		} else if mask, err = e.in(n, 3, q.DType); err != nil {
			return err
		}
		scores = e.emit1("Add", []string{scores, mask})
	}
	probs := e.emit1("Softmax", []string{scores}, intAttr("axis", -1))
	e.emit("MatMul", []string{probs, names[2]}, []string{e.output(n.Outputs[0])})
	return nil
}
