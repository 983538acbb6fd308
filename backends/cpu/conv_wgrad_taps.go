package cpu

// The weight gradient's packing in tap-major order. dW = grad x
// unfold(image)ᵀ packs the unfolded image transposed: its rows (channel,
// tap) become gemmNR-wide sliver columns and the grid positions the k
// steps, one value at a time at stride gemmNR (packUnfoldedT), which was a
// fifth of a conv2d's forward and backward. Taken in the order (tap,
// channel) instead, eight adjacent columns are one tap of eight adjacent
// channels, whose image rows lie a plane apart: the AVX2 8x8 transposition
// of the linear layers' packing (transpose8Vec) writes them eight floats at
// a time. The product then fills dW's columns in that order, and
// untapWeightGrad puts them back, a pass over the small dW.

// convTapMajor reports whether the weight gradient can pack tap-major:
// channels in whole groups of eight, unit stride along the row (adjacent
// positions are adjacent pixels), and the vector transposition.
func convTapMajor(w *window, inC int) bool {
	return transpose8Asm && inC%8 == 0 && w.sw == 1 && w.kh*w.kw > 1
}

// clearSliverTails zeroes what the convolutions' packings (packUnfolded,
// packUnfoldedT, packUnfoldedTTaps) do not write: the k steps past kc of
// every sliver, and the whole of a sliver that ncols columns do not fill.
func clearSliverTails(dst []float32, ncols, kc int) {
	nr, kp := gemmNR, gemmRoundUp(kc, gemmKU)
	for s := range (ncols + nr - 1) / nr {
		sl := dst[s*kp*nr : (s+1)*kp*nr]
		if (s+1)*nr > ncols {
			clear(sl)
		} else {
			clear(sl[kc*nr:])
		}
	}
}

// packUnfoldedTTaps is packUnfoldedT for tap-major rows: row q of the
// unfolded image is tap q/inC of channel q%inC. r0 and nrows are
// multiples of 8 (inC is), so each group of eight rows is one tap.
func packUnfoldedTTaps(w *window, img []float32, inC, r0, nrows, j0, kc int, dst []float32, segs []convSegment) []convSegment {
	nr, kp := gemmNR, gemmRoundUp(kc, gemmKU)
	clearSliverTails(dst, nrows, kc)
	segs = convSegments(w, j0, kc, kc, func(off int) int { return off * nr }, segs)
	plane := w.ih * w.iw
	for q := r0; q < r0+nrows; q += 8 {
		tap, ci := q/inC, q%inC
		hBase, wBase := tap/w.kw*w.dh-w.ph, tap%w.kw*w.dw-w.pw
		lo, hi := validRange(wBase, w.sw, w.iw, w.gw)
		col := dst[((q-r0)/nr)*kp*nr+(q-r0)%nr:]
		for _, sg := range segs {
			out := col[sg.at:]
			ih := sg.oh*w.sh + hBase
			if ih < 0 || ih >= w.ih { // padding rows for all eight channels
				for t := range sg.n {
					clear(out[t*nr : t*nr+8])
				}
				continue
			}
			// Positions [a, b) read inside the image (unit stride), the
			// others the padding at its left and right edges.
			a := min(max(lo-sg.ow, 0), sg.n)
			b := min(max(hi-sg.ow, a), sg.n)
			for t := range a {
				clear(out[t*nr : t*nr+8])
			}
			for t := b; t < sg.n; t++ {
				clear(out[t*nr : t*nr+8])
			}
			if b > a {
				at := ci*plane + ih*w.iw + sg.ow + a + wBase
				in := out[a*nr:]
				for t := transpose8Vec(in, nr, img[at:], plane, b-a); t < b-a; t++ {
					for c := range 8 {
						in[t*nr+c] = img[at+c*plane+t]
					}
				}
			}
		}
	}
	return segs
}

// untapWeightGrad reorders each of dW's rows (groups*outC of them) from
// tap-major columns (tap*inC + channel) to the weight's (channel*taps +
// tap).
func untapWeightGrad(dw []float32, rowsOut, inC, taps int) {
	cols := inC * taps
	parallelFor(rowsOut, 2*cols, func(lo, hi int) {
		tmp := make([]float32, cols)
		for r := lo; r < hi; r++ {
			row := dw[r*cols : (r+1)*cols]
			copy(tmp, row)
			for tap := range taps {
				for ci, v := range tmp[tap*inC : (tap+1)*inC] {
					row[ci*taps+tap] = v
				}
			}
		}
	})
}
