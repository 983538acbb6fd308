package cpu

// Winograd's F(2x2, 3x3) for the 3x3, stride-1, undilated float32
// convolutions (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015): each 2x2 block of outputs ("tile") comes from the 4x4
// block of the padded image under it, and in the transformed domain the
// 3x3 kernel's 9 multiply-adds per output become 16 per tile, 4 per
// output: 2.25x fewer. The convolution becomes 16 independent products,
// one per point ξ of the 4x4 transformed tile,
//
//	M_ξ (outC x tiles) = U_ξ (outC x inC) x V_ξ (inC x tiles)
//
// with U = G g Gᵀ (the weights, transformed once per call), V = Bᵀ d B
// (every input tile) and the outputs Y = Aᵀ M A. The products run on the
// GEMM's packed macro-kernel, the input transform writing its packed
// slivers directly as the direct path's unfolding does.
//
// The transforms' constants are 0, ±1 and ½, exact in binary, and their
// sums grow the values by at most 4x, so the results stay within a few
// units in the last place of the direct product's (the tests compare both
// against float64). Every output is computed in the same order on any
// number of threads: tasks are blocks of tiles, and each tile's sums do
// not depend on the block it falls in.

// winogradOn lets tests and benchmarks run the direct path instead.
var winogradOn = true

const (
	// winogradMinChannels is the channel count below which the transforms,
	// a fixed cost per channel and tile, outweigh the multiply-adds saved
	// (a UNet's 4-channel conv_in takes the direct path).
	winogradMinChannels = 16
	// winogradMinOutputs is the output positions (over the batch) below
	// which the weight transform, once per call, costs more than it saves.
	winogradMinOutputs = 256
)

// winogradFits reports whether convForwardPacked's convolution takes the
// Winograd path: a 3x3 kernel at stride 1 without dilation and with
// non-negative padding (a transposed convolution's forward form can have
// a negative one), and enough channels and outputs to pay for it.
func winogradFits(w *window, batch, inC, outC int) bool {
	return winogradOn && w.kh == 3 && w.kw == 3 && w.sh == 1 && w.sw == 1 && w.dh == 1 && w.dw == 1 &&
		w.ph >= 0 && w.pw >= 0 && inC >= winogradMinChannels && outC >= winogradMinChannels &&
		batch*w.gh*w.gw >= winogradMinOutputs
}

// convForwardWinograd is convForwardPacked's contract for the convolutions
// winogradFits accepts. Tasks are blocks of tiles of one batch item and
// group; each transforms its tiles' inputs channel panel by channel panel,
// runs the 16 products into its own M buffer and writes its outputs.
func convForwardWinograd(w *window, batch, groups, inC, outC int, image, weight, bias, out []float32) {
	th, tw := (w.gh+1)/2, (w.gw+1)/2
	tiles, units := th*tw, batch*groups
	half := tw + 1 // even (and odd) columns of a padded row
	buf := padPlanesSplit(w, image, units*inC, 2*th+2, half)
	defer convPadPool.Put(buf)
	img, plane := *buf, (2*th+2)*2*half
	us, wbuf := winogradWeights(weight, groups, inC, outC)
	defer gemmPutPack(wbuf)
	if bias == nil {
		bias = make([]float32, groups*outC)
	}
	kc := us[0][0].kc // a multiple of gemmKU: a full panel's slivers are kc long
	// Two slivers a block: 16 products' M (16 x outC x blk) and V
	// (16 x kc x blk) stay within L2 at 128 channels.
	blk := min(gemmRoundUp(tiles, gemmNR), 2*gemmNR)
	for blk > gemmNR && units*((tiles+blk-1)/blk) < 4*NumThreads() {
		blk = gemmRoundUp(blk/2, gemmNR)
	}
	// The 16 points' buffers lie a cache line more than their size apart:
	// at a multiple of 4 KiB (64 channels x 64 tiles) the transforms' 16
	// streams all fell in one L1 set, and the input transform took 130
	// cycles a tile and channel.
	nblks, vSize, mSize := (tiles+blk-1)/blk, kc*blk+16, outC*blk+16
	outSize := w.gh * w.gw
	// Each task's V and M: with thousands of output channels M alone is
	// 4 KiB a channel, so ask the memory limit first, as the padding did.
	checkTemp(min(NumThreads(), units*nblks)*16*(vSize+mSize), 4, "float32")
	parallelFor(units*nblks, 16*outC*inC*blk, func(lo, hi int) {
		vb, mb := gemmGetPack(16*vSize), gemmGetPack(16*mSize)
		defer gemmPutPack(vb)
		defer gemmPutPack(mb)
		v, m := *vb, *mb
		for t := lo; t < hi; t++ {
			u, t0 := t/nblks, (t%nblks)*blk
			n := min(blk, tiles-t0)
			grp := u % groups
			src := img[u*inC*plane:][:inC*plane]
			for pc := 0; pc < inC; pc += kc {
				kq := min(kc, inC-pc)
				for xi := range 16 {
					clearSliverTails(v[xi*vSize:][:vSize], n, kq)
				}
				// The panel's slivers are roundUp(kq) long, as the macro-kernel
				// reads them: the last of several panels can be shorter.
				winogradInput(src[pc*plane:][:kq*plane], plane, half, tw, t0, n, gemmRoundUp(kq, gemmKU), v, vSize)
				for xi := range 16 {
					gemmMacroKernel(pc == 0, outC, n, kq, 1, us[grp][xi].panel(pc/kc), v[xi*vSize:],
						0, (n+gemmNR-1)/gemmNR, m[xi*mSize:], blk)
				}
			}
			winogradOutput(m, mSize, blk, outC, t0, n, tw, w.gh, w.gw, bias[grp*outC:(grp+1)*outC],
				out[u*outC*outSize:][:outC*outSize])
		}
	})
}

