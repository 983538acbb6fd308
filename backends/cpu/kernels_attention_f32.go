package cpu

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Attention on dense f32 operands through the packed gemm: per batch entry
// and head, scores = scale·Q Kᵀ, row softmax, out = P V, and backward
// dP = G Vᵀ, dS = P∘(dP - rowsum(P∘dP)), dQ = scale·dS K,
// dK = scale·dSᵀ Q, dV = Pᵀ G - five products instead of the float64
// loops of kernels_attention.go, which the transformer step spent 60% of
// its time in. An f32 or bool mask is applied at its own shape
// (kernels_attention_mask.go); broadcast batch dims, other masks and a
// requested mask gradient take the float64 kernels. Outputs are dense
// (core allocates them).

// attentionF32 holds a dense f32 call's operands per batch entry.
type attentionF32 struct {
	oprules.SDPAShapes
	batch   int
	q, k, v f32Rows
	scale   float32
	causal  bool
	mask    *attentionMask // nil without one
	// heads, when set, lays the forward output out as [B, L, heads, Ev]
	// (the batch entries being B*heads): AttentionTransposed.
	heads int
}

// readAttentionF32 returns the call's f32 views, or false when it is not
// the dense, unbroadcast case (with an f32 or bool mask, or none) this
// path covers.
func readAttentionF32(kc *core.KernelCall, mask *core.Tensor) (*attentionF32, bool) {
	return attentionOperandsF32(kc.Inputs[0], kc.Inputs[1], kc.Inputs[2], mask, kc.Attrs)
}

func attentionOperandsF32(q, k, v, mask *core.Tensor, attrs core.Attrs) (*attentionF32, bool) {
	if q.DType() != core.F32 || k.DType() != core.F32 || v.DType() != core.F32 {
		return nil, false
	}
	sh, err := oprules.AttentionShapes(q.Shape(), k.Shape(), v.Shape())
	if err != nil {
		return nil, false
	}
	var am *attentionMask
	if mask != nil {
		var ok bool
		if am, ok = newAttentionMask(mask, sh); !ok {
			return nil, false
		}
		if am.none() {
			am = nil // adds nothing: the unmasked paths (the tiles) apply
		}
	}
	b := sh.Batch
	if !q.Shape().Equal(append(b.Clone(), sh.L, sh.E)) || !k.Shape().Equal(append(b.Clone(), sh.S, sh.E)) ||
		!v.Shape().Equal(append(b.Clone(), sh.S, sh.Ev)) {
		return nil, false
	}
	return &attentionF32{SDPAShapes: sh, batch: b.Numel(), q: rowsOf(q), k: rowsOf(k), v: rowsOf(v),
		scale: float32(kernelkit.AttentionScale(attrs, sh.E)), causal: attrs.Bool("is_causal"), mask: am}, true
}

// f32Rows is an attention operand [batch..., rows, width] as each batch
// entry's rows: entry b's row r starts at data[off[b]+r*ld]. A multi-head
// layer's q, k and v are transposed views of one projection ([B, L, H, E]
// seen as [B, H, L, E]): rows H*E apart, which the products read in place
// (their leading dimension) instead of gathering a copy of each.
type f32Rows struct {
	data []float32
	off  []int
	ld   int
}

// at is entry b from row r on.
func (r f32Rows) at(b, row int) []float32 { return r.data[r.off[b]+row*r.ld:] }

