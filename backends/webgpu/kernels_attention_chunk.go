package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
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
// through materialised scores, one chunk of queries (and, where a single
// query row over every batch item is still too large, one item of the
// first batch dim) at a time.
func (g *Backend) attentionComposed(q, kk, v, mask *core.Tensor, attrs core.Attrs, sh oprules.SDPAShapes, out *core.Tensor) error {
	budget := min(attentionChunkBytes, g.limits.MaxStorageBufferBindingSize) / 4
	rank := len(sh.Batch) + 2
	rowScores := uint64(sh.Batch.Numel()) * uint64(sh.S)
	if rowScores > budget && len(sh.Batch) > 0 && sh.Batch[0] > 1 {
		// Split the first batch dim; each item then splits its queries.
		item := sh
		item.Batch = append(core.Shape{1}, sh.Batch[1:]...)
		for i := range sh.Batch[0] {
			err := g.attentionComposed(narrowed(q, rank, 0, i, 1), narrowed(kk, rank, 0, i, 1), narrowed(v, rank, 0, i, 1),
				narrowed(mask, rank, 0, i, 1), attrs, item, narrowed(out, rank, 0, i, 1))
			if err != nil {
				return err
			}
		}
		return nil
	}
	if rowScores > budget {
		return fmt.Errorf("webgpu: attention over %d keys for %d batch items needs %d bytes of scores for one query, more than the %d a step may take; use device cpu",
			sh.S, sh.Batch.Numel(), rowScores*4, budget*4)
	}
	rows := max(1, int(budget/rowScores))
	for l0 := 0; l0 < sh.L; l0 += rows {
		n := min(rows, sh.L-l0)
		part := sh
		part.L = n
		qs, ms, os := q, mask, out
		if n < sh.L {
			qs, ms, os = narrowed(q, rank, rank-2, l0, n), narrowed(mask, rank, rank-2, l0, n), narrowed(out, rank, rank-2, l0, n)
		}
		probs, err := attentionProbs(g, qs, kk, ms, attrs, part, l0)
		if err != nil {
			return err
		}
		err = g.matmulInto(probs, v, os)
		probs.Release()
		if err != nil {
			return err
		}
	}
	return nil
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
