package webgpu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Scaled dot-product attention is composed of GPU kernels: two matmuls
// around one row kernel that scales, masks and normalises the scores. The
// row kernel is torch's safe softmax: a row whose keys are all masked gives
// zeros, not NaN. The backward pass reuses the same probabilities and the
// softmax backward kernel.

// attentionProbs returns softmax(q k^T * scale + mask) with causal and
// boolean masks applied, shape [batch..., L, S]. q's first row is query
// row0 of the whole attention (the causal mask needs it when the queries
// run in chunks).
func attentionProbs(g *Backend, q, k, mask *core.Tensor, a core.Attrs, sh oprules.SDPAShapes, row0 int) (*core.Tensor, error) {
	scores := core.Call1("matmul", nil, q, k.Transpose())
	if err := scores.Err(); err != nil {
		return nil, err
	}
	defer scores.Release()
	probs, err := core.Empty(g, scores.Shape(), scores.DType())
	if err != nil {
		return nil, err
	}
	logit := "(v0(o, R_) * pf(0u))"
	ins := []*core.Tensor{scores}
	if mask != nil {
		ins = append(ins, mask)
		if mask.DType() == core.Bool {
			logit = "select(-f_inf(), " + logit + ", v1(o, R_) != 0u)"
		} else {
			logit = "(" + logit + " + v1(o, R_))"
		}
	}
	if a.Bool("is_causal") {
		logit = "select(-f_inf(), " + logit + ", R_ <= o % pu(1u) + pu(2u))"
	}
	at := func(r string) string { return strings.ReplaceAll(logit, "R_", r) }
	body := "\tvar m = -f_inf();\n\tfor (var r = 0u; r < R; r++) { let v = " + at("r") + "; if v > m || is_nan(v) { m = v; } }\n" +
		"\tif m == -f_inf() {\n\t\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = 0.0; }\n\t\treturn;\n\t}\n" +
		kahanSum("s", "m_exp("+at("r")+" - m)") +
		"\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(probs.DType(), "m_exp("+at("r")+" - m) / s") + "; }\n"
	scale := kernelkit.AttentionScale(a, sh.E)
	f := newFrame(scores.Shape(), []int{scores.Rank() - 1})
	set := func(p *params) { p.setF(0, scale); p.setI(1, sh.L); p.setI(2, row0) }
	if !g.frameFits(body, f) {
		// Rows of keys too long for one thread (launch_rows_long.go): the logits
		// one thread per score, then their softmax by reductions.
		err = g.attentionProbsLong(f, ins, "\tout0[oat(o, r)] = "+at("r")+";\n", set, probs)
	} else {
		err = g.reduceRun(f, ins, probs, false, body, set)
	}
	if err != nil {
		probs.Release()
		return nil, err
	}
	return probs, nil
}

// attentionProbsLong writes the safe softmax of the logits body writes
// (one thread per score) into probs.
func (g *Backend) attentionProbsLong(f frame, ins []*core.Tensor, body string, set func(*params), probs *core.Tensor) error {
	logits, err := core.Empty(g, f.Shape, core.F32)
	if err != nil {
		return err
	}
	defer logits.Release()
	if err := g.reduceRun(f, ins, logits, true, body, set); err != nil {
		return err
	}
	return g.softmaxLong(f, logits, probs, false, true)
}

// copyInto writes src*scale into dst (same shape).
func copyInto(g *Backend, src, dst *core.Tensor, scale float64) error {
	if err := src.Err(); err != nil {
		return err
	}
	defer src.Release()
	return g.mapRun([]*core.Tensor{src}, dst, "x0 * pf(0u)", func(p *params) { p.setF(0, scale) })
}

func attentionKernel(k *core.KernelCall) error {
	mask := k.Inputs[3]
	if mask != nil {
		mask = mask.Detach()
	}
	return gpuOf(k).attentionInto(k.Inputs[0].Detach(), k.Inputs[1].Detach(), k.Inputs[2].Detach(), mask, k.Attrs, k.Outputs[0])
}

// AttentionTransposed is scaled_dot_product_attention of q [B, H, L, E]
// (k and v alike) returning its output already transposed to [B, L, H, Ev]
// and contiguous, as the projection after attention reads it: the heads
// are written in place, so the copy that reshaping the transposed output
// to [B, L, H*Ev] makes is never needed. It records no autograd.
func (g *Backend) AttentionTransposed(q, k, v, mask *core.Tensor, attrs core.Attrs) (*core.Tensor, error) {
	g.profileOp("attention_transposed")
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return nil, fmt.Errorf("webgpu: transposed attention takes [batch, heads, L, E] operands, got shapes %v, %v and %v",
			q.Shape(), k.Shape(), v.Shape())
	}
	for i, t := range []*core.Tensor{q, k, v, mask} {
		if t != nil && t.Device().Kind != "webgpu" {
			return nil, fmt.Errorf("webgpu: attention operand %d is on %s", i, t.Device())
		}
	}
	sh, err := oprules.AttentionShapes(q.Shape(), k.Shape(), v.Shape())
	if err != nil {
		return nil, err
	}
	if len(sh.Batch) != 2 || q.DType() != k.DType() || q.DType() != v.DType() {
		return nil, fmt.Errorf("webgpu: transposed attention needs one dtype and [batch, heads] batch dims, got %v", sh.Batch)
	}
	b, h := sh.Batch[0], sh.Batch[1]
	out, err := core.Empty(g, core.Shape{b, sh.L, h, sh.Ev}, q.DType())
	if err != nil {
		return nil, err
	}
	heads := core.NewView(out, core.Shape{b, h, sh.L, sh.Ev}, []int{sh.L * h * sh.Ev, sh.Ev, h * sh.Ev, 1}, 0)
	if err := g.attentionInto(q, k, v, mask, attrs, heads); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// attentionInto writes attention into out, a tensor of the output's shape
