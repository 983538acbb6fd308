package cpu

import "github.com/webtensor/webtensor/core"

// Sums of a dense f32 matrix over its last axis (a row per output: the
// usual sum, mean and norm of activations) and of a whole contiguous f32
// tensor. The plan's general walk reaches each block through a closure,
// offset arithmetic and a fold callback, and sumF32 through layers of
// calls and a form switch: for 1024-float rows that bookkeeping cost
// almost a third of a row's time, as much as PyTorch's whole sum spends.
// These loops take the rows' blocks directly (sumF32 calls the plain
// sum's kernel without its layers: sumBlockF32) and give the same bits as
// the general walk: the same blocks through the same kernel, folded in the
// same order.

// denseRowsF32 is the input as a dense f32 matrix, a row per group (a
// group is one run, split into rdBlock blocks), when it is one.
func (p *rdPlan) denseRowsF32() ([]float32, bool) {
	one := p.dt == core.F32 && p.istep == 1 && p.inner == p.seg && p.group == p.seg
	if !one || len(p.kept.shape) > 1 || (len(p.kept.shape) == 1 && p.kept.strides[0] != p.seg) {
		return nil, false
	}
	return f32view(p.b)[p.base : p.base+p.outs*p.seg], true
}

// denseRowSums is rowSums of form f over rows, a dense matrix of p.outs
// rows of p.seg elements.
func denseRowSums(p *rdPlan, f sumForm, rows []float32, out []float64) {
	n, per := p.seg, p.blocks()
	switch {
	case per == 1:
		parallelFor(p.outs, n, func(lo, hi int) {
			for g := lo; g < hi; g++ {
				out[g] = sumF32(f, rows[g*n:(g+1)*n])
			}
		})
	case p.outs >= 2*NumThreads():
		parallelFor(p.outs, n, func(lo, hi int) {
			for g := lo; g < hi; g++ {
				var acc neumaier
				for k := range per {
					acc.add(denseBlockSum(f, rows, n, g, k))
				}
				out[g] = acc.value()
			}
		})
	default: // few long rows: their blocks in parallel, then each row's fold in order
		parts := tempF64(p.outs * per)
		parallelFor(len(parts), rdBlock, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				parts[i] = denseBlockSum(f, rows, n, i/per, i%per)
			}
		})
		for g := range out {
			var acc neumaier
			for _, v := range parts[g*per : (g+1)*per] {
				acc.add(v)
			}
			out[g] = acc.value()
		}
	}
}

// denseBlockSum is the sum of form f of block k of row g of rows, a dense
// matrix of n-element rows.
func denseBlockSum(f sumForm, rows []float32, n, g, k int) float64 {
	return sumF32(f, rows[g*n+k*rdBlock:g*n+min((k+1)*rdBlock, n)])
}
