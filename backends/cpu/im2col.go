package cpu

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Convolutions run as matrix products: im2col unfolds the image under every
// window position into a matrix whose product with the weight is the grid,
// and col2im folds such a matrix back onto the image (scatter-add) for the
// transposed direction. float32 work goes to gemmF32; f16 and bf16 widen to
// float32 and round once at the end; f64 keeps double precision throughout.

// convFloat is the precision a convolution kernel computes in.
type convFloat interface{ float32 | float64 }

// gemmFunc is gemmF32's contract for either precision: C = alpha*op(A)*op(B)
// + beta*C on row-major matrices with leading dimensions.
type gemmFunc[T convFloat] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// convGemmF64 is the double-precision product. f64 convolutions serve
// gradient checks and reference work rather than training, so a plain loop
// ordered for unit-stride inner access is enough.
func convGemmF64(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
		for p := 0; p < k; p++ {
			var av float64
			if transA {
				av = alpha * a[p*lda+i]
			} else {
				av = alpha * a[i*lda+p]
			}
			if transB {
				for j := range row {
					row[j] += av * b[j*ldb+p]
				}
				continue
			}
			for j, bv := range b[p*ldb : p*ldb+n] {
				row[j] += av * bv
			}
		}
	}
}

// window is a ConvGeom in the terms the unfolding loops use: image planes of
// ih x iw, a grid of gh x gw window positions.
type window struct {
	ih, iw, gh, gw int
	kh, kw         int
	sh, sw         int
	ph, pw         int
	dh, dw         int
}

func windowOf(g *oprules.ConvGeom) window {
	return window{ih: g.Image[0], iw: g.Image[1], gh: g.Grid[0], gw: g.Grid[1],
		kh: g.Kernel[0], kw: g.Kernel[1], sh: g.Stride[0], sw: g.Stride[1],
		ph: g.Padding[0], pw: g.Padding[1], dh: g.Dilation[0], dw: g.Dilation[1]}
}

// pointwise reports whether the image already is its own im2col matrix
// (1x1 kernel, unit stride, no padding, equal sizes), so unfolding is skipped.
func (w *window) pointwise() bool {
	return w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.ph == 0 && w.pw == 0 &&
		w.gh == w.ih && w.gw == w.iw
}

// validRange is the range [lo, hi) of grid positions o < n whose image
// coordinate o*stride + base falls inside [0, size).
func validRange(base, stride, size, n int) (lo, hi int) {
	if base < 0 {
		lo = (-base + stride - 1) / stride
	}
	if size > base {
		hi = min((size-base+stride-1)/stride, n)
	}
	return min(lo, hi), hi
}

// blockCols picks how many grid columns one task unfolds at a time: enough
// for an efficient product, few enough that the unfolded block of rows x
// cols values stays in the L2 cache between im2col and gemm.
func blockCols(rows, cols int) int {
	const budget = 1 << 16
	return max(min(cols, budget/max(rows, 1)), min(cols, 64), 1)
}

// im2colBlock unfolds grid columns [j0, j1) over c image planes of src into
// dst (row stride j1-j0): row (ci, ki, kj) holds, for every window position,
// the image value under kernel element (ki, kj), zero in the padding.
func im2colBlock[T convFloat](w *window, src []T, c, j0, j1 int, dst []T) {
	ld, plane := j1-j0, w.ih*w.iw
	for ci := 0; ci < c; ci++ {
		img := src[ci*plane : (ci+1)*plane]
		for ki := 0; ki < w.kh; ki++ {
			hBase := ki*w.dh - w.ph
			for kj := 0; kj < w.kw; kj++ {
				wBase := kj*w.dw - w.pw
				lo, hi := validRange(wBase, w.sw, w.iw, w.gw)
				row := dst[((ci*w.kh+ki)*w.kw+kj)*ld:][:ld]
				for j := j0; j < j1; {
					oh, ow := j/w.gw, j%w.gw
					n := min(w.gw-ow, j1-j)
					seg := row[j-j0 : j-j0+n]
					if ih := oh*w.sh + hBase; ih < 0 || ih >= w.ih {
						clear(seg)
					} else {
						gatherRow(seg, img[ih*w.iw:(ih+1)*w.iw], ow, lo, hi, w.sw, wBase)
					}
					j += n
				}
			}
		}
	}
}

