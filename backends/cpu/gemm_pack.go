package cpu

// gemmPackedB is the whole of op(B) packed: a panel per gemmNC block of
// columns and gemmKC block of rows, each in gemmPackB's layout, stride
// apart in one pooled buffer.
type gemmPackedB struct {
	buf             *[]float32
	kPanels, stride int
}

func (p gemmPackedB) panel(jc, pc int) []float32 {
	at := ((jc/gemmNC)*p.kPanels + pc/gemmKC) * p.stride
	return (*p.buf)[at : at+p.stride]
}

// gemmPackAllB packs every panel of op(B) (k x n) in one parallel step,
// before any product: the tasks that then read the panels run to the end
// without waiting for each other (gemmTask).
func gemmPackAllB(parallel, trans bool, b []float32, ldb, k, n int) gemmPackedB {
	p := gemmPackedB{kPanels: (k + gemmKC - 1) / gemmKC}
	p.stride = gemmRoundUp(min(gemmKC, k), gemmKU) * gemmRoundUp(min(gemmNC, n), gemmNR)
	nBlocks := (n + gemmNC - 1) / gemmNC
	p.buf = gemmGetPack(nBlocks * p.kPanels * p.stride)
	perBlock := (min(gemmNC, n) + gemmNR - 1) / gemmNR // slivers of a full column block
	pack := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			blk, sv := i/perBlock, i%perBlock
			jc, pc := (blk/p.kPanels)*gemmNC, (blk%p.kPanels)*gemmKC
			nc, kc := min(gemmNC, n-jc), min(gemmKC, k-pc)
			if sv*gemmNR >= nc {
				continue // past the last column block's end
			}
			gemmPackBSliver(trans, b, ldb, pc, kc, jc, nc, sv, p.panel(jc, pc))
		}
	}
	total := nBlocks * p.kPanels * perBlock
	if !parallel {
		pack(0, total)
		return p
	}
	parallelFor(total, min(gemmKC, k)*gemmNR, pack)
	return p
}

// gemmPackB copies op(B)[pc:pc+kc, jc:jc+nc] into gemmNR-column slivers,
// each laid out k-major (element (p, j) at p*gemmNR+j) and zero-padded to
// gemmNR columns and a multiple of gemmKU steps.
func gemmPackB(parallel, trans bool, b []float32, ldb, pc, kc, jc, nc int, dst []float32) {
	slivers := (nc + gemmNR - 1) / gemmNR
	pack := func(lo, hi int) {
		for sv := lo; sv < hi; sv++ {
			gemmPackBSliver(trans, b, ldb, pc, kc, jc, nc, sv, dst)
		}
	}
	if !parallel {
		pack(0, slivers)
		return
	}
	parallelFor(slivers, kc*gemmNR, pack)
}

// gemmPackBSliver packs sliver sv of gemmPackB's panel into dst.
func gemmPackBSliver(trans bool, b []float32, ldb, pc, kc, jc, nc, sv int, dst []float32) {
	kp := gemmRoundUp(kc, gemmKU)
	j0 := sv * gemmNR
	nr := min(gemmNR, nc-j0)
	s := dst[sv*kp*gemmNR : (sv+1)*kp*gemmNR]
	if nr < gemmNR || kp > kc {
		clear(s)
	}
	if !trans {
		// Row p of the sliver is nr adjacent elements of row pc+p
		// of B: one short copy per k step, not nr strided walks.
		for p := 0; p < kc; p++ {
			at := (pc+p)*ldb + jc + j0
			copy(s[p*gemmNR:p*gemmNR+nr], b[at:at+nr])
		}
		return
	}
	packTransposedSliver(s, b, ldb, pc, kc, jc+j0, nr)
}

// packTransposedSliver packs columns col0..col0+nr of op(B) = Bᵀ (rows of
// the stored B, ldb apart) into a sliver s of gemmNR-wide k steps. Eight
// stored rows are read side by side and each k step's eight values written
// together: one row at a time scattered every value to its own k step
// (stride gemmNR), which measured 1.5x slower on weights streaming from
// memory - the first touch of a linear layer's weight in inference, where
// packing was a fifth of a ViT forward at batch 1.
func packTransposedSliver(s, b []float32, ldb, pc, kc, col0, nr int) {
	j := 0
	for ; j+8 <= nr; j += 8 {
		c := (col0+j)*ldb + pc
		r0 := b[c : c+kc]
		r1 := b[c+ldb : c+ldb+kc][:len(r0)]
		r2 := b[c+2*ldb : c+2*ldb+kc][:len(r0)]
		r3 := b[c+3*ldb : c+3*ldb+kc][:len(r0)]
		r4 := b[c+4*ldb : c+4*ldb+kc][:len(r0)]
		r5 := b[c+5*ldb : c+5*ldb+kc][:len(r0)]
		r6 := b[c+6*ldb : c+6*ldb+kc][:len(r0)]
		r7 := b[c+7*ldb : c+7*ldb+kc][:len(r0)]
		done := transpose8Vec(s[j:], gemmNR, b[c:], ldb, kc)
		for p := done; p < len(r0); p++ {
			d := s[p*gemmNR+j : p*gemmNR+j+8 : p*gemmNR+j+8]
			d[0], d[1], d[2], d[3] = r0[p], r1[p], r2[p], r3[p]
			d[4], d[5], d[6], d[7] = r4[p], r5[p], r6[p], r7[p]
		}
	}
	for ; j < nr; j++ {
		c := (col0+j)*ldb + pc
		for p, v := range b[c : c+kc] {
			s[p*gemmNR+j] = v
		}
	}
}
