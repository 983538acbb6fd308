package cpu

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
