package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels of the attention ops: scaled dot-product attention and its
// backward, in float64 (dense f32 calls take the products of
// kernels_attention_f32.go).

func init() {
	register("scaled_dot_product_attention", attentionKernel)
	register("_scaled_dot_product_attention_backward", attentionBackwardKernel)
}

// attentionCall holds an attention call's operands broadcast to the batch
// shape as float64, with the mask made additive (a false bool is -inf).
type attentionCall struct {
	oprules.SDPAShapes
	batch         int
	q, k, v, mask []float64
	scale         float64
	causal        bool
}

func readAttention(kc *core.KernelCall, mask *core.Tensor) (*attentionCall, error) {
	q, k, v := kc.Inputs[0], kc.Inputs[1], kc.Inputs[2]
	sh, err := oprules.AttentionShapes(q.Shape(), k.Shape(), v.Shape())
	if err != nil {
		return nil, err
	}
	at := &attentionCall{SDPAShapes: sh, batch: sh.Batch.Numel(),
		scale: kernelkit.AttentionScale(kc.Attrs, sh.E), causal: kc.Attrs.Bool("is_causal")}
	b := sh.Batch
	at.q = readF64As(q, append(b.Clone(), sh.L, sh.E))
	at.k = readF64As(k, append(b.Clone(), sh.S, sh.E))
	at.v = readF64As(v, append(b.Clone(), sh.S, sh.Ev))
	if mask != nil {
		at.mask = readF64As(mask, sh.Scores())
		if mask.DType() == core.Bool {
			for i, m := range at.mask {
				at.mask[i] = 0
				if m == 0 {
					at.mask[i] = math.Inf(-1)
				}
			}
		}
	}
	return at, nil
}

// probs fills p (S values) with the attention weights of query i of batch
// b. A row whose scores are all -inf gets zeros, as torch's safe softmax
// gives; a NaN score makes the row NaN.
func (at *attentionCall) probs(b, i int, p []float64) {
	qrow := at.q[(b*at.L+i)*at.E : (b*at.L+i+1)*at.E]
	masked := true
	for j := range p {
		if at.causal && j > i {
			p[j] = math.Inf(-1)
			continue
		}
		krow := at.k[(b*at.S+j)*at.E : (b*at.S+j+1)*at.E]
		var s float64
		for e, qv := range qrow {
			s += qv * krow[e]
		}
		s *= at.scale
		if at.mask != nil {
			s += at.mask[(b*at.L+i)*at.S+j]
		}
		p[j] = s
		masked = masked && math.IsInf(s, -1)
	}
	if masked {
		clear(p)
		return
	}
	softmaxLine(p, p, 0, len(p), 1, false)
}

func attentionKernel(k *core.KernelCall) error {
	if attentionF32Forward(k) {
		return nil
	}
	at, err := readAttention(k, k.Inputs[3])
	if err != nil {
		return err
	}
	L, S, Ev := at.L, at.S, at.Ev
	out := tempF64(at.batch * L * Ev)
	parallelFor(at.batch*L, S*(at.E+Ev)*2, func(lo, hi int) {
		p := make([]float64, S)
		for r := lo; r < hi; r++ {
			b, i := r/L, r%L
			at.probs(b, i, p)
			orow := out[r*Ev : (r+1)*Ev]
			for j, pj := range p {
				vrow := at.v[(b*S+j)*Ev : (b*S+j+1)*Ev]
				for e, vv := range vrow {
					orow[e] += pj * vv
				}
			}
		}
	})
	writeF64(k.Outputs[0], out)
	return nil
}

// attentionBackwardKernel: with P the weights and dP = g v^T,
// dS = P*(dP - rowsum(P*dP)); dq = scale dS k, dk = scale dS^T q, dv = P^T g,
// and dS itself is the gradient of an additive mask.
func attentionBackwardKernel(k *core.KernelCall) error {
	if attentionF32Backward(k) {
		return nil
	}
	at, err := readAttention(k, k.Inputs[4])
	if err != nil {
		return err
	}
	L, S, E, Ev := at.L, at.S, at.E, at.Ev
	g := readF64(k.Inputs[3])
	P, dS, dq := tempF64(at.batch*L*S), tempF64(at.batch*L*S), tempF64(at.batch*L*E)
	parallelFor(at.batch*L, S*(E+Ev)*3, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, i := r/L, r%L
			p, ds, grow := P[r*S:(r+1)*S], dS[r*S:(r+1)*S], g[r*Ev:(r+1)*Ev]
			at.probs(b, i, p)
			var total float64
			for j := range ds {
				vrow := at.v[(b*S+j)*Ev : (b*S+j+1)*Ev]
				var d float64
				for e, gv := range grow {
					d += gv * vrow[e]
				}
				ds[j] = d
				total += p[j] * d
			}
			qrow := dq[r*E : (r+1)*E]
			for j := range ds {
				ds[j] = p[j] * (ds[j] - total)
				krow := at.k[(b*S+j)*E : (b*S+j+1)*E]
				for e, kv := range krow {
					qrow[e] += at.scale * ds[j] * kv
				}
			}
		}
	})
	dk, dv := tempF64(at.batch*S*E), tempF64(at.batch*S*Ev)
	parallelFor(at.batch*S, L*(E+Ev)*2, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			b, j := r/S, r%S
			krow, vrow := dk[r*E:(r+1)*E], dv[r*Ev:(r+1)*Ev]
			for i := 0; i < L; i++ {
				row := b*L + i
				c := at.scale * dS[row*S+j]
				for e, qv := range at.q[row*E : (row+1)*E] {
					krow[e] += c * qv
				}
				pij := P[row*S+j]
				for e, gv := range g[row*Ev : (row+1)*Ev] {
					vrow[e] += pij * gv
				}
			}
		}
	})
	writeF64(k.Outputs[0], dq)
	writeF64(k.Outputs[1], dk)
	writeF64(k.Outputs[2], dv)
	if len(k.Outputs) == 4 {
		writeF64(k.Outputs[3], dS)
	}
	return nil
}
