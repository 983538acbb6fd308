package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Attention and the losses: compositions of matmul, softmax and the
// registry's loss ops, following ONNX's reference implementations.

func init() {
	def([]string{"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap", "softmax_precision"},
		attention, "Attention")
	def([]string{"ignore_index", "reduction"}, nllLoss, "NegativeLogLikelihoodLoss")
	def([]string{"ignore_index", "reduction"}, softmaxCrossEntropy, "SoftmaxCrossEntropyLoss")
}

// toHeads views [B, L, heads*H] as [B, heads, L, H].
func toHeads(x *core.Tensor, heads int) *core.Tensor {
	s := x.Shape()
	y := x.Reshape([]int{s[0], s[1], heads, s[2] / heads})
	return call("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, y)
}

func attention(c *ctx) ([]*core.Tensor, error) {
	q, k, v, mask := c.in(0), c.in(1), c.in(2), c.opt(3)
	past, pastV := c.opt(4), c.opt(5)
	if c.opt(6) != nil {
		c.fail("nonpad_kv_seqlen is not supported")
	}
	if (past == nil) != (pastV == nil) {
		c.fail("past_key and past_value must be given together")
	}
	if c.err != nil || q.Err() != nil {
		return nil, q.Err()
	}
	threeD := q.Rank() == 3
	if threeD {
		qh, kvh := int(c.attrInt("q_num_heads", 0)), int(c.attrInt("kv_num_heads", 0))
		if qh <= 0 || kvh <= 0 {
			c.fail("3-D inputs need q_num_heads and kv_num_heads")
			return nil, nil
		}
		q, k, v = toHeads(q, qh), toHeads(k, kvh), toHeads(v, kvh)
	}
	if past != nil {
		k = call("concat", core.Attrs{"axis": 2}, past, k)
		v = call("concat", core.Attrs{"axis": 2}, pastV, v)
	}
	presentK, presentV := k, v
	qs, ks := q.Shape(), k.Shape()
	if len(qs) != 4 || len(ks) != 4 {
		c.fail("query shape %v and key shape %v: want 4-D (or 3-D with head counts)", qs, ks)
		return nil, nil
	}
	L, S := qs[2], ks[2]
	if qs[1] != ks[1] {
		if ks[1] == 0 || qs[1]%ks[1] != 0 {
			c.fail("%d query heads do not group over %d key heads", qs[1], ks[1])
			return nil, nil
		}
		k = call("repeat_interleave", core.Attrs{"repeats": qs[1] / ks[1], "axis": 1}, k)
		v = call("repeat_interleave", core.Attrs{"repeats": qs[1] / ks[1], "axis": 1}, v)
	}
	scale := c.attrFloat("scale", 1/math.Sqrt(float64(qs[3])))
	root := like(q, math.Sqrt(scale))
	qk := call("matmul", nil, call("mul", nil, q, root), call("transpose", nil, call("mul", nil, k, root)))
	if cap := c.attrFloat("softcap", 0); cap > 0 {
		qk = call("mul", nil, call("tanh", nil, call("div", nil, qk, like(qk, cap))), like(qk, cap))
	}
	bias := attentionBias(c, q, mask, L, S, past)
	scores := qk
	if bias != nil {
		scores = call("add", nil, qk, bias)
	}
	p := call("softmax", core.Attrs{"axis": -1}, scores)
	if bias != nil { // rows with nothing to attend give zeros, not NaN
		masked := call("eq", nil, call("max", core.Attrs{"axes": []int{-1}, "keepdim": true}, bias), like(bias, math.Inf(-1)))
		p = call("where", nil, masked, like(p, 0), p)
	}
	y := call("matmul", nil, p, v)
	if threeD {
		ys := y.Shape()
		y = call("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, y).Reshape([]int{ys[0], ys[2], ys[1] * ys[3]})
	}
	var qkOut *core.Tensor
	switch c.attrInt("qk_matmul_output_mode", 0) {
	case 2:
		qkOut = scores
	case 3:
		qkOut = p
	default:
		qkOut = qk
	}
	return []*core.Tensor{y, presentK, presentV, qkOut}, nil
}

// attentionBias is the additive mask: the given mask (bool: true attends;
// float: added), padded to the key length, plus the causal triangle
// aligned to the bottom right when there is a past.
func attentionBias(c *ctx, q, mask *core.Tensor, L, S int, past *core.Tensor) *core.Tensor {
	var bias *core.Tensor
	if mask != nil {
		if short := S - mask.Shape()[mask.Rank()-1]; short > 0 {
			fill := math.Inf(-1)
			if mask.DType() == core.Bool {
				fill = 0
			}
			mask = call("pad", core.Attrs{"pads": []int{0, short}, "value": fill}, mask)
		}
		if mask.DType() == core.Bool {
			mask = call("where", nil, mask, like(q, 0), like(q, math.Inf(-1)))
		}
		bias = mask.Cast(q.DType())
	}
	if c.attrInt("is_causal", 0) == 0 {
		return bias
	}
	offset := 0
	if past != nil {
		offset = past.Shape()[2]
	}
	tri := make([]float64, L*S)
	for i := range L {
		for j := range S {
			if j > i+offset {
				tri[i*S+j] = math.Inf(-1)
			}
		}
	}
	causal := core.FromFloat64s(q.DType(), core.Shape{L, S}, tri, q.Device())
	if bias == nil {
		return causal
	}
	return call("add", nil, bias, causal)
}

func lossAttrs(c *ctx) core.Attrs {
	a := core.Attrs{"reduction": c.attrString("reduction", "mean")}
	// Without ignore_index ONNX ignores nothing; the registry's default
	// (-100) could be a real class there, so pick an index no target has.
	a["ignore_index"] = int(c.attrInt("ignore_index", math.MinInt32))
	return a
}

func lossInputs(c *ctx, logp *core.Tensor) []*core.Tensor {
	ins := []*core.Tensor{logp, c.in(1).Cast(core.I64)}
	if w := c.opt(2); w != nil {
		ins = append(ins, w)
	}
	return ins
}

func nllLoss(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	return one(call("nll_loss", lossAttrs(c), lossInputs(c, x)...))
}

func softmaxCrossEntropy(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	logp := call("log_softmax", core.Attrs{"axis": 1}, x)
	loss := call("nll_loss", lossAttrs(c), lossInputs(c, logp)...)
	return []*core.Tensor{loss, logp}, loss.Err()
}
