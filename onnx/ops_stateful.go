package onnx

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// The stateful sequence operators of opset 27 that linear-attention and
// state-space models (Gated DeltaNet, Mamba) use for incremental decoding:
// CausalConvWithState (a depthwise conv1d over the carried state and the
// input) and LinearAttention (the recurrence unrolled over the sequence,
// as the recurrent layers are, into matmuls and pointwise ops). Both are
// registry ops, so they run on every backend and trace.

func init() {
	def([]string{"activation"}, causalConvWithState, "CausalConvWithState")
	def([]string{"chunk_size", "kv_num_heads", "q_num_heads", "scale", "update_rule"}, linearAttention, "LinearAttention")
}

// causalConvWithState convolves [past_state (zeros without one), input]
// unpadded, channel by channel, and returns the output (with the fused
// activation) and the last k-1 positions of that sequence as the state.
func causalConvWithState(c *ctx) ([]*core.Tensor, error) {
	x, w, bias, past := c.in(0), c.in(1), c.opt(2), c.opt(3)
	act := c.attrString("activation", "none")
	if c.err == nil && act != "none" && act != "silu" && act != "swish" {
		c.fail("activation %q is not one of none, silu, swish", act)
	}
	if c.err != nil {
		return nil, nil
	}
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 3 || len(ws) != 3 || ws[0] != xs[1] || ws[1] != 1 || ws[2] < 1 {
		c.fail("input has shape %v and weight %v: want (batch, channels, length) and (channels, 1, k)", xs, ws)
		return nil, nil
	}
	b, ch, k := xs[0], xs[1], ws[2]
	if bias != nil && (bias.Rank() != 1 || bias.Numel() != ch) {
		c.fail("bias has shape %v, want [%d]", bias.Shape(), ch)
		return nil, nil
	}
	if past == nil {
		past = core.Zeros(core.Shape{b, ch, k - 1}, x.DType(), x.Device())
	} else if ps := past.Shape(); len(ps) != 3 || ps[0] != b || ps[1] != ch || ps[2] != k-1 {
		c.fail("past_state has shape %v, want [%d %d %d] (batch, channels, k-1)", ps, b, ch, k-1)
		return nil, nil
	}
	seq := x
	if k > 1 {
		seq = call("concat", core.Attrs{"axis": 2}, past, x)
	}
	ins := []*core.Tensor{seq, w}
	if bias != nil {
		ins = append(ins, bias)
	}
	y := call("conv1d", core.Attrs{"stride": []int{1}, "padding": []int{0}, "dilation": []int{1}, "groups": ch}, ins...)
	if act != "none" {
		// SiLU in f32 at least, as ONNX's reference computes it.
		dt := y.DType()
		yf := y
		if dt == core.F16 || dt == core.BF16 {
			yf = y.Cast(core.F32)
		}
		y = call("mul", nil, yf, call("sigmoid", nil, yf)).Cast(dt)
	}
	n := seq.Shape()[2]
	state := call("slice", core.Attrs{"axis": 2, "start": n - (k - 1), "stop": n}, seq)
	return []*core.Tensor{y, state}, nil
}

