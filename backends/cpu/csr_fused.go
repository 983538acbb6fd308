package cpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Fused forms of a graph convolution, for the geom package's inference:
// a CSR product with a bias row added in its store loop, and one whose
// rows go through a linear map a block at a time. Like core's fusers they
// record no autograd and no tracer sees them: callers use them only where
// neither is wanted. They take dense f32 operands only and say so with ok
// false; the caller then makes the plain op calls, which also report
// anything else that is wrong.

// SpmmBias is spmm(indptr, indices, values, dense) + bias, bias [n] added
// to every row in the product's store loop: one [rows, n] tensor instead of
// the product and the sum, with the same values.
func (b *Backend) SpmmBias(indptr, indices, values, dense, bias *core.Tensor) (out *core.Tensor, ok bool, err error) {
	p, n, ok, err := fusedCSR(indptr, indices, values, dense, bias)
	if !ok || err != nil {
		return nil, false, err
	}
	if !bias.Shape().Equal(core.Shape{n}) {
		return nil, false, nil
	}
	if out, err = core.Empty(b, core.Shape{p.rows, n}, core.F32); err != nil {
		return nil, false, fmt.Errorf("spmm: %w", err)
	}
	spmmF32(p, f32s(values), f32s(dense), f32s(out), n, f32s(bias))
	return out, true, nil
}

// spmmLinearBlock is how many rows SpmmLinear aggregates before it
// multiplies them out: their [block, in] features stay in cache.
const spmmLinearBlock = 256

// SpmmLinear is spmm(indptr, indices, values, x) @ wᵀ + bias + root @
// wRootᵀ, w [out, in], bias [out] and root [rows, inRoot] with wRoot [out,
// inRoot] (nil: no bias, no root term; the root term is GraphSAGE's map of
// each node's own features). It works a block of rows at a time: each
// block's aggregated features go through the linear map while they are in
// cache, and the other terms are added to the block's output, so neither
// the [rows, in] aggregate nor a [rows, out] term is ever made - the output
// is the only tensor. The values are those of the op calls (products, then
// the adds in that order) up to the rounding of the products: blocks of
// rows take gemm's paths for their size.
func (b *Backend) SpmmLinear(indptr, indices, values, x, w, bias, root, wRoot *core.Tensor) (out *core.Tensor, ok bool, err error) {
	if (root == nil) != (wRoot == nil) {
		return nil, false, nil
	}
	p, in, ok, err := fusedCSR(indptr, indices, values, x, w, bias, root, wRoot)
	if !ok || err != nil {
		return nil, false, err
	}
	ws := w.Shape()
	if len(ws) != 2 || ws[1] != in || (bias != nil && !bias.Shape().Equal(core.Shape{ws[0]})) {
		return nil, false, nil
	}
	nOut, inRoot := ws[0], 0
	if root != nil {
		rs, wrs := root.Shape(), wRoot.Shape()
		if len(rs) != 2 || rs[0] != p.rows || !wrs.Equal(core.Shape{nOut, rs[1]}) {
			return nil, false, nil
		}
		inRoot = rs[1]
	}
	if out, err = core.Empty(b, core.Shape{p.rows, nOut}, core.F32); err != nil {
		return nil, false, fmt.Errorf("spmm: %w", err)
	}
	v, xv, wv, ov := f32s(values), f32s(x), f32s(w), f32s(out)
	var bv, rv, wrv []float32
	if bias != nil {
		bv = f32s(bias)
	}
	if root != nil {
		rv, wrv = f32s(root), f32s(wRoot)
	}
	blocks := (p.rows + spmmLinearBlock - 1) / spmmLinearBlock
	parallelFor(blocks, spmmLinearBlock*(p.rowCost(in, p.rows)+(in+inRoot)*nOut), func(lo, hi int) {
		agg := make([]float32, spmmLinearBlock*in)
		for blk := lo; blk < hi; blk++ {
			r0, r1 := blk*spmmLinearBlock, min((blk+1)*spmmLinearBlock, p.rows)
			rows := &csrPattern{rows: r1 - r0, ptr: p.ptr[r0 : r1+1], cols: p.cols}
			spmmRows(rows, v, xv, agg[:(r1-r0)*in], in, nil)
			dst := ov[r0*nOut : r1*nOut]
			gemmF32Serial(false, true, r1-r0, nOut, in, 1, agg, in, wv, in, 0, dst, nOut)
			if bv != nil {
				for r := 0; r < r1-r0; r++ {
					row := dst[r*nOut : (r+1)*nOut]
					for j, c := range bv {
						row[j] += c
					}
				}
			}
			if rv != nil {
				gemmF32Serial(false, true, r1-r0, nOut, inRoot, 1, rv[r0*inRoot:], inRoot, wrv, inRoot, 1, dst, nOut)
			}
		}
	})
	return out, true, nil
}

// fusedCSR checks what the fused products share: every tensor a live, dense
// f32 (indices: i64 or i32) CPU tensor, dense 2-D, values one per index. It
// returns the checked pattern and dense's width; ok false when the fused
// path does not apply, an error when the structure is invalid.
func fusedCSR(indptr, indices, values, dense *core.Tensor, more ...*core.Tensor) (p *csrPattern, n int, ok bool, err error) {
	for _, t := range append([]*core.Tensor{indptr, indices, values, dense}, more...) {
		if t != nil && (t.Err() != nil || t.Device() != core.CPU) {
			return nil, 0, false, nil
		}
	}
	for _, t := range append([]*core.Tensor{values, dense}, more...) {
		if t != nil && !denseF32(t) {
			return nil, 0, false, nil
		}
	}
	ds := dense.Shape()
	if len(ds) != 2 || indptr.Rank() != 1 || indptr.Numel() < 1 || indices.Rank() != 1 ||
		!values.Shape().Equal(indices.Shape()) || !isIndexDType(indptr.DType()) || !isIndexDType(indices.DType()) {
		return nil, 0, false, nil
	}
	if p, err = readCSR(indptr, indices, ds[0]); err != nil {
		return nil, 0, false, fmt.Errorf("spmm: %w", err)
	}
	return p, ds[1], true, nil
}

func isIndexDType(d core.DType) bool { return d == core.I64 || d == core.I32 }
