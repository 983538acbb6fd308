package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// MultiheadAttention is torch.nn.MultiheadAttention with equal query, key
// and value widths. State: in_proj_weight (3E, E) holding the query, key and
// value projections stacked, in_proj_bias (3E), out_proj.weight, out_proj.bias.
type MultiheadAttention struct {
	Base
	EmbedDim, NumHeads int
	Dropout            float64 // on the attention weights, in training mode
	BatchFirst         bool    // (N, L, E) tensors instead of (L, N, E)
	InProjWeight       *Parameter
	InProjBias         *Parameter // nil WithoutBias
	OutProj            *Linear
}

// AttentionMask says which keys each query may attend to; the zero value
// allows every pair.
type AttentionMask struct {
	// Attn is (L, S) or (N·NumHeads, L, S). A bool mask marks with true the
	// pairs that may NOT attend (torch's nn.MultiheadAttention convention);
	// a float mask is added to the attention scores.
	Attn *core.Tensor
	// KeyPadding is (N, S) (or (S) for unbatched input): true, or a float
	// added to the scores, for keys that are padding.
	KeyPadding *core.Tensor
	// Causal stops query i from attending to keys after position i.
	Causal bool
}

func (m AttentionMask) empty() bool { return m.Attn == nil && m.KeyPadding == nil }