// padPlanesSplit copies the image's planes into zero-bordered planes of
// rows x 2*half, each row its even columns and then its odd ones (padded
// columns; the image starts at row w.ph, column w.pw): a tile's four
// columns are then even[x], odd[x], even[x+1] and odd[x+1], each one
// vector over adjacent tiles. Rows and columns past the padded image are
// zeros (the last tiles of an odd grid read them); image rows and columns
// past the planes are left out (no output reads them).
func padPlanesSplit(w *window, image []float32, planes, rows, half int) *[]float32 {
	in, out := w.ih*w.iw, rows*2*half
	buf := convPadBuffer(planes * out)
	padded := *buf
	ih, iw := min(w.ih, rows-w.ph), min(w.iw, 2*half-w.pw)
	first := w.pw & 1 // the first image column that lands in an even column
	parallelFor(planes, out, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			src, dst := image[c*in:(c+1)*in], padded[c*out:(c+1)*out]
			clear(dst[:w.ph*2*half])
			clear(dst[(w.ph+ih)*2*half:])
			for r := range ih {
				row, line := dst[(r+w.ph)*2*half:][:2*half], src[r*w.iw:][:iw]
				clear(row)
				even, odd := row[:half], row[half:]
				for x := first; x < iw; x += 2 {
					even[(x+w.pw)>>1] = line[x]
				}
				for x := 1 - first; x < iw; x += 2 {
					odd[(x+w.pw)>>1] = line[x]
				}
			}
		}
	})
	return buf
}

// winogradWeights returns every group's 16 transformed weights U_ξ =
// (G g Gᵀ)_ξ, each outC x inC, in packWeight's layout, where
//
//	G = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]
//
// and the buffer that holds them (for gemmPutPack). The transform writes
// the packed slivers directly, k step by k step, so each point's panel is
// written in order; a transform into 16 outC x inC matrices that
// packWeight then copied took as long as the products at 128 channels
// and 16x16 outputs (16 streams 64 KiB apart, all in one L1 set).
func winogradWeights(weight []float32, groups, inC, outC int) ([][16]packedWeight, *[]float32) {
	mr, kc := gemmMR, convPanel(inC)
	sls, panels := (outC+mr-1)/mr, (inC+kc-1)/kc
	per := panels*sls*kc*mr + 16 // one point's panels, and a cache line apart
	buf := gemmGetPack(groups * 16 * per)
	us := make([][16]packedWeight, groups)
	for grp := range groups {
		for xi := range 16 {
			us[grp][xi] = packedWeight{data: (*buf)[(grp*16+xi)*per:][:per-16], m: outC, k: inC, kc: kc, sls: sls}
		}
	}
	all := *buf
	parallelFor(groups*sls, mr*inC*64, func(lo, hi int) {
		for task := lo; task < hi; task++ {
			grp, sl := task/sls, task%sls
			d := all[grp*16*per : (grp+1)*16*per]
			for q := range panels {
				pc := q * kc
				kq := min(kc, inC-pc)
				kp := gemmRoundUp(kq, gemmKU)
				off := q*sls*kc*mr + sl*kp*mr
				for xi := range 16 {
					clear(d[xi*per+off:][:kp*mr])
				}
				for p := range kq {
					for i := range min(mr, outC-sl*mr) {
						o := sl*mr + i
						g := weight[((grp*outC+o)*inC+pc+p)*9:][:9:9]
						at := off + p*mr + i
						winogradWeight(g, d[at:][:15*per+1:15*per+1], per)
					}
				}
			}
		}
	})
	return us, buf
}

// winogradWeight writes the 16 points of G g Gᵀ for one 3x3 kernel g to
// dst[ξ*step].
func winogradWeight(g, dst []float32, step int) {
	var t [4][3]float32 // G g
	for j := range 3 {
		a, b, d := g[j], g[3+j], g[6+j]
		t[0][j], t[1][j], t[2][j], t[3][j] = a, 0.5*(a+b+d), 0.5*(a-b+d), d
	}
	for i := range 4 {
		a, b, d := t[i][0], t[i][1], t[i][2]
		dst[4*i*step] = a
		dst[(4*i+1)*step] = 0.5 * (a + b + d)
		dst[(4*i+2)*step] = 0.5 * (a - b + d)
		dst[(4*i+3)*step] = d
	}
}

