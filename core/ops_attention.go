package core

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core/oprules"
)

// Scaled dot-product attention with PyTorch's semantics: batch dims of q, k
// and v broadcast together, the mask broadcasts to [..., L, S], and a row
// whose keys are all masked out gives zeros (torch's safe softmax) rather
// than NaN.

func inferAttention(in []Meta, a Attrs) ([]Meta, error) {
	q, k, v, mask := in[0], in[1], in[2], in[3]
	if k.DType != q.DType || v.DType != q.DType {
		return nil, fmt.Errorf("query, key and value dtypes differ: %s, %s, %s", q.DType, k.DType, v.DType)
	}
	sh, err := oprules.AttentionShapes(q.Shape, k.Shape, v.Shape)
	if err != nil {
		return nil, err
	}
	if mask.DType != Invalid {
		if mask.DType != Bool && mask.DType != q.DType {
			return nil, fmt.Errorf("attn_mask must be bool or the query dtype %s, got %s", q.DType, mask.DType)
		}
		if a.Bool("is_causal") {
			return nil, fmt.Errorf("give attn_mask or is_causal, not both")
		}
		if b, err := BroadcastShapes(mask.Shape, sh.Scores()); err != nil || !b.Equal(sh.Scores()) {
			return nil, fmt.Errorf("attn_mask of shape %v does not broadcast to the attention shape %v", mask.Shape, sh.Scores())
		}
	}
	return []Meta{{Shape: append(sh.Batch.Clone(), sh.L, sh.Ev), DType: q.DType}}, nil
}

// inferAttentionBackward: q, k, v, g, attn_mask? give dq, dk, dv in the
// broadcast batch shape and, for a float mask, its gradient [..., L, S].
func inferAttentionBackward(in []Meta, a Attrs) ([]Meta, error) {
	fwd, err := inferAttention([]Meta{in[0], in[1], in[2], in[4]}, a)
	if err != nil {
		return nil, err
	}
	if !in[3].Shape.Equal(fwd[0].Shape) || in[3].DType != fwd[0].DType {
		return nil, fmt.Errorf("gradient %v %s does not match the output %v %s", in[3].Shape, in[3].DType, fwd[0].Shape, fwd[0].DType)
	}
	sh, _ := oprules.AttentionShapes(in[0].Shape, in[1].Shape, in[2].Shape)
	d := in[0].DType
	out := []Meta{{Shape: append(sh.Batch.Clone(), sh.L, sh.E), DType: d},
		{Shape: append(sh.Batch.Clone(), sh.S, sh.E), DType: d},
		{Shape: append(sh.Batch.Clone(), sh.S, sh.Ev), DType: d}}
	if in[4].DType.IsFloat() {
		out = append(out, Meta{Shape: sh.Scores(), DType: d})
	}
	return out, nil
}

func attentionAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "is_causal", Kind: AttrBool, Default: false, Doc: "query i attends to keys 0..i only (top-left aligned), as torch.tril"},
		{Name: "scale", Kind: AttrFloat, Doc: "multiplies q.k; absent means 1/sqrt(E)"},
	}
}

var attentionMaskTypes = append(slices.Clone(floatsOnly), Bool)

