package cpu

import (
	"sync"
	"unsafe"

	"github.com/webtensor/webtensor/core/oprules"
)

// The float32 convolutions where the vector micro-kernel runs: instead of
// unfolding the image into an im2col matrix that the GEMM then copies again
// into its packed slivers, the unfolding writes the packed slivers itself,
// the weight is packed once per call rather than once per block, and the
// products go through the GEMM's macro-kernel straight into the output.
//
//   - forward (conv2d, conv1d, the transposed op's input gradient) and the
//     unit-stride conv_transpose2d, which is a forward convolution of the
//     gradient with the flipped, transposed weight: one product of depth
//     channels x kernel per block of output positions;
//   - the weight gradient: dW = grad x unfold(image)ᵀ, the unfolded image
//     packed transposed. Tasks split dW's columns, not the batch, so every
//     element is one sum in one order: the same bits on any thread count.
//
// A product of depth k runs in equal k panels of at most gemmKC, the first
// storing into the output and the rest adding to it; with a bias the output
// starts as the bias and every panel adds. Conv_transpose2d with a stride
// keeps the col2im path (kernels_conv.go), as do f64 and the Go kernel,
// whose 2-wide slivers would make the gathers cost more than they save.

// convPacked reports whether the packed path is available.
func convPacked() bool { return gemmMicroFull != nil }

// convPanel is the k panel of a product of depth k: equal panels of at
// most gemmKC steps, a multiple of the micro-kernel's unroll.
func convPanel(k int) int {
	panels := (k + gemmKC - 1) / gemmKC
	return gemmRoundUp((k+panels-1)/panels, gemmKU)
}

// packedWeight is one group's m x k weight in gemmPackA's layout, panel
// after panel, each panel's slivers kp = roundUp(its depth, gemmKU) long.
type packedWeight struct {
	data          []float32
	m, k, kc, sls int // rows, depth, panel depth, slivers per panel
}

func packWeight(w []float32, m, k int) packedWeight {
	kc := convPanel(k)
	pw := packedWeight{m: m, k: k, kc: kc, sls: (m + gemmMR - 1) / gemmMR}
	pw.data = make([]float32, ((k+kc-1)/kc)*pw.sls*kc*gemmMR)
	for pc := 0; pc < k; pc += kc {
		gemmPackA(false, w, k, 0, m, pc, min(kc, k-pc), pw.data[(pc/kc)*pw.sls*kc*gemmMR:])
	}
	return pw
}

// panel returns panel q's packed slivers.
func (pw *packedWeight) panel(q int) []float32 {
	return pw.data[q*pw.sls*pw.kc*gemmMR:]
}

// convSegment is a run of grid positions on one output row that lands in
// one packed sliver: positions from (oh, ow) on, n of them, written from
// packed offset at.
type convSegment struct{ oh, ow, n, at int }

// convSegments cuts grid positions [j0, j0+n) into segments that stay on
// one output row and in one run of `run` positions; at is the position's
// offset from j0 mapped by place.
func convSegments(w *window, j0, n, run int, place func(off int) int, segs []convSegment) []convSegment {
	segs = segs[:0]
	for j := j0; j < j0+n; {
		oh, ow := j/w.gw, j%w.gw
		off := j - j0
		l := min(w.gw-ow, j0+n-j, run-off%run)
		segs = append(segs, convSegment{oh: oh, ow: ow, n: l, at: place(off)})
		j += l
	}
	return segs
}