// rowsOf reads t's layout: in place when its rows are unit-stride, else a
// dense copy (f32Logical).
func rowsOf(t *core.Tensor) f32Rows {
	shape, st := t.Shape(), t.Strides()
	n := len(shape)
	rows, width := shape[n-2], shape[n-1]
	batch := shape[:n-2].Numel()
	ld := st[n-2]
	if (width > 1 && st[n-1] != 1) || ld < width || t.IsContiguous() {
		dense := f32Logical(t)
		off := make([]int, batch)
		for b := range off {
			off[b] = b * rows * width
		}
		return f32Rows{data: dense, off: off, ld: width}
	}
	off := make([]int, batch)
	idx := make([]int, n-2)
	for b := range off {
		o := t.Offset()
		for d, i := range idx {
			o += i * st[d]
		}
		off[b] = o
		for d := len(idx) - 1; d >= 0; d-- { // next batch index, row-major
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return f32Rows{data: f32view(host(t)), off: off, ld: ld}
}

// f32Data is a dense f32 tensor's elements.
func f32Data(t *core.Tensor) []float32 {
	return f32view(host(t))[t.Offset() : t.Offset()+t.Numel()]
}

// f32Logical is an f32 tensor's elements in logical order: in place when
// dense, else gathered run by run in f32 (a multi-head layer's q, k and v
// are transposed views of one projection: runs of a head's width).
func f32Logical(t *core.Tensor) []float32 {
	if t.IsContiguous() {
		return f32Data(t)
	}
	out := tempF32(t.Numel())
	gatherF32Into(out, t)
	return out
}

// gatherF32Into writes f32 tensor t's elements into out in logical order.
// The two innermost dims of the coalesced layout are looped here rather
// than run by run through walk.runs, whose callback per run cost more
// than the copy when runs are short: a multi-head output merged back to
// [B, L, H·E] is a run of E = 8 floats per (position, head). A transposed
// view (a feature map flattened to tokens: rows contiguous in the source,
// each row's elements a plane apart) is copied by transposeInto.
func gatherF32Into(out []float32, t *core.Tensor) {
	shape := t.Shape()
	if len(out) == 0 {
		return
	}
	src := f32view(host(t))
	w := walk{shape: shape.Clone(), strides: [][]int{viewStrides(t, shape)}, base: []int{t.Offset()}}
	w.coalesce()
	r := len(w.shape)
	if r < 2 {
		step := w.step(0)
		for k := range out {
			out[k] = src[w.base[0]+k*step]
		}
		return
	}
	rows, inner := w.shape[r-2], w.shape[r-1]
	rowStride, step := w.strides[0][r-2], w.strides[0][r-1]
	outer := walk{shape: w.shape[:r-2], strides: [][]int{w.strides[0][:r-2]}, base: w.base}
	ostep := outer.step(0)
	i := 0
	outer.runs(func(pos []int, n int) {
		for o := range n {
			base := pos[0] + o*ostep
			block := out[i : i+rows*inner]
			switch {
			case step == 1:
				for row := range rows {
					dst, from := block[row*inner:(row+1)*inner], src[base+row*rowStride:][:inner]
					if inner >= 16 {
						copy(dst, from)
						continue
					}
					//lint:ignore S1001 a short row is cheaper copied in the loop than through copy's call
					for k, v := range from {
						dst[k] = v
					}
				}
			case rowStride == 1 && step > 0: // a negative step (a flipped view) takes the general loop
				transposeInto(block, src[base:], rows, inner, step)
			default:
				for row := range rows {
					dst, at := block[row*inner:(row+1)*inner], base+row*rowStride
					for k := range dst {
						dst[k] = src[at+k*step]
					}
				}
			}
			i += rows * inner
		}
	})
}

// probs fills p (L x S) with entry b's attention weights (a causal row i
// attends to keys 0..i, so none is empty).
func (at *attentionF32) probs(b int, p []float32) {
	L, S, E := at.L, at.S, at.E
	gemmF32Serial(false, true, L, S, E, at.scale, at.q.at(b, 0), at.q.ld, at.k.at(b, 0), at.k.ld, 0, p, S)
	ninf := float32(math.Inf(-1))
	for i := range L {
		row := p[i*S : (i+1)*S]
		if at.mask != nil {
			at.mask.apply(b, i, row)
		}
		if at.causal {
			for j := i + 1; j < S; j++ {
				row[j] = ninf
			}
		}
		softmaxSafeF32(row, true)
	}
}

// attentionBlockRows is how many query rows the forward pass scores at a
// time: a 64 x S block of probabilities stays in L2 while P V reads it,
// where the whole L x S matrix per head (4 MiB at L = S = 1024) was
// written, zeroed by the allocator and read back from memory.
const attentionBlockRows = 64

func attentionF32Forward(k *core.KernelCall) bool {
	at, ok := readAttentionF32(k, k.Inputs[3])
	if !ok || k.Outputs[0].DType() != core.F32 {
		return false
	}
	at.forward(f32Data(k.Outputs[0]))
	return true
}

// AttentionTransposed is scaled_dot_product_attention of dense f32 q
// [B, H, L, E] (k and v alike, possibly transposed views; an f32 or bool
// mask that broadcasts to the scores, or none) returning
// its output already transposed to contiguous [B, L, H, Ev], the layout
// the projection after multi-head attention reads: each block's P V is
// written into its head's columns, so the copy that merging the heads of
// a transposed output makes is never needed. It records no autograd; an
// error sends the IR back to the op and the transpose.
func (be *Backend) AttentionTransposed(q, k, v, mask *core.Tensor, attrs core.Attrs) (*core.Tensor, error) {
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return nil, fmt.Errorf("cpu: transposed attention takes [batch, heads, L, E] operands, got shapes %v, %v and %v",
			q.Shape(), k.Shape(), v.Shape())
	}
	for i, t := range []*core.Tensor{q, k, v, mask} {
		if t != nil && t.Device() != core.CPU {
			return nil, fmt.Errorf("cpu: attention operand %d is on %s", i, t.Device())
		}
	}
	at, ok := attentionOperandsF32(q, k, v, mask, attrs)
	if !ok {
		ms := "none"
		if mask != nil {
			ms = mask.DType().String() + " " + mask.Shape().String()
		}
		return nil, fmt.Errorf("cpu: transposed attention covers dense f32 operands with an f32 or bool mask that broadcasts to the scores (got %v, %v, %v, mask %s)",
			q.DType(), k.DType(), v.DType(), ms)
	}
	b, h := at.Batch[0], at.Batch[1]
	out, err := core.Empty(be, core.Shape{b, at.L, h, at.Ev}, core.F32)
	if err != nil {
		return nil, err
	}
	claimOutput(out) // forward writes every row of every head, as the sdpa kernel of fillsOutputs does
	at.heads = h
	at.forward(f32Data(out))
	return out, nil
}

// forward writes the attention output into out, in parallel over (batch
// entry, row block).
func (at *attentionF32) forward(out []float32) {
	if at.smallHeads() {
		at.forwardTiles(out)
		return
	}
	L, S, E, Ev := at.L, at.S, at.E, at.Ev
	blocks := (L + attentionBlockRows - 1) / attentionBlockRows
	tasks := at.batch * blocks
	workers := max(1, min(NumThreads(), tasks))
	rows := min(L, attentionBlockRows)
	scratch := tempF32(workers * rows * S) // checked here: a refusal inside a worker would not reach guardTemps
	keys := at.keysToScore()               // kernels_attention_keys.go
	per := (tasks + workers - 1) / workers
	// Each worker takes the next task until none is left, rather than a
	// fixed run of them: with padded keys skipped, a batch's blocks differ
	// in cost (the long sentences', the short ones'), and fixed runs left
	// one core with twice the other's work. Every task's rows are its own,
	// so the bits do not depend on who runs it.
	var next atomic.Int64
	parallelFor(workers, per*rows*S*(E+Ev)*2, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			p := scratch[w*rows*S : (w+1)*rows*S]
			for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
				b, width := t/blocks, S
				if keys != nil {
					width = keys[b]
				}
				at.forwardBlock(b, (t%blocks)*attentionBlockRows, width, p, out)
			}
		}
	})
}

