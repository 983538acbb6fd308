package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// attentionChunkBytes caps the scores one composed attention step holds
// (they and their probabilities are live together): a 64x64 diffusion
// UNet's self-attention has 4096 queries by 4096 keys per head, 512 MiB of
// f32 scores over 8 heads, more than a software driver's largest binding
// and more memory than a step should take. The composed path therefore
// runs the queries in chunks whose scores fit, each chunk's output
// written in place. Tests lower it to reach the chunked path at small
// sizes.
var attentionChunkBytes uint64 = 256 << 20

// attentionComposed writes softmax(q k^T * scale + mask) v into out
// through materialised scores, one chunk of queries at a time
// (attentionChunks).
func (g *Backend) attentionComposed(q, kk, v, mask *core.Tensor, attrs core.Attrs, sh oprules.SDPAShapes, out *core.Tensor) error {
	return g.attentionChunks(sh, []*core.Tensor{q, kk, v, mask, out}, func(sh oprules.SDPAShapes, t []*core.Tensor) error {
		return g.attentionRows(sh, t, []int{0, 3, 4}, func(part oprules.SDPAShapes, row0 int, r []*core.Tensor) error {
			probs, err := attentionProbs(g, r[0], t[1], r[3], attrs, part, row0)
			if err != nil {
				return err
			}
			defer probs.Release()
			return g.matmulInto(probs, t[2], r[4])
		})
	})
}

// attentionBackward writes dq, dk, dv (and a float mask's gradient) into
// outs from the probabilities P, recomputed chunk by chunk as the forward
// makes them: dv = P^T g, dS = softmax_backward(P, g v^T),
// dq = dS k * scale, dk = dS^T q * scale, dmask = dS. dq's and dmask's
// rows are each chunk's own; dk and dv sum over the chunks.
func (g *Backend) attentionBackward(q, kk, v, gr, mask *core.Tensor, attrs core.Attrs, sh oprules.SDPAShapes, outs []*core.Tensor) error {
	scale := kernelkit.AttentionScale(attrs, sh.E)
	ts := append([]*core.Tensor{q, kk, v, mask, gr}, outs...)
	return g.attentionChunks(sh, ts, func(sh oprules.SDPAShapes, t []*core.Tensor) error {
		var dk, dv *core.Tensor // sums over the chunks so far, when there are several
		defer func() { dk.Release(); dv.Release() }()
		err := g.attentionRows(sh, t, []int{0, 3, 4, 5, 8}, func(part oprules.SDPAShapes, row0 int, r []*core.Tensor) error {
			probs, err := attentionProbs(g, r[0], t[1], r[3], attrs, part, row0)
			if err != nil {
				return err
			}
			defer probs.Release()
			whole := part.L == sh.L
			if whole {
				err = g.matmulInto(probs.Transpose(), r[4], t[7])
			} else {
				dv, err = accumulate(dv, core.Call1("matmul", nil, probs.Transpose(), r[4]))
			}
			if err != nil {
				return err
			}
			dp := core.Call1("matmul", nil, r[4], t[2].Transpose())
			ds := core.Call1("_softmax_backward", core.Attrs{"axis": -1}, probs, dp)
			dp.Release()
			if err := ds.Err(); err != nil {
				return err
			}
			defer ds.Release()
			if err := g.matmulScaledInto(ds, t[1], r[5], scale); err != nil {
				return err
			}
			if whole {
				err = g.matmulScaledInto(ds.Transpose(), r[0], t[6], scale)
			} else {
				dk, err = accumulate(dk, core.Call1("matmul", nil, ds.Transpose(), r[0]))
			}
			if err != nil {
				return err
			}
			if len(r) > 8 {
				return g.storeInto(ds, r[8], 1)
			}
			return nil
		})
		if err != nil || dk == nil {
			return err
		}
		if err := g.storeInto(dv, t[7], 1); err != nil {
			return err
		}
		return g.storeInto(dk, t[6], scale)
	})
}

