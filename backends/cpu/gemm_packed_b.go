package cpu

import (
	"errors"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// A constant weight packed once. The blocked product packs every k x n
// panel of B into the micro-kernel's slivers on each call: for a model's
// linear layers, the same weights every time, 5-6% of a MiniLM forward
// (and a barrier per panel on two threads). An importer whose weights are
// constants (the ONNX importer's initializers, which nothing writes) packs
// them once with PackWeight and multiplies with FuseEpiloguePacked, which
// takes the panels as they are.

// PackedMatrix is a k x n f32 matrix in the panels gemmBlockedFinish
// reads: for each gemmNC block of columns and each gemmKC block of rows,
// gemmPackB's layout, for the micro-kernel geometry in use when it was
// packed.
type PackedMatrix struct {
	w      *core.Tensor
	k, n   int
	nr, ku int // gemmNR and gemmKU at packing time
	panels [][]float32
}

// Weight is the matrix that was packed (fusion.PackedWeight).
func (pm *PackedMatrix) Weight() *core.Tensor { return pm.w }

// valid is pm where the micro-kernel in use is the one pm was packed for,
// else nil (a test switched kernels): the product then packs b itself.
func (pm *PackedMatrix) valid() *PackedMatrix {
	if pm == nil || pm.nr != gemmNR || pm.ku != gemmKU {
		return nil
	}
	return pm
}

// panel is the packed block of rows pc.. and columns jc.. .
func (pm *PackedMatrix) panel(jc, pc int) []float32 {
	kPanels := (pm.k + gemmKC - 1) / gemmKC
	return pm.panels[(jc/gemmNC)*kPanels+pc/gemmKC]
}

// PackWeight packs w, a k x n f32 matrix on the CPU in any layout the
// product reads, for FuseEpiloguePacked. The packed copy is as large as w.
func (b *Backend) PackWeight(w *core.Tensor) (fusion.PackedWeight, error) {
	if w.DType() != core.F32 || w.Device() != core.CPU || w.Rank() != 2 {
		return nil, errors.New("cpu: PackWeight takes an f32 matrix on the CPU")
	}
	k, n := w.Shape()[0], w.Shape()[1]
	wv, lw := f32Operand(w, k, n, false, nil)
	tb, ldb, ok := gemmForm(k, n, lw.rs, lw.cs)
	if !ok {
		return nil, errors.New("cpu: PackWeight: the matrix is not in a layout the product reads")
	}
	bv := wv[lw.offs[0]:]
	pm := &PackedMatrix{w: w, k: k, n: n, nr: gemmNR, ku: gemmKU}
	for jc := 0; jc < n; jc += gemmNC {
		nc := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			panel := make([]float32, gemmRoundUp(kc, gemmKU)*gemmRoundUp(nc, gemmNR))
			gemmPackB(true, tb, bv, ldb, pc, kc, jc, nc, panel)
			pm.panels = append(pm.panels, panel)
		}
	}
	return pm, nil
}

// FuseEpiloguePacked is FuseEpilogue("matmul", [a, p's weight]) reading
// the weight's packed panels (fusion.WeightPacker).
func (b *Backend) FuseEpiloguePacked(a *core.Tensor, p fusion.PackedWeight, e *fusion.Expr, extras []*core.Tensor) (*core.Tensor, error) {
	pm, ok := p.(*PackedMatrix)
	if !ok {
		return nil, errors.New("cpu: FuseEpiloguePacked takes a weight PackWeight packed")
	}
	return b.fuseEpilogue(a, pm.w, pm, e, extras)
}