// linearAttention is the recurrence of ONNX's LinearAttention, per step t
// over the sequence and per key/value head, with the state S [d_k, d_v]:
// gated rules decay S by exp(decay_t); delta rules write
// beta_t * (v_t - S^T k_t) instead of v_t; S += k_t v_t^T; and each query
// head of the KV head's group reads scale * q_t^T S. It runs in f32 (at
// least), as the reference does; the output takes the query's type and
// the state past_state's (the query's without one).
func linearAttention(c *ctx) ([]*core.Tensor, error) {
	q, k, v, past, decay, beta := c.in(0), c.in(1), c.in(2), c.opt(3), c.opt(4), c.opt(5)
	rule := c.attrString("update_rule", "gated_delta")
	hq, hkv := int(c.attrInt("q_num_heads", 0)), int(c.attrInt("kv_num_heads", 0))
	scale := c.attrFloat("scale", 0)
	if c.err != nil {
		return nil, nil
	}
	gated := rule == "gated" || rule == "gated_delta"
	delta := rule == "delta" || rule == "gated_delta"
	switch {
	case rule != "linear" && !gated && !delta:
		c.fail("update_rule %q is not one of linear, gated, delta, gated_delta", rule)
	case !c.has("q_num_heads") || !c.has("kv_num_heads"):
		c.fail("attributes q_num_heads and kv_num_heads are required")
	case hq <= 0 || hkv <= 0 || hq%hkv != 0:
		c.fail("q_num_heads %d must be a positive multiple of kv_num_heads %d", hq, hkv)
	case gated != (decay != nil):
		c.fail("update_rule %q %s the decay input", rule, map[bool]string{true: "requires", false: "forbids"}[gated])
	case delta != (beta != nil):
		c.fail("update_rule %q %s the beta input", rule, map[bool]string{true: "requires", false: "forbids"}[delta])
	}
	if c.err != nil {
		return nil, nil
	}
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	if len(qs) != 3 || len(ks) != 3 || len(vs) != 3 || ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != qs[1] || vs[1] != qs[1] ||
		qs[2]%hq != 0 || vs[2]%hkv != 0 || ks[2] != hkv*(qs[2]/hq) {
		c.fail("query %v, key %v and value %v: want (B, T, q_num_heads*d_k), (B, T, kv_num_heads*d_k) and (B, T, kv_num_heads*d_v) with q_num_heads %d and kv_num_heads %d",
			qs, ks, vs, hq, hkv)
		return nil, nil
	}
	b, steps, dk, dv, group := qs[0], qs[1], qs[2]/hq, vs[2]/hkv, hq/hkv
	outType, stateType := q.DType(), q.DType()
	work := core.F32
	if outType == core.F64 {
		work = core.F64
	}
	// heads views (B, T, H*D) as (T, B, H, D), in the working type.
	heads := func(x *core.Tensor, h int) *core.Tensor {
		s := x.Shape()
		return call("permute", core.Attrs{"dims": []int{1, 0, 2, 3}}, x.Cast(work).Reshape([]int{s[0], s[1], h, s[2] / h}))
	}
	qh, kh, vh := heads(q, hq), heads(k, hkv), heads(v, hkv)
	var dh, bh *core.Tensor
	if decay != nil {
		ds := decay.Shape()
		if len(ds) != 3 || ds[0] != b || ds[1] != steps || ds[2] != hkv && ds[2] != hkv*dk {
			c.fail("decay has shape %v, want [%d %d %d] or [%d %d %d] (per head or per key dim)", ds, b, steps, hkv, b, steps, hkv*dk)
			return nil, nil
		}
		dh = heads(decay, hkv) // (T, B, H_kv, 1 or d_k)
	}
	if beta != nil {
		bs := beta.Shape()
		if len(bs) != 3 || bs[0] != b || bs[1] != steps || bs[2] != hkv && bs[2] != 1 {
			c.fail("beta has shape %v, want [%d %d %d] or [%d %d 1]", bs, b, steps, hkv, b, steps)
			return nil, nil
		}
		bh = heads(beta, bs[2]) // (T, B, H_kv or 1, 1)
	}
	var state *core.Tensor
	if past != nil {
		want := core.Shape{b, hkv, dk, dv}
		if !slices.Equal(past.Shape(), want) {
			c.fail("past_state has shape %v, want %v (B, kv_num_heads, d_k, d_v)", past.Shape(), want)
			return nil, nil
		}
		stateType, state = past.DType(), past.Cast(work)
	} else {
		state = core.Zeros(core.Shape{b, hkv, dk, dv}, work, q.Device())
	}
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(dk))
	}
	at := func(x *core.Tensor, t int) *core.Tensor {
		s := x.Shape()
		return call("slice", core.Attrs{"axis": 0, "start": t, "stop": t + 1}, x).Reshape(s[1:])
	}
	outs := make([]*core.Tensor, steps)
	for t := range steps {
		kt, vt := at(kh, t), at(vh, t).Reshape([]int{b, hkv, 1, dv})
		if gated {
			g := at(dh, t)
			state = call("mul", nil, state, call("exp", nil, g).Reshape([]int{b, hkv, g.Shape()[2], 1}))
		}
		if delta {
			read := call("matmul", nil, kt.Reshape([]int{b, hkv, 1, dk}), state) // (B, H_kv, 1, d_v)
			bt := at(bh, t)
			vt = call("mul", nil, call("sub", nil, vt, read), bt.Reshape([]int{b, bt.Shape()[1], 1, 1}))
		}
		state = call("add", nil, state, call("matmul", nil, kt.Reshape([]int{b, hkv, dk, 1}), vt))
		qt := at(qh, t).Reshape([]int{b, hkv, group, dk})
		o := call("matmul", nil, qt, state) // (B, H_kv, group, d_v)
		outs[t] = call("mul", nil, o, like(o, scale)).Reshape([]int{b, hq * dv})
	}
	y := core.Zeros(core.Shape{b, 0, hq * dv}, work, q.Device())
	if steps > 0 {
		y = call("stack", core.Attrs{"axis": 1}, outs...) // (B, T, H_q*d_v)
	}
	return []*core.Tensor{y.Cast(outType), state.Cast(stateType)}, nil
}