// forwardBlock writes the output rows i0.. (at most attentionBlockRows) of
// batch entry b, scored against its first keys keys, using p as the rows'
// scores. Rows are left unnormalised
// until after P V, so the 1/sum scale touches Ev values per row, not S;
// a causal block scores only the keys its last row can see, a padded one
// only those its mask keeps.
func (at *attentionF32) forwardBlock(b, i0, keys int, p, out []float32) {
	L, S, E, Ev := at.L, at.S, at.E, at.Ev
	n := min(attentionBlockRows, L-i0)
	width := S
	if at.causal {
		width = min(S, i0+n)
	}
	width = at.blockKeys(n, width, keys) // kernels_attention_keys.go
	if n*width*E <= gemmSmall {
		at.tinyScores(b, i0, n, width, p)
	} else {
		gemmF32Serial(false, true, n, width, E, at.scale, at.q.at(b, i0), at.q.ld, at.k.at(b, 0), at.k.ld, 0, p, width)
	}
	ninf := float32(math.Inf(-1))
	base, ld := (b*L+i0)*Ev, Ev
	if at.heads > 0 { // entry b is head b%heads of item b/heads: rows heads*Ev apart
		base, ld = ((b/at.heads*L+i0)*at.heads+b%at.heads)*Ev, at.heads*Ev
	}
	o := out[base : base+(n-1)*ld+Ev]
	if width == 0 { // no keys: an empty sum, as the unblocked product gave
		for r := range n {
			clear(o[r*ld : r*ld+Ev])
		}
		return
	}
	var sums [attentionBlockRows]float64
	for r := range n {
		row := p[r*width : (r+1)*width]
		if at.mask != nil {
			at.mask.apply(b, i0+r, row)
		}
		if at.causal {
			for j := i0 + r + 1; j < width; j++ {
				row[j] = ninf
			}
		}
		sums[r] = softmaxSafeF32(row, false)
	}
	vb, ldv := at.v.at(b, 0), at.v.ld
	if n*width*Ev <= gemmSmall {
		for r := range n {
			row := o[r*ld : r*ld+Ev]
			weightedRowsF32(row, p[r*width:(r+1)*width], vb, ldv)
			axpbF32(row, row, float32(1/sums[r]), 0)
		}
		return
	}
	if Ev < gemmNR && n > Ev {
		// A narrow head (Ev below the micro-kernel's 16 or 32 columns) would
		// leave most of each tile empty: compute Oᵀ = Vᵀ Pᵀ instead, whose
		// columns are the block's rows, then scatter it scaled.
		var ot [attentionBlockRows * gemmMaxNR]float32
		gemmF32Serial(true, true, Ev, n, width, 1, vb, ldv, p, width, 0, ot[:Ev*n], n)
		for r := range n {
			inv := float32(1 / sums[r])
			row := o[r*ld : r*ld+Ev]
			for e := range row {
				row[e] = ot[e*n+r] * inv
			}
		}
		return
	}
	gemmF32Serial(false, false, n, Ev, width, 1, p, width, vb, ldv, 0, o, ld)
	for r := range n {
		row := o[r*ld : r*ld+Ev]
		axpbF32(row, row, float32(1/sums[r]), 0)
	}
}

