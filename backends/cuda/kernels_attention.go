//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Scaled dot-product attention as cuBLAS products around a softmax row
// program: scores = q k^T, P = safe_softmax(scale*scores + mask), out = P v.
// The backward pass recomputes P, then dS = P*(dP - rowsum(P*dP)) with
// dP = g v^T, dq = scale dS k, dk = scale dS^T q, dv = P^T g; dS is also an
// additive mask's gradient. Scores of f16 and bf16 inputs are kept in f32.

// attention is one call's operands, viewed with the broadcast batch dims.
type attention struct {
	sh      oprules.SDPAShapes
	q, k, v *core.Tensor
	mask    *core.Tensor // over the scores' shape, or nil
	scale   float64
	causal  bool
	scoreT  core.DType // dtype of the scores buffer
}

func newAttention(kc *core.KernelCall, mask *core.Tensor) (*attention, error) {
	q, k, v := kc.Inputs[0], kc.Inputs[1], kc.Inputs[2]
	sh, err := oprules.AttentionShapes(q.Shape(), k.Shape(), v.Shape())
	if err != nil {
		return nil, err
	}
	a := &attention{sh: sh, scale: kernelkit.AttentionScale(kc.Attrs, sh.E), causal: kc.Attrs.Bool("is_causal"), scoreT: q.DType()}
	if a.scoreT == core.F16 || a.scoreT == core.BF16 {
		a.scoreT = core.F32
	}
	view := func(t *core.Tensor, rows, cols int) *core.Tensor {
		s := append(sh.Batch.Clone(), rows, cols)
		return core.NewView(t, s, lower.BroadcastStrides(t, s), t.Offset())
	}
	a.q, a.k, a.v = view(q, sh.L, sh.E), view(k, sh.S, sh.E), view(v, sh.S, sh.Ev)
	if mask != nil {
		a.mask = view(mask, sh.L, sh.S)
	}
	return a, nil
}

// transposed swaps the last two dims of a view.
func transposed(t *core.Tensor) *core.Tensor {
	s, st := t.Shape(), t.Strides()
	n := len(s)
	s[n-2], s[n-1] = s[n-1], s[n-2]
	st[n-2], st[n-1] = st[n-1], st[n-2]
	return core.NewView(t, s, st, t.Offset())
}

// probs computes the attention weights P [batch.., L, S] in dtype d.
func (g *Backend) attentionProbs(op string, a *attention, d core.DType) (*core.Tensor, error) {
	sh := a.sh
	scores, err := core.Empty(g, sh.Scores(), a.scoreT)
	if err != nil {
		return nil, err
	}
	defer scores.Release()
	if err := g.matmulInto(op, a.q, transposed(a.k), scores, sh.Batch, sh.L, sh.E, sh.S, 1); err != nil {
		return nil, err
	}
	p, err := core.Empty(g, sh.Scores(), d)
	if err != nil {
		return nil, err
	}
	ins := []*core.Tensor{scores}
	t := "pf(0u) * (f64)x0"
	if a.mask != nil {
		ins = append(ins, a.mask)
		if a.mask.DType() == core.Bool {
			t = "(x1 != 0u ? " + t + " : -wt_inf64())"
		} else {
			t = "(" + t + " + (f64)x1)"
		}
	}
	if a.causal {
		// Row o is query o % L; member r is key r.
		t = "((i64)r > (i64)(o % pi(0u)) ? -wt_inf64() : " + t + ")"
	}
	var sc lower.Scalars
	sc.SetF(0, a.scale)
	sc.SetI(0, int64(sh.L))
	err = g.rows(rowProgram{op: op, frame: lower.NewFrame(sh.Scores(), []int{len(sh.Batch) + 1}), ins: ins,
		outs: []*core.Tensor{p}, sc: &sc,
		passes: []rowPass{{stats: []rowStat{{name: "st", acc: "SoftAcc<f64>", value: t}},
			then: "const bool none = st.m == -wt_inf64();"}},
		// Safe softmax: a row whose keys are all masked gives zeros.
		writes: []string{"none ? 0.0 : exp(" + t + " - st.m) / st.s"}})
	if err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

func attentionKernel(kc *core.KernelCall) error {
	g := cudaOf(kc)
	a, err := newAttention(kc, kc.Inputs[3])
	if err != nil {
		return err
	}
	sh, out := a.sh, kc.Outputs[0]
	if out.Numel() == 0 {
		return nil
	}
	p, err := g.attentionProbs("scaled_dot_product_attention", a, a.q.DType())
	if err != nil {
		return err
	}
	defer p.Release()
	return g.matmulInto("scaled_dot_product_attention", p, a.v, out, sh.Batch, sh.L, sh.S, sh.Ev, 1)
}

func attentionBackwardKernel(kc *core.KernelCall) error {
	const op = "_scaled_dot_product_attention_backward"
	g := cudaOf(kc)
	a, err := newAttention(kc, kc.Inputs[4])
	if err != nil {
		return err
	}
	sh, up := a.sh, kc.Inputs[3]
	dq, dk, dv := kc.Outputs[0], kc.Outputs[1], kc.Outputs[2]
	d := a.q.DType()
	p, err := g.attentionProbs(op, a, d)
	if err != nil {
		return err
	}
	defer p.Release()
	dp, err := core.Empty(g, sh.Scores(), a.scoreT)
	if err != nil {
		return err
	}
	defer dp.Release()
	if err := g.matmulInto(op, up, transposed(a.v), dp, sh.Batch, sh.L, sh.Ev, sh.S, 1); err != nil {
		return err
	}
	var maskGrad *core.Tensor
	if len(kc.Outputs) > 3 {
		maskGrad = kc.Outputs[3]
	}
	ds, err := core.Empty(g, sh.Scores(), d)
	if err != nil {
		return err
	}
	defer ds.Release()
	err = g.rows(rowProgram{op: op, frame: lower.NewFrame(sh.Scores(), []int{len(sh.Batch) + 1}), ins: []*core.Tensor{p, dp},
		outs:   []*core.Tensor{ds},
		passes: []rowPass{{stats: []rowStat{{name: "t", acc: "SumAcc<f64>", value: "(f64)x0 * x1"}}}},
		writes: []string{"(f64)x0 * ((f64)x1 - t.s)"}})
	if err != nil {
		return err
	}
	if maskGrad != nil {
		if err := g.mapRun(op, []*core.Tensor{ds}, maskGrad, "x0", nil); err != nil {
			return err
		}
	}
	if err := g.matmulInto(op, ds, a.k, dq, sh.Batch, sh.L, sh.S, sh.E, a.scale); err != nil {
		return err
	}
	if err := g.matmulInto(op, transposed(ds), a.q, dk, sh.Batch, sh.S, sh.L, sh.E, a.scale); err != nil {
		return err
	}
	return g.matmulInto(op, transposed(p), up, dv, sh.Batch, sh.S, sh.L, sh.Ev, 1)
}

func init() {
	register("scaled_dot_product_attention", attentionKernel)
	register("_scaled_dot_product_attention_backward", attentionBackwardKernel)
}
