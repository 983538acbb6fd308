package cpu

// transposeInto writes out[r*inner+k] = src[k*step+r] for r < rows and
// k < inner: a transposed view's logical order, as a feature map
// [C, H·W] read from channels-last memory [H·W, C] (a Transformer2D's
// tokens unflattened for its output convolution). Eight source rows at a
// time go through the AVX2 8x8 transposition (transpose8Vec), each output
// row taking eight consecutive values, split across threads by groups of
// eight source rows. The scalar tile loop it replaces took 3.8 ms for a
// [2, 64, 64, 64] map (the convolution itself 0.4 ms).
func transposeInto(out, src []float32, rows, inner, step int) {
	groups := (inner + 7) / 8
	parallelFor(groups, 8*rows, func(lo, hi int) {
		for g := lo; g < hi; g++ {
			k0 := g * 8
			if k0+8 > inner {
				transposeScalar(out, src, 0, rows, k0, inner, inner, step)
				continue
			}
			done := transpose8Vec(out[k0:], inner, src[k0*step:], step, rows)
			transposeScalar(out, src, done, rows, k0, k0+8, inner, step)
		}
	})
}

// transposeScalar is transposeInto's element loop over rows [r0, r1) and
// source rows [k0, k1).
func transposeScalar(out, src []float32, r0, r1, k0, k1, inner, step int) {
	for r := r0; r < r1; r++ {
		for k := k0; k < k1; k++ {
			out[r*inner+k] = src[k*step+r]
		}
	}
}