// packUnfolded writes rows [p0, p0+kc) of the unfolded image (row (ci, ki,
// kj), column a grid position) at grid positions [j0, j0+n) into gemmPackB's
// layout: gemmNR-wide slivers, k-major, zero-padded to gemmNR columns and
// to kp = roundUp(kc, gemmKU) rows.
func packUnfolded(w *window, img []float32, p0, kc, j0, n int, dst []float32, segs []convSegment) []convSegment {
	nr, kp := gemmNR, gemmRoundUp(kc, gemmKU)
	clearSliverTails(dst, n, kc)
	segs = convSegments(w, j0, n, nr, func(off int) int { return (off/nr)*kp*nr + off%nr }, segs)
	taps, plane := w.kh*w.kw, w.ih*w.iw
	for p := p0; p < p0+kc; p++ {
		ci, ki, kj := p/taps, p%taps/w.kw, p%w.kw
		hBase, wBase := ki*w.dh-w.ph, kj*w.dw-w.pw
		lo, hi := validRange(wBase, w.sw, w.iw, w.gw)
		src := img[ci*plane : (ci+1)*plane]
		row := dst[(p-p0)*nr:]
		for _, sg := range segs {
			seg := row[sg.at : sg.at+sg.n]
			ih := sg.oh*w.sh + hBase
			switch {
			case ih < 0 || ih >= w.ih:
				clear(seg)
			case sg.n == 16 && w.sw == 1 && sg.ow >= lo && sg.ow+16 <= hi:
				// A whole 16-wide sliver row from inside the image: one
				// array copy, two vector moves, instead of gatherRow's
				// bounds arithmetic and a memmove call.
				at := ih*w.iw + sg.ow + wBase
				*(*[16]float32)(seg) = *(*[16]float32)(src[at : at+16])
			case sg.n == 32 && w.sw == 1 && sg.ow >= lo && sg.ow+32 <= hi:
				// The same for the AVX-512 kernel's 32-wide slivers.
				at := ih*w.iw + sg.ow + wBase
				*(*[32]float32)(seg) = *(*[32]float32)(src[at : at+32])
			case w.sw == 1:
				// Unit stride at an edge: a short loop, not a memmove call.
				line := src[ih*w.iw : (ih+1)*w.iw]
				a := min(max(lo-sg.ow, 0), sg.n)
				b := min(max(hi-sg.ow, a), sg.n)
				clear(seg[:a])
				clear(seg[b:])
				if b > a {
					from := line[sg.ow+a+wBase : sg.ow+b+wBase]
					for t, v := range from {
						seg[a+t] = v
					}
				}
			default:
				gatherRow(seg, src[ih*w.iw:(ih+1)*w.iw], sg.ow, lo, hi, w.sw, wBase)
			}
		}
	}
	return segs
}

// packUnfoldedT writes the transpose: unfolded rows [r0, r0+nrows) become
// the columns and grid positions [j0, j0+kc) the k steps, in the same
// sliver layout (element (j, p) of a sliver at (j-j0)*gemmNR + p%gemmNR).
func packUnfoldedT(w *window, img []float32, r0, nrows, j0, kc int, dst []float32, segs []convSegment) []convSegment {
	nr, kp := gemmNR, gemmRoundUp(kc, gemmKU)
	clearSliverTails(dst, nrows, kc)
	segs = convSegments(w, j0, kc, kc, func(off int) int { return off * nr }, segs)
	taps, plane := w.kh*w.kw, w.ih*w.iw
	for p := r0; p < r0+nrows; p++ {
		ci, ki, kj := p/taps, p%taps/w.kw, p%w.kw
		hBase, wBase := ki*w.dh-w.ph, kj*w.dw-w.pw
		lo, hi := validRange(wBase, w.sw, w.iw, w.gw)
		src := img[ci*plane : (ci+1)*plane]
		col := dst[((p-r0)/nr)*kp*nr+(p-r0)%nr:]
		for _, sg := range segs {
			if ih := sg.oh*w.sh + hBase; ih >= 0 && ih < w.ih {
				gatherRowStrided(col[sg.at:], nr, sg.n, src[ih*w.iw:(ih+1)*w.iw], sg.ow, lo, hi, w.sw, wBase)
			} else {
				gatherRowStrided(col[sg.at:], nr, sg.n, nil, 0, 0, 0, 0, 0) // all padding
			}
		}
	}
	return segs
}

// gatherRowStrided is gatherRow writing dst[t*step] for t < n.
func gatherRowStrided(dst []float32, step, n int, line []float32, ow, lo, hi, stride, base int) {
	a := min(max(lo-ow, 0), n)
	b := min(max(hi-ow, a), n)
	if b > a {
		pos := (ow+a)*stride + base
		src := line[pos : pos+(b-a-1)*stride+1]
		out := dst[a*step : (b-1)*step+1]
		if stride == 1 {
			scatterStrided(out, step, src)
		} else {
			for i, o := 0, 0; o < len(out); i, o = i+stride, o+step {
				out[o] = src[i]
			}
		}
	}
	for t := 0; t < a; t++ {
		dst[t*step] = 0
	}
	for t := b; t < n; t++ {
		dst[t*step] = 0
	}
}

// scatterStrided sets out[t*step] = src[t] for every t, four at a time and
// without a bounds check per element: the weight gradient's packing calls
// it for every row of the unfolded image, and the checked loop, four
// cycles an element, was a fifth of conv2d's forward and backward.
// out must hold (len(src)-1)*step+1 elements.
func scatterStrided(out []float32, step int, src []float32) {
	n := len(src)
	if n == 0 {
		return
	}
	_ = out[(n-1)*step]
	o := unsafe.Pointer(unsafe.SliceData(out))
	at := func(t int) *float32 { return (*float32)(unsafe.Add(o, uintptr(t*step)*4)) }
	t := 0
	for ; t+4 <= n; t += 4 {
		s := src[t : t+4 : t+4]
		*at(t), *at(t + 1), *at(t + 2), *at(t + 3) = s[0], s[1], s[2], s[3]
	}
	for ; t < n; t++ {
		*at(t) = src[t]
	}
}

