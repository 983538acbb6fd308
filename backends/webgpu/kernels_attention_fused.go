package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// Short-sequence attention in one launch (wgsl/attention.wgsl). The
// composed path - scores, a softmax kernel, the product with v - costs
// three launches and a scores tensor per call; for the sequence lengths a
// workgroup can hold (up to 64 queries' worth of scores per thread and
// keys and values within workgroup memory) one kernel does it all.

const (
	attnMaxLen  = 64   // S and E bound the per-thread arrays
	attnMaxKV   = 2048 // floats of keys (and of values) in workgroup memory
	attnFusedWG = 64
)

// attentionFusable says whether q, k, v (no mask) fit the one-launch
// kernel.
func attentionFusable(q, k, v, mask *core.Tensor, sh oprules.SDPAShapes) bool {
	if mask != nil || q.DType() != core.F32 || k.DType() != core.F32 || v.DType() != core.F32 {
		return false
	}
	if sh.S == 0 || sh.E == 0 || sh.Ev == 0 {
		return false // its tiles would be arrays of no elements, which WGSL refuses
	}
	if sh.S > attnMaxLen || sh.E > attnMaxLen || sh.S*sh.E > attnMaxKV || sh.S*sh.Ev > attnMaxKV {
		return false
	}
	nb := sh.Batch.Numel()
	return nb > 0 && nb <= 65535*65535 && len(sh.Batch) <= wgsl.MaxRank
}

// attentionFusedTrips bounds the loop iterations of one thread of the
// fused kernel: its share of the key and value loads, then per query row
// (every WG-th of L) the query, the scores, the softmax and the weighted
// sum. A long L on a device with a loop limit (gpu_looplimit.go) takes the
// composed path, whose loops are each over one row.
func attentionFusedTrips(sh oprules.SDPAShapes) int {
	row := sh.E + sh.S*(1+sh.E) + sh.Ev + 2*sh.S + sh.Ev*(1+sh.S) + 1
	loads := (sh.S*sh.E+attnFusedWG-1)/attnFusedWG + (sh.S*sh.Ev+attnFusedWG-1)/attnFusedWG
	return (sh.L+attnFusedWG-1)/attnFusedWG*row + loads + 4*wgsl.MaxRank + 16
}

// attentionFused writes softmax(q k^T * scale) v into out ([batch..., L,
// Ev], its columns contiguous; any batch and row strides).
func (g *Backend) attentionFused(q, k, v, out *core.Tensor, sh oprules.SDPAShapes, scale float64, causal bool) error {
	key := fmt.Sprintf("attention-fused|%d|%d|%d", sh.S, sh.E, sh.Ev)
	p, err := g.pipelineFor(key, 3, 1, func() (string, error) {
		return wgsl.Render("attention", map[string]any{"WG": attnFusedWG, "S": sh.S, "E": sh.E, "Ev": sh.Ev})
	})
	if err != nil {
		return err
	}
	var prm params
	prm.setN(0, sh.L)
	prm.setN(1, sh.S)
	prm.setN(2, sh.E)
	prm.setN(3, sh.Ev)
	prm.setF(4, scale)
	if causal {
		prm.setU(5, 1)
	}
	nb := sh.Batch.Numel()
	prm.setN(wgsl.SlotN, nb)
	// Batch dims (broadcast per operand) merged where all three allow.
	st := make([][]int, 4)
	for i, t := range []*core.Tensor{q, k, v, out} {
		full := lower.BroadcastStrides(t, append(sh.Batch.Clone(), t.Shape()[t.Rank()-2:]...))
		st[i] = full[:len(sh.Batch)]
	}
	shape, strides := lower.Coalesce(sh.Batch, st)
	prm.setN(wgsl.SlotRank, len(shape))
	for d, n := range shape {
		prm.setN(wgsl.SlotShape+d, n)
	}
	for i, t := range []*core.Tensor{q, k, v} {
		writeOperand(&prm, wgsl.OperandSlot(i), t.Offset(), strides[i])
		ts := t.Strides()
		prm.setI(45+2*i, ts[t.Rank()-2])
		prm.setI(46+2*i, ts[t.Rank()-1])
	}
	writeOperand(&prm, wgsl.OperandSlot(4), out.Offset(), strides[3])
	prm.setI(wgsl.OperandSlot(5), out.Strides()[out.Rank()-2])
	bufs, err := buffers(q, k, v, out)
	if err != nil {
		return err
	}
	x, y := groupsFor(nb, 1)
	return g.runGroups(p, &prm, [3]uint32{x, y, 1}, bufs...)
}