// gatherRow sets seg[t] = line[(ow+t)*stride + base] where ow+t lies in the
// valid range [lo, hi) and zero elsewhere.
func gatherRow[T convFloat](seg, line []T, ow, lo, hi, stride, base int) {
	n := len(seg)
	a := min(max(lo-ow, 0), n)
	b := min(max(hi-ow, a), n)
	clear(seg[:a])
	clear(seg[b:])
	if a == b {
		return
	}
	pos := (ow+a)*stride + base
	if stride == 1 {
		copy(seg[a:b], line[pos:pos+b-a])
		return
	}
	for t := a; t < b; t++ {
		seg[t] = line[pos]
		pos += stride
	}
}

// col2imBlock adds the rows of image channel ci of cols (grid columns
// [j0, j1), row stride j1-j0) onto that channel's plane: the transpose of
// im2colBlock.
func col2imBlock[T convFloat](w *window, cols []T, ci, j0, j1 int, plane []T) {
	ld := j1 - j0
	for ki := 0; ki < w.kh; ki++ {
		hBase := ki*w.dh - w.ph
		for kj := 0; kj < w.kw; kj++ {
			wBase := kj*w.dw - w.pw
			lo, hi := validRange(wBase, w.sw, w.iw, w.gw)
			row := cols[((ci*w.kh+ki)*w.kw+kj)*ld:][:ld]
			for j := j0; j < j1; {
				oh, ow := j/w.gw, j%w.gw
				n := min(w.gw-ow, j1-j)
				if ih := oh*w.sh + hBase; ih >= 0 && ih < w.ih {
					scatterRow(row[j-j0:j-j0+n], plane[ih*w.iw:(ih+1)*w.iw], ow, lo, hi, w.sw, wBase)
				}
				j += n
			}
		}
	}
}

// scatterRow adds seg[t] onto line[(ow+t)*stride + base] where ow+t lies in
// the valid range [lo, hi): the transpose of gatherRow.
func scatterRow[T convFloat](seg, line []T, ow, lo, hi, stride, base int) {
	a := min(max(lo-ow, 0), len(seg))
	b := min(max(hi-ow, a), len(seg))
	pos := (ow+a)*stride + base
	for _, v := range seg[a:b] {
		line[pos] += v
		pos += stride
	}
}

// loadAs returns t's elements in logical order in precision T. A dense f32
// tensor is returned without a copy, so callers must not write to it.
func loadAs[T convFloat](t *core.Tensor) []T {
	var zero T
	if _, single := any(zero).(float32); !single {
		return any(readF64(t)).([]T)
	}
	if denseF32(t) {
		return any(f32s(t)).([]T)
	}
	if t.DType() == core.F32 { // a strided view: gathered as is
		return any(f32Logical(t)).([]T)
	}
	wide := readF64(t)
	out := tempF32(len(wide))
	for i, v := range wide {
		out[i] = float32(v)
	}
	return any(out).([]T)
}

// resultAs returns where to compute a fresh output's values: the output's
// own memory when it is f32 and T is float32, else scratch for storeAs.
func resultAs[T convFloat](t *core.Tensor) []T {
	var zero T
	if _, single := any(zero).(float32); single && t.DType() == core.F32 {
		return any(f32s(t)).([]T)
	}
	return make([]T, t.Numel())
}

// storeAs writes values computed in resultAs's buffer into the output,
// rounding once to its dtype; output memory used in place needs nothing.
func storeAs[T convFloat](t *core.Tensor, vals []T) {
	switch v := any(vals).(type) {
	case []float64:
		writeF64(t, v)
	case []float32:
		if t.DType() == core.F32 {
			return
		}
		b, d, off := host(t), t.DType(), t.Offset()
		for i, x := range v {
			numerics.PutF64(d, b, off+i, float64(x))
		}
	}
}
