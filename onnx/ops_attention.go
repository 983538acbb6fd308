package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Attention and the losses: compositions of matmul, softmax and the
// registry's loss ops, following ONNX's reference implementations.

func init() {
	def([]string{"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap", "softmax_precision",
		"left_window_size", "right_window_size"}, attention, "Attention")
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
	past, pastV, nonpad := c.opt(4), c.opt(5), c.opt(6)
	if (past == nil) != (pastV == nil) {
		c.fail("past_key and past_value must be given together")
	}
	if nonpad != nil && past != nil {
		c.fail("nonpad_kv_seqlen (an external cache) cannot be combined with past_key and past_value (an internal one)")
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
	if nonpad != nil && (nonpad.Rank() != 1 || nonpad.Numel() != qs[0]) {
		c.fail("nonpad_kv_seqlen has shape %v, want [%d] (one length per batch)", nonpad.Shape(), qs[0])
		return nil, nil
	}
	pastLen := 0
	if past != nil {
		pastLen = past.Shape()[2]
	}
	bias := attentionBias(c, q, mask, L, S, pastLen, nonpad)
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

// attentionBias is the additive mask, nil when nothing is masked: the
// given mask (bool: true attends; float: added), padded to the key length,
// plus -inf where the causal rule or the sliding window forbids a key and,
// with nonpad_kv_seqlen, past each batch's valid keys. Causal and window
// rules are aligned to the query's absolute position offset + i, where
// offset is the past length (an internal cache) or, per batch,
// nonpad_kv_seqlen - L (an external one); the positions are tensor ops, so
// a traced graph keeps the per-batch lengths as inputs.
func attentionBias(c *ctx, q, mask *core.Tensor, L, S, past int, nonpad *core.Tensor) *core.Tensor {
	var bias *core.Tensor
	inf := like(q, math.Inf(-1))
	if mask != nil {
		if short := S - mask.Shape()[mask.Rank()-1]; short > 0 {
			fill := math.Inf(-1)
			if mask.DType() == core.Bool {
				fill = 0
			}
			mask = call("pad", core.Attrs{"pads": []int{0, short}, "value": fill}, mask)
		}
		if mask.DType() == core.Bool {
			mask = call("where", nil, mask, like(q, 0), inf)
		}
		bias = mask.Cast(q.DType())
	}
	add := func(b *core.Tensor) {
		if bias == nil {
			bias = b
		} else {
			bias = call("add", nil, bias, b)
		}
	}
	causal := c.attrInt("is_causal", 0) != 0
	left, right := c.attrInt("left_window_size", -1), c.attrInt("right_window_size", -1)
	if left < -1 || right < -1 {
		c.fail("left_window_size %d and right_window_size %d: each is -1 (unbounded) or a count of keys", left, right)
		return nil
	}
	dev := q.Device()
	index := func(n int, shape core.Shape) *core.Tensor {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(i)
		}
		return core.FromSlice(v, shape, dev)
	}
	keys := index(S, core.Shape{1, S})
	if causal || left >= 0 || right >= 0 {
		// diff is how far key j lies before the query's absolute position:
		// (offset + i) - j, [L, S] or, per batch, [B, 1, L, S].
		pos := call("add", nil, index(L, core.Shape{L, 1}), like(keys, float64(past)))
		if nonpad != nil {
			offset := call("sub", nil, nonpad.Cast(core.I32), like(keys, float64(L))).Reshape([]int{nonpad.Numel(), 1, 1, 1})
			pos = call("add", nil, index(L, core.Shape{L, 1}), offset)
		}
		diff := call("sub", nil, pos, keys)
		var allowed *core.Tensor
		and := func(b *core.Tensor) {
			if allowed == nil {
				allowed = b
			} else {
				allowed = call("logical_and", nil, allowed, b)
			}
		}
		if causal {
			and(call("ge", nil, diff, like(diff, 0)))
		}
		if left >= 0 {
			and(call("le", nil, diff, like(diff, float64(left))))
		}
		if right >= 0 {
			and(call("ge", nil, diff, like(diff, float64(-right))))
		}
		add(call("where", nil, allowed, like(q, 0), inf))
	}
	if nonpad != nil {
		valid := call("lt", nil, keys, nonpad.Cast(core.I32).Reshape([]int{nonpad.Numel(), 1}))
		add(call("where", nil, valid, like(q, 0), inf).Reshape([]int{nonpad.Numel(), 1, 1, S}))
	}
	return bias
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