// accumulate is sum + part (part itself when sum is nil), releasing both.
func accumulate(sum, part *core.Tensor) (*core.Tensor, error) {
	if err := part.Err(); err != nil {
		sum.Release()
		return nil, err
	}
	if sum == nil {
		return part, nil
	}
	next := core.Call1("add", nil, sum, part)
	sum.Release()
	part.Release()
	if err := next.Err(); err != nil {
		return nil, err
	}
	return next, nil
}

// storeInto writes src times scale into out, a tensor of src's shape with
// any strides and offset (a chunk's view of a larger output; mapRun writes
// whole tensors only).
func (g *Backend) storeInto(src, out *core.Tensor, scale float64) error {
	f := newFrame(out.Shape(), []int{out.Rank() - 1})
	body := "\tout0[oat(o, r)] = " + storeExpr(out.DType(), "v0(o, r) * pf(0u)") + ";\n"
	return g.reduceRun(f, []*core.Tensor{src}, out, true, body, func(p *params) { p.setF(0, scale) })
}

// attentionChunks runs step over attention operands t (q, k, v, mask,
// then further tensors of the broadcast batch shape: outputs, gradients),
// item by item of the first batch dim when a single query row over every
// batch item has more scores than a step may hold.
func (g *Backend) attentionChunks(sh oprules.SDPAShapes, t []*core.Tensor, step func(oprules.SDPAShapes, []*core.Tensor) error) error {
	budget := g.attentionBudget()
	rowScores := uint64(sh.Batch.Numel()) * uint64(sh.S)
	if rowScores <= budget || len(sh.Batch) == 0 || sh.Batch[0] == 1 {
		if rowScores > budget {
			return fmt.Errorf("webgpu: attention over %d keys for %d batch items needs %d bytes of scores for one query, more than the %d a step may take; use device cpu",
				sh.S, sh.Batch.Numel(), rowScores*4, budget*4)
		}
		return step(sh, t)
	}
	item := sh
	item.Batch = append(core.Shape{1}, sh.Batch[1:]...)
	rank := len(sh.Batch) + 2
	for i := range sh.Batch[0] {
		parts := make([]*core.Tensor, len(t))
		for j, x := range t {
			parts[j] = narrowed(x, rank, 0, i, 1)
		}
		if err := g.attentionChunks(item, parts, step); err != nil {
			return err
		}
	}
	return nil
}

// attentionRows runs step over chunks of the queries whose scores fit the
// budget, giving it the chunk's shapes, its first query row and t with the
// operands at indices rowed (those with a query axis: q, the mask where it
// does not broadcast there, outputs and gradients) narrowed to the chunk.
func (g *Backend) attentionRows(sh oprules.SDPAShapes, t []*core.Tensor, rowed []int, step func(oprules.SDPAShapes, int, []*core.Tensor) error) error {
	rows := sh.L // no keys: no scores, one step
	if per := uint64(sh.Batch.Numel()) * uint64(sh.S); per > 0 {
		rows = max(1, int(g.attentionBudget()/per))
	}
	rank := len(sh.Batch) + 2
	for l0 := 0; l0 < sh.L; l0 += rows {
		n := min(rows, sh.L-l0)
		part := sh
		part.L = n
		r := t
		if n < sh.L {
			r = append([]*core.Tensor{}, t...)
			for _, j := range rowed {
				if j < len(t) {
					r[j] = narrowed(t[j], rank, rank-2, l0, n)
				}
			}
		}
		if err := step(part, l0, r); err != nil {
			return err
		}
	}
	return nil
}

// attentionBudget is how many f32 scores one step may hold.
func (g *Backend) attentionBudget() uint64 {
	return min(attentionChunkBytes, g.limits.MaxStorageBufferBindingSize) / 4
}

// narrowed is the view of t's [start, start+n) along axis of the rank-dim
// shape t broadcasts to; t itself where it broadcasts along that axis
// (the axis is absent from t or has size 1). The view shares t's storage:
// it is never released.
func narrowed(t *core.Tensor, rank, axis, start, n int) *core.Tensor {
	if t == nil {
		return nil
	}
	d := axis - (rank - t.Rank())
	if d < 0 || t.Shape()[d] == 1 {
		return t
	}
	shape := t.Shape().Clone()
	shape[d] = n
	st := t.Strides()
	return core.NewView(t, shape, st, t.Offset()+start*st[d])
}