func init() {
	MustRegister(
		&OpDef{
			Name: "scaled_dot_product_attention", Category: "attention",
			Doc: "softmax(q k^T * scale + mask) v over the last two dims, with broadcast batch dims; attn_mask is bool (true attends) or additive float.",
			Inputs: []InputSpec{{Name: "q", DTypes: floatsOnly}, {Name: "k", DTypes: floatsOnly}, {Name: "v", DTypes: floatsOnly},
				{Name: "attn_mask", DTypes: attentionMaskTypes, Optional: true}},
			Attrs: attentionAttrs(),
			Infer: inferAttention,
			Backward: func(c *GradCtx) ([]*Tensor, error) {
				in := c.Inputs
				outs, err := Call("_scaled_dot_product_attention_backward", []*Tensor{in[0], in[1], in[2], c.Grads[0], in[3]}, c.Attrs)
				if err != nil {
					return nil, err
				}
				grads := []*Tensor{outs[0], outs[1], outs[2], nil}
				if len(outs) == 4 {
					grads[3] = outs[3]
				}
				return grads, nil
			},
			Samples: []Sample{
				{Name: "heads", Inputs: []Gen{G(F32, 1, 2, 3, 4), G(F32, 1, 2, 5, 4), G(F32, 1, 2, 5, 3)}},
				{Name: "causal_scale", Inputs: []Gen{G(F32, 2, 4, 3), G(F32, 2, 4, 3), G(F32, 2, 4, 2)}, Attrs: Attrs{"is_causal": true, "scale": 0.7}},
				{Name: "bool_mask_broadcast", Inputs: []Gen{G(F32, 2, 3, 4), G(F32, 1, 5, 4), G(F32, 5, 2), {Shape: Shape{3, 5}, DType: Bool, Kind: "bool"}}},
				{Name: "float_mask", Inputs: []Gen{G(F32, 2, 3, 2), G(F32, 2, 4, 2), G(F32, 2, 4, 3), G(F32, 1, 4)}},
				// A BERT-style padding mask [B, 1, 1, S] over heads (the f32 path
				// applies it at its own shape); random bools mask whole rows too.
				{Name: "padding_mask", Inputs: []Gen{G(F32, 2, 2, 3, 4), G(F32, 2, 2, 5, 4), G(F32, 2, 2, 5, 3),
					{Shape: Shape{2, 1, 1, 5}, DType: Bool, Kind: "bool"}}},
				{Name: "row_mask", Inputs: []Gen{G(F32, 2, 4, 3), G(F32, 2, 4, 3), G(F32, 2, 4, 2),
					{Shape: Shape{2, 4, 1}, DType: Bool, Kind: "bool"}}},
				{Name: "masked_row_strided", Inputs: []Gen{G(F32, 3, 2).AsStrided(), G(F32, 4, 2), G(F32, 4, 3),
					GV(Bool, []float64{0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 1}, 3, 4)}},
				{Name: "f64_causal_wide", Inputs: []Gen{G(F64, 2, 3), G(F64, 5, 3), G(F64, 5, 2)}, Attrs: Attrs{"is_causal": true}},
				{Name: "f16", Inputs: []Gen{G(F16, 2, 3, 4), G(F16, 2, 3, 4), G(F16, 2, 3, 4)}},
				{Name: "empty_queries", Inputs: []Gen{G(F32, 2, 0, 4), G(F32, 2, 3, 4), G(F32, 2, 3, 4)}},
			},
		},
		&OpDef{
			Name: "_scaled_dot_product_attention_backward", Category: "attention", Internal: true,
			Doc: "Gradients of scaled_dot_product_attention: dq, dk, dv (broadcast batch shape) and, for a float mask, dmask.",
			Inputs: []InputSpec{{Name: "q", DTypes: floatsOnly}, {Name: "k", DTypes: floatsOnly}, {Name: "v", DTypes: floatsOnly},
				{Name: "g", DTypes: floatsOnly}, {Name: "attn_mask", DTypes: attentionMaskTypes, Optional: true}},
			Attrs: attentionAttrs(),
			Infer: inferAttentionBackward,
			Samples: []Sample{
				{Name: "causal", Inputs: []Gen{G(F32, 2, 3, 4), G(F32, 2, 3, 4), G(F32, 2, 3, 2), G(F32, 2, 3, 2)}, Attrs: Attrs{"is_causal": true}},
				{Name: "float_mask_f64", Inputs: []Gen{G(F64, 3, 2), G(F64, 4, 2), G(F64, 4, 3), G(F64, 3, 3), G(F64, 3, 4)}},
			},
		},
	)
}