// convForwardPacked computes out = weight x unfold(image) (+ bias) for
// every batch item and group: image is batch x groups*inC planes of
// w.ih x w.iw, weight groups*outC rows of inC*kh*kw, out batch x
// groups*outC planes of w.gh x w.gw. Tasks are blocks of output positions
// of one batch item and group and never share output.
func convForwardPacked(w *window, batch, groups, inC, outC int, image, weight, bias, out []float32) {
	rows, inSize, outSize := inC*w.kh*w.kw, w.ih*w.iw, w.gh*w.gw
	units := batch * groups
	if units == 0 || outSize == 0 || outC == 0 {
		return
	}
	if winogradFits(w, batch, inC, outC) {
		convForwardWinograd(w, batch, groups, inC, outC, image, weight, bias, out)
		return
	}
	if w.ph > 0 || w.pw > 0 {
		padded, buf := padPlanes(w, image, batch*groups*inC)
		defer convPadPool.Put(buf)
		image, w, inSize = *buf, &padded, padded.ih*padded.iw
	}
	pws := make([]packedWeight, groups)
	for grp := range pws {
		pws[grp] = packWeight(weight[grp*outC*rows:(grp+1)*outC*rows], outC, rows)
	}
	kc := pws[0].kc
	// Blocks of about 256 positions (whole slivers) keep a packed panel in
	// L2; smaller ones give every core a few tasks when there are few units.
	blk := min(gemmRoundUp(outSize, gemmNR), 256/gemmNR*gemmNR)
	for blk > gemmNR && units*((outSize+blk-1)/blk) < 4*NumThreads() {
		blk = gemmRoundUp(blk/2, gemmNR)
	}
	nblks := (outSize + blk - 1) / blk
	parallelFor(units*nblks, outC*rows*blk, func(lo, hi int) {
		bp := gemmGetPack(gemmRoundUp(kc, gemmKU) * blk)
		defer gemmPutPack(bp)
		var segs []convSegment
		for t := lo; t < hi; t++ {
			u, j0 := t/nblks, (t%nblks)*blk
			n := min(blk, outSize-j0)
			b, grp := u/groups, u%groups
			src := image[(b*groups+grp)*inC*inSize:][:inC*inSize]
			dst := out[(b*groups+grp)*outC*outSize+j0:]
			if bias != nil {
				for o := range outC {
					row := dst[o*outSize:][:n]
					bv := bias[grp*outC+o]
					for i := range row {
						row[i] = bv
					}
				}
			}
			for pc := 0; pc < rows; pc += kc {
				kq := min(kc, rows-pc)
				segs = packUnfolded(w, src, pc, kq, j0, n, *bp, segs)
				store := pc == 0 && bias == nil
				gemmMacroKernel(store, outC, n, kq, 1, pws[grp].panel(pc/kc), *bp, 0, (n+gemmNR-1)/gemmNR, dst, outSize)
			}
		}
	})
}

// padPlanes copies the image's planes into zero-bordered ones and
// returns the window over them, which has no padding. Packing then finds
// every tap's row inside the image: a padded 3x3 convolution at a 32-wide
// grid sent two taps in three through the edge case's element-by-element
// loop (its sliver row reaches past the image by one), which made the
// packing of a 32-channel UNet level cost as much as its product. One
// copy of the image buys a whole-row copy for every tap.
//
// The planes come from convPadPool (the caller returns them), and only
// their borders are cleared: a fresh zeroed copy per call was a sixth of
// a UNet forward's allocation.
func padPlanes(w *window, image []float32, planes int) (window, *[]float32) {
	p := *w
	p.ih, p.iw, p.ph, p.pw = w.ih+2*w.ph, w.iw+2*w.pw, 0, 0
	in, out := w.ih*w.iw, p.ih*p.iw
	buf := convPadBuffer(planes * out)
	padded := *buf
	parallelFor(planes, out, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			src, dst := image[c*in:(c+1)*in], padded[c*out:(c+1)*out]
			clear(dst[:w.ph*p.iw])
			clear(dst[(w.ph+w.ih)*p.iw:])
			for r := range w.ih {
				row := dst[(r+w.ph)*p.iw:][:p.iw]
				clear(row[:w.pw])
				copy(row[w.pw:w.pw+w.iw], src[r*w.iw:(r+1)*w.iw])
				clear(row[w.pw+w.iw:])
			}
		}
	})
	return p, buf
}