// NewMultiheadAttention makes a MultiheadAttention initialised as torch
// does: xavier_uniform in-projection, zero biases. Options: WithDropout,
// WithBatchFirst, WithoutBias, WithDType, WithDevice.
func NewMultiheadAttention(embedDim, numHeads int, opts ...Option) (*MultiheadAttention, error) {
	base := defaultConfig()
	base.dropout = 0
	c, err := buildConfig("MultiheadAttention", base, opts, optDropout, optBatchFirst, optBias, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if embedDim < 1 || numHeads < 1 || embedDim%numHeads != 0 {
		return nil, fmt.Errorf("nn: MultiheadAttention: embed_dim (%d) must be a positive multiple of num_heads (%d)", embedDim, numHeads)
	}
	m := &MultiheadAttention{EmbedDim: embedDim, NumHeads: numHeads, Dropout: c.dropout, BatchFirst: c.batchFirst}
	if err := m.initParams(c); err != nil {
		return nil, fmt.Errorf("nn: MultiheadAttention: %w", err)
	}
	return m, nil
}

func (m *MultiheadAttention) initParams(c config) error {
	e := m.EmbedDim
	var err error
	if m.InProjWeight, err = filled(core.Shape{3 * e, e}, 0, c); err != nil {
		return err
	}
	if err := XavierUniform(m.InProjWeight, 1); err != nil {
		return err
	}
	m.addParam("in_proj_weight", m.InProjWeight)
	if c.bias {
		if m.InProjBias, err = filled(core.Shape{3 * e}, 0, c); err != nil {
			return err
		}
		m.addParam("in_proj_bias", m.InProjBias)
	}
	linearOpts := []Option{WithDType(c.dtype)}
	if c.device != "" {
		dev, err := deviceOf(c)
		if err != nil {
			return err
		}
		linearOpts = append(linearOpts, WithDevice(dev))
	}
	if !c.bias {
		linearOpts = append(linearOpts, WithoutBias())
	}
	if m.OutProj, err = NewLinear(e, e, linearOpts...); err != nil {
		return err
	}
	if m.OutProj.Bias != nil {
		if err := Constant(m.OutProj.Bias, 0); err != nil {
			return err
		}
	}
	m.addChild("out_proj", m.OutProj)
	return nil
}

// Forward attends query (L, N, E) to key and value (S, N, E) (batch first:
// (N, L, E), (N, S, E); unbatched: (L, E), (S, E)) and returns the
// attention output shaped like query. Attention weights are not returned:
// the fused attention op never materialises them.
func (m *MultiheadAttention) Forward(query, key, value *core.Tensor, mask AttentionMask) *core.Tensor {
	if query == nil || key == nil || value == nil {
		// The op names the missing input in its error.
		return op("scaled_dot_product_attention", nil, query, key, value)
	}
	if f := firstFailed(query, key, value, mask.Attn, mask.KeyPadding); f != nil {
		return f
	}
	batched := query.Rank() == 3
	q, k, v := query, key, value
	switch {
	case !batched:
		q, k, v = unsqueeze(q, 0), unsqueeze(k, 0), unsqueeze(v, 0)
	case !m.BatchFirst:
		q, k, v = transpose(q, 0, 1), transpose(k, 0, 1), transpose(v, 0, 1)
	}
	n, l, s := dimOf(q, 0), dimOf(q, 1), dimOf(k, 1)
	e, h := m.EmbedDim, m.NumHeads
	qp, kp, vp := m.project(query, key, value, q, k, v)
	qh, kh, vh := m.heads(qp, n, l), m.heads(kp, n, s), m.heads(vp, n, s)
	scoreMask := attentionBias(mask, n, h, l, s, batched, qh)
	out := attend(qh, kh, vh, scoreMask, mask.Causal, m.Dropout, m.Training())
	out = reshape(op("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, out), n, l, e)
	out = m.OutProj.Forward(out)
	switch {
	case !batched:
		return op("squeeze", core.Attrs{"axes": []int{0}}, out)
	case !m.BatchFirst:
		return transpose(out, 0, 1)
	}
	return out
}

// project applies the query, key and value projections to q, k and v (the
// inputs after batch reshuffling). Self-attention, where the caller passed one
// tensor three times, needs one matmul with the stacked weight instead of three.
func (m *MultiheadAttention) project(query, key, value, q, k, v *core.Tensor) (qp, kp, vp *core.Tensor) {
	e := m.EmbedDim
	w, b := m.InProjWeight.Tensor(), optionalTensor(m.InProjBias)
	if query == key && key == value {
		all := linear(q, w, b)
		cols := func(lo, hi int) *core.Tensor {
			return op("slice", core.Attrs{"axis": -1, "start": lo, "stop": hi, "step": 1}, all)
		}
		return cols(0, e), cols(e, 2*e), cols(2*e, 3*e)
	}
	return linear(q, rows(w, 0, e), rows(b, 0, e)), linear(k, rows(w, e, 2*e), rows(b, e, 2*e)),
		linear(v, rows(w, 2*e, 3*e), rows(b, 2*e, 3*e))
}

// heads splits (N, T, E) into (N, H, T, E/H).
func (m *MultiheadAttention) heads(x *core.Tensor, n, t int) *core.Tensor {
	x = reshape(x, n, t, m.NumHeads, m.EmbedDim/m.NumHeads)
	return op("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, x)
}

// rows slices rows [lo, hi) of a projection weight or bias (nil stays nil).
func rows(t *core.Tensor, lo, hi int) *core.Tensor {
	if t == nil {
		return nil
	}
	return op("slice", core.Attrs{"axis": 0, "start": lo, "stop": hi, "step": 1}, t)
}

func unsqueeze(t *core.Tensor, axis int) *core.Tensor {
	return op("unsqueeze", core.Attrs{"axis": axis}, t)
}

// dimOf is dimension i of t, or 0 when t has fewer dimensions; a wrongly
// shaped input then fails in the next op instead of panicking here.
func dimOf(t *core.Tensor, i int) int {
	s := t.Shape()
	if i < len(s) {
		return s[i]
	}
	return 0
}

// attentionBias turns the user's masks into one float mask added to the
// scores, broadcastable to (N, H, L, S), or nil when there is none. The
// causal part stays separate unless another mask exists, so the fused
// attention op can apply it itself.
func attentionBias(mask AttentionMask, n, h, l, s int, batched bool, like *core.Tensor) *core.Tensor {
	if mask.empty() {
		return nil
	}
	var bias *core.Tensor
	if mask.Attn != nil {
		a := asScoreBias(mask.Attn, like)
		if mask.Attn.Rank() == 3 {
			a = reshape(a, n, h, l, s)
		}
		bias = a
	}
	if mask.KeyPadding != nil {
		kp := asScoreBias(mask.KeyPadding, like)
		if !batched {
			kp = unsqueeze(kp, 0)
		}
		kp = reshape(kp, n, 1, 1, s)
		if bias == nil {
			bias = kp
		} else {
			bias = add(bias, kp)
		}
	}
	if mask.Causal {
		bias = add(bias, causalBias(l, s, like))
	}
	return bias
}

// asScoreBias maps a bool "masked" tensor to 0 / -inf; float masks pass
// through in the scores' dtype.
func asScoreBias(m, like *core.Tensor) *core.Tensor {
	if m.DType() != core.Bool {
		return m.Cast(like.DType())
	}
	return op("where", nil, m, scalarLike(like, math.Inf(-1)), scalarLike(like, 0))
}

// causalBias is the (L, S) mask with -inf above the diagonal, aligned at the
// top left as torch's is_causal is.
func causalBias(l, s int, like *core.Tensor) *core.Tensor {
	vals := make([]float64, l*s)
	for i := 0; i < l; i++ {
		for j := i + 1; j < s; j++ {
			vals[i*s+j] = math.Inf(-1)
		}
	}
	return core.FromFloat64s(like.DType(), core.Shape{l, s}, vals, like.Device())
}

// attend is softmax(q·kᵀ/√d + bias)·v. Without attention dropout it is the
// fused scaled_dot_product_attention op; with dropout (training only) the
// weights must exist to be dropped, so it is spelled out.
func attend(q, k, v, bias *core.Tensor, causal bool, p float64, training bool) *core.Tensor {
	d := dimOf(q, 3)
	scale := 1 / math.Sqrt(float64(max(d, 1)))
	fusedCausal := causal && bias == nil
	if p == 0 || !training {
		return op("scaled_dot_product_attention", core.Attrs{"is_causal": fusedCausal, "scale": scale}, q, k, v, bias)
	}
	scores := mulScalar(op("matmul", nil, q, transpose(k, -2, -1)), scale)
	if fusedCausal {
		bias = causalBias(dimOf(q, 2), dimOf(k, 2), q)
	}
	if bias != nil {
		scores = add(scores, bias)
	}
	weights := dropout(op("softmax", core.Attrs{"axis": -1}, scores), p, true)
	return op("matmul", nil, weights, v)
}

// MergedHeadsAttention is multi-head attention of q, k, v [B, H, L, E] with its
// heads merged back, [B, L, H·Ev]: the layout the output projection reads.
// Where nothing records gradients and the device's backend can write each
// head's output in place (fusion.AttentionTransposer: the CPU, WebGPU), it
// does, and the merge is a view; otherwise the output [B, H, L, Ev] is
// permuted and the merge copies it (a twentieth of a MiniLM forward on the
// CPU). Model code calls it between its projections (multimodal's
// encoders, diffuse's UNets).
func MergedHeadsAttention(q, k, v, mask *core.Tensor, attrs core.Attrs) *core.Tensor {
	s := q.Shape()
	// A tracer would not see the backend's call: it gets the op calls.
	if len(s) == 4 && !core.Tracing() && !(core.GradEnabled() && (q.RequiresGrad() || k.RequiresGrad() || v.RequiresGrad())) {
		if b, err := core.BackendFor(q.Device()); err == nil {
			if at, ok := b.(fusion.AttentionTransposer); ok {
				if out, err := at.AttentionTransposed(q, k, v, mask, attrs); err == nil {
					o := out.Shape()
					return out.Reshape(core.Shape{o[0], o[1], o[2] * o[3]})
				}
			}
		}
	}
	o := q.ScaledDotProductAttention(k, v, mask, attrs)
	if o.Err() != nil {
		return o
	}
	os := o.Shape()
	return o.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{os[0], os[2], os[1] * os[3]})
}