// winogradInput writes V = Bᵀ d B of tiles [t0, t0+n) of every channel of
// src (planes of plane elements in padPlanesSplit's layout, rows of
// 2*half, tw tiles a row) into v: the 16 points' packed panels vSize
// apart, each in gemmPackB's layout (row = channel, column = tile,
// slivers kp x gemmNR), where
//
//	Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//
// Eight tiles of a row that share a sliver go to the vector kernel, the
// rest through the same sums in Go: a tile's bits do not depend on which.
func winogradInput(src []float32, plane, half, tw, t0, n, kp int, v []float32, vSize int) {
	nr, stride := gemmNR, 2*half
	channels := len(src) / plane
	for j := 0; j < n; {
		ty, tx := (t0+j)/tw, (t0+j)%tw
		run := min(tw-tx, n-j)
		top := 2*ty*stride + tx
		for x := 0; x < run; {
			col := j + x
			o := (col/nr)*kp*nr + col%nr
			if wgVector && x+8 <= run && col%nr+8 <= nr {
				wgInput8(v[o:], vSize, src[top+x:], stride, half, plane, nr, channels)
				x += 8
				continue
			}
			for c := range channels {
				p := src[c*plane+top+x:][: 3*stride+half+2 : 3*stride+half+2]
				d := v[o+c*nr:][: 15*vSize+1 : 15*vSize+1]
				// d B along each row, then Bᵀ across the rows.
				a0, a1, a2, a3 := winogradRow(p[0], p[half], p[1], p[half+1])
				b0, b1, b2, b3 := winogradRow(p[stride], p[stride+half], p[stride+1], p[stride+half+1])
				c0, c1, c2, c3 := winogradRow(p[2*stride], p[2*stride+half], p[2*stride+1], p[2*stride+half+1])
				e0, e1, e2, e3 := winogradRow(p[3*stride], p[3*stride+half], p[3*stride+1], p[3*stride+half+1])
				d[0], d[vSize], d[2*vSize], d[3*vSize] = a0-c0, a1-c1, a2-c2, a3-c3
				d[4*vSize], d[5*vSize], d[6*vSize], d[7*vSize] = b0+c0, b1+c1, b2+c2, b3+c3
				d[8*vSize], d[9*vSize], d[10*vSize], d[11*vSize] = c0-b0, c1-b1, c2-b2, c3-b3
				d[12*vSize], d[13*vSize], d[14*vSize], d[15*vSize] = b0-e0, b1-e1, b2-e2, b3-e3
			}
			x++
		}
		j += run
	}
}

// winogradRow is one row (r0, r1, r2, r3) of d times B.
func winogradRow(r0, r1, r2, r3 float32) (float32, float32, float32, float32) {
	return r0 - r2, r1 + r2, r2 - r1, r1 - r3
}

// winogradOutput writes Y = Aᵀ M A + bias of tiles [t0, t0+n) into out
// (outC planes of gh x gw), where M_ξ for output channel o and block
// column col is m[ξ*mSize + o*ld + col] and
//
//	Aᵀ = [1 1 1 0; 0 1 -1 -1]
//
// Eight tiles of a row whose outputs lie inside the grid go to the vector
// kernel, the rest (a grid's odd last row or column) through the same
// sums in Go.
func winogradOutput(m []float32, mSize, ld, outC, t0, n, tw, gh, gw int, bias, out []float32) {
	plane := gh * gw
	for j := 0; j < n; {
		ty, tx := (t0+j)/tw, (t0+j)%tw
		run := min(tw-tx, n-j)
		oy, x := 2*ty, 0
		if wgVector && oy+1 < gh {
			for ; x+8 <= run && 2*(tx+x+8) <= gw; x += 8 {
				wgOutput8(m[j+x:], mSize, out[oy*gw+2*(tx+x):], gw, ld, plane, bias, outC)
			}
		}
		for ; x < run; x++ {
			ox := 2 * (tx + x)
			at := oy*gw + ox
			for o := range outC {
				q := m[o*ld+j+x:][: 15*mSize+1 : 15*mSize+1]
				dst, bv := out[o*plane:][:plane], bias[o]
				// Aᵀ across the rows of M, then A along them.
				s0 := q[0] + q[4*mSize] + q[8*mSize]
				s1 := q[mSize] + q[5*mSize] + q[9*mSize]
				s2 := q[2*mSize] + q[6*mSize] + q[10*mSize]
				s3 := q[3*mSize] + q[7*mSize] + q[11*mSize]
				z0 := q[4*mSize] - q[8*mSize] - q[12*mSize]
				z1 := q[5*mSize] - q[9*mSize] - q[13*mSize]
				z2 := q[6*mSize] - q[10*mSize] - q[14*mSize]
				z3 := q[7*mSize] - q[11*mSize] - q[15*mSize]
				dst[at] = s0 + s1 + s2 + bv
				if ox+1 < gw {
					dst[at+1] = s1 - s2 - s3 + bv
				}
				if oy+1 < gh {
					dst[at+gw] = z0 + z1 + z2 + bv
					if ox+1 < gw {
						dst[at+gw+1] = z1 - z2 - z3 + bv
					}
				}
			}
		}
		j += run
	}
}