// whose columns are contiguous.
func (g *Backend) attentionInto(q, kk, v, mask *core.Tensor, attrs core.Attrs, out *core.Tensor) error {
	sh, err := oprules.AttentionShapes(q.Shape(), kk.Shape(), v.Shape())
	if err != nil {
		return err
	}
	if out.Numel() == 0 {
		return nil
	}
	composed := func() error { return g.attentionComposed(q, kk, v, mask, attrs, sh, out) }
	if !attentionFusable(q, kk, v, mask, sh) || !columnsContiguous(out) || !g.loopsFit(attentionFusedTrips(sh)) {
		return composed()
	}
	// Which is faster depends on the device: on a GPU the one launch, on a
	// software driver (where a thread's loops cost more than launches) the
	// composed kernels. The tuner times both once per shape class.
	fused := func() error {
		return g.attentionFused(q, kk, v, out, sh, kernelkit.AttentionScale(attrs, sh.E), attrs.Bool("is_causal"))
	}
	class := fmt.Sprintf("s%d-e%d-ev%d-l%d-b%d", sh.S, sh.E, sh.Ev, bucket(sh.L), bucket(sh.Batch.Numel()))
	run := map[string]func() error{"fused": fused, "composed": composed}
	pick := g.tuner.choose("attention", class, map[string]int{"s": sh.S, "e": sh.E, "ev": sh.Ev, "l": sh.L, "batch": sh.Batch.Numel()},
		[]string{"fused", "composed"}, "fused", func(v string) error { return run[v]() })
	return run[pick]()
}

// matmulInto writes a @ b straight into out (of the product's shape, a
// view whose columns are contiguous will do), saving the copy a core.Call
// would need.
func (g *Backend) matmulInto(a, b, out *core.Tensor) error { return g.matmulScaledInto(a, b, out, 1) }

// matmulScaledInto is matmulInto of (a @ b) * scale, scaling as the product
// is stored rather than in a pass of its own.
func (g *Backend) matmulScaledInto(a, b, out *core.Tensor, scale float64) error {
	d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
	if err != nil {
		return err
	}
	if d.AVec || d.BVec || !columnsContiguous(out) || !slices.Equal(out.Shape(), d.Out) {
		return copyInto(g, core.Call1("matmul", nil, a, b), out, scale)
	}
	var ep *epilogue
	if scale != 1 {
		ep = &epilogue{expr: "x0 * " + lower.F32Literal(scale)}
	}
	return g.matmulEpilogue(a, b, out, d.Batch, d.M, d.K, d.N, "", ep)
}

// attentionBackwardKernel: with P the probabilities, dv = P^T g,
// dS = softmax_backward(P, g v^T), dq = dS k * scale, dk = dS^T q * scale,
// and for a float mask dmask = dS.
func attentionBackwardKernel(k *core.KernelCall) error {
	g := gpuOf(k)
	q, kk, v, gr, mask := k.Inputs[0].Detach(), k.Inputs[1].Detach(), k.Inputs[2].Detach(), k.Inputs[3].Detach(), k.Inputs[4]
	sh, err := oprules.AttentionShapes(q.Shape(), kk.Shape(), v.Shape())
	if err != nil {
		return err
	}
	if mask != nil {
		mask = mask.Detach()
	}
	for _, o := range k.Outputs {
		if o.Numel() == 0 {
			// Nothing flows through an empty side; zero what exists.
			for _, z := range k.Outputs {
				if err := g.fill(z, 0); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return g.attentionBackward(q, kk, v, gr, mask, k.Attrs, sh, k.Outputs)
}

func init() {
	register("scaled_dot_product_attention", attentionKernel)
	register("_scaled_dot_product_attention_backward", attentionBackwardKernel)
}

// columnsContiguous says whether a matrix (or batch of them) has unit
// column stride, as the matmul store needs.
func columnsContiguous(t *core.Tensor) bool {
	st := t.Strides()
	return t.Rank() >= 2 && (st[len(st)-1] == 1 || t.Shape()[t.Rank()-1] <= 1)
}