// convPadPool recycles padPlanes' and padPlanesSplit's planes.
var convPadPool sync.Pool

// convPadBuffer returns n floats from convPadPool (not cleared), after
// checking that the memory limit allows them.
func convPadBuffer(n int) *[]float32 {
	checkTemp(n, 4, "float32")
	buf, _ := convPadPool.Get().(*[]float32)
	if buf == nil || cap(*buf) < n {
		b := make([]float32, n)
		buf = &b
	}
	*buf = (*buf)[:n]
	return buf
}

// convWeightGradPacked computes dW = grad x unfold(image)ᵀ summed over the
// batch, for every group. Tasks are runs of dW's columns (unfolded rows) of
// one group; each sums over batch items and position panels in order.
func convWeightGradPacked(w *window, batch, groups, inC, outC int, image, grad, dw []float32) {
	rows, inSize, outSize := inC*w.kh*w.kw, w.ih*w.iw, w.gh*w.gw
	if groups == 0 || rows == 0 || outC == 0 {
		return
	}
	if batch == 0 || outSize == 0 {
		clear(dw)
		return
	}
	kc := convPanel(outSize)
	kp := gemmRoundUp(kc, gemmKU)
	slivers := (rows + gemmNR - 1) / gemmNR
	per := max(1, (slivers*groups+2*NumThreads()-1)/(2*NumThreads())) // slivers per task
	tapMajor := convTapMajor(w, inC)
	if tapMajor {
		defer untapWeightGrad(dw, groups*outC, inC, w.kh*w.kw)
	}
	chunks := (slivers + per - 1) / per
	// Every task reads all of the gradient: pack it once, panel by panel.
	panels, apSize := (outSize+kc-1)/kc, gemmRoundUp(outC, gemmMR)*kp
	aps := make([]float32, batch*groups*panels*apSize)
	parallelFor(batch*groups*panels, outC*kc, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			u, pc := i/panels, (i%panels)*kc
			gemmPackA(false, grad[u*outC*outSize:][:outC*outSize], outSize, 0, outC, pc, min(kc, outSize-pc), aps[i*apSize:])
		}
	})
	parallelFor(groups*chunks, outC*per*gemmNR*batch*outSize, func(lo, hi int) {
		bp := gemmGetPack(per * gemmNR * kp)
		defer gemmPutPack(bp)
		var segs []convSegment
		for t := lo; t < hi; t++ {
			grp, r0 := t/chunks, (t%chunks)*per*gemmNR
			nrows := min(per*gemmNR, rows-r0)
			dst := dw[grp*outC*rows+r0:]
			for b := range batch {
				u := b*groups + grp
				src := image[u*inC*inSize:][:inC*inSize]
				for pc := 0; pc < outSize; pc += kc {
					kq := min(kc, outSize-pc)
					if tapMajor {
						segs = packUnfoldedTTaps(w, src, inC, r0, nrows, pc, kq, *bp, segs)
					} else {
						segs = packUnfoldedT(w, src, r0, nrows, pc, kq, *bp, segs)
					}
					store := b == 0 && pc == 0
					ap := aps[(u*panels+pc/kc)*apSize:]
					gemmMacroKernel(store, outC, nrows, kq, 1, ap, *bp, 0, (nrows+gemmNR-1)/gemmNR, dst, rows)
				}
			}
		}
	})
}

// transposedAsForward returns the forward convolution that computes a
// unit-stride conv_transpose2d: the gradient is its image, the transposed
// op's output its grid, the kernel flipped and padded by
// dilation*(kernel-1) - padding, and the weight regrouped per group from
// (grid channel, image channel, kh, kw) to (image channel, grid channel,
// kh flipped, kw flipped).
func transposedAsForward(g *oprules.ConvGeom, weight []float32) (window, []float32) {
	s := windowOf(g)
	w := window{ih: s.gh, iw: s.gw, gh: s.ih, gw: s.iw, kh: s.kh, kw: s.kw, sh: 1, sw: 1,
		ph: s.dh*(s.kh-1) - s.ph, pw: s.dw*(s.kw-1) - s.pw, dh: s.dh, dw: s.dw}
	gc, ic, taps := g.GridC/g.Groups, g.ImageC/g.Groups, s.kh*s.kw
	flipped := make([]float32, len(weight))
	for grp := range g.Groups {
		for co := range gc {
			for ci := range ic {
				from := weight[((grp*gc+co)*ic+ci)*taps:][:taps]
				to := flipped[((grp*ic+ci)*gc+co)*taps:][:taps]
				for t, v := range from {
					to[taps-1-t] = v
				}
			}
		}
	}
	return w, flipped
}