// tinyScores writes the scaled scores of rows i0..i0+n of entry b against
// its first width keys into p: each a vector dot product of two contiguous
// rows. A product this small (a TimeSformer's attention over 8 frames:
// 8 x 8 scores of heads of 64) is below what packing pays for, and the
// scalar loops of gemmF32Naive took 8% of that model's forward.
func (at *attentionF32) tinyScores(b, i0, n, width int, p []float32) {
	E := at.E
	for r := range n {
		q := at.q.at(b, i0+r)[:E]
		for j := range width {
			p[r*width+j] = 0 + at.scale*dotF32(q, at.k.at(b, j)[:E], 1)
		}
	}
}

// weightedRowsF32 sets o to the sum of the rows of v (ldv apart) weighted
// by w, one vector multiply-add per row.
func weightedRowsF32(o, w, v []float32, ldv int) {
	clear(o)
	for j, wj := range w {
		normF32(o, v[j*ldv:j*ldv+len(o)], nil, o, 0, wj)
	}
}

func attentionF32Backward(k *core.KernelCall) bool {
	at, ok := readAttentionF32(k, k.Inputs[4])
	g := k.Inputs[3]
	if !ok || len(k.Outputs) != 3 || g.DType() != core.F32 || !g.Shape().Equal(append(at.Batch.Clone(), at.L, at.Ev)) {
		return false
	}
	for _, o := range k.Outputs {
		if o.DType() != core.F32 {
			return false
		}
	}
	L, S, E, Ev := at.L, at.S, at.E, at.Ev
	gd, dq, dk, dv := f32Logical(g), f32Data(k.Outputs[0]), f32Data(k.Outputs[1]), f32Data(k.Outputs[2])
	probs, dscores := tempF32(at.batch*L*S), tempF32(at.batch*L*S)
	parallelFor(at.batch, L*S*(E+Ev)*5, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			p, ds := probs[b*L*S:(b+1)*L*S], dscores[b*L*S:(b+1)*L*S]
			qb, kb, vb := at.q.at(b, 0), at.k.at(b, 0), at.v.at(b, 0)
			gb := gd[b*L*Ev : (b+1)*L*Ev]
			at.probs(b, p)
			gemmF32Serial(false, true, L, S, Ev, 1, gb, Ev, vb, at.v.ld, 0, ds, S) // dP
			for i := range L {
				pr, dr := p[i*S:(i+1)*S], ds[i*S:(i+1)*S]
				var total float64
				for j, pj := range pr {
					total += float64(pj) * float64(dr[j])
				}
				t := float32(total)
				for j, pj := range pr {
					dr[j] = pj * (dr[j] - t)
				}
			}
			gemmF32Serial(false, false, L, E, S, at.scale, ds, S, kb, at.k.ld, 0, dq[b*L*E:(b+1)*L*E], E)
			gemmF32Serial(true, false, S, E, L, at.scale, ds, S, qb, at.q.ld, 0, dk[b*S*E:(b+1)*S*E], E)
			gemmF32Serial(true, false, S, Ev, L, 1, p, S, gb, Ev, 0, dv[b*S*Ev:(b+1)*S*Ev], Ev)
		}
	})
	return true
}

var _ fusion.AttentionTransposer = (*Backend)(nil)
