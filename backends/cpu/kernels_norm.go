package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Normalisation kernels and their backward ops. Statistics are accumulated
// in float64 about a shift near the mean (two passes, mean then squared
// deviations; one pass about the row's first element for dense f32
// rows), which keeps the variance accurate for inputs with a large mean.
// Every op has a dense float32 path through the row kernels
// (rows_simd.go), parallel over rows (kernels_norm_f32.go for group and
// batch norm); weight and bias gradients sum the rows in blocks fixed by
// the shape, folded in order, so any thread count gives the same bits.

func init() {
	register("layer_norm", layerNormKernel)
	register("_layer_norm_backward", layerNormBackwardKernel)
	register("rms_norm", rmsNormKernel)
	register("_rms_norm_backward", rmsNormBackwardKernel)
	register("group_norm", groupNormKernel)
	register("_group_norm_backward", groupNormBackwardKernel)
	register("batch_norm", batchNormKernel)
	register("normalize", normalizeKernel)
	register("_batch_norm_backward", batchNormBackwardKernel)
}

// nnOptF64 reads an optional input; nil when it is absent.
func nnOptF64(t *core.Tensor) []float64 {
	if t == nil {
		return nil
	}
	return readF64(t)
}

// nnOptF32 is the dense f32 data of an optional input; nil when absent.
func nnOptF32(t *core.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return f32s(t)
}

// nnDenseF32 reports whether every present tensor is dense f32.
func nnDenseF32(ts ...*core.Tensor) bool {
	for _, t := range ts {
		if t != nil && !denseF32(t) {
			return false
		}
	}
	return true
}

// normRows splits x into rows of the trailing normalized_shape dims.
func normRows(x core.Shape, ns []int) (rows, n int) {
	rows, n = 1, 1
	for _, d := range x[:len(x)-len(ns)] {
		rows *= d
	}
	for _, d := range ns {
		n *= d
	}
	return rows, n
}

// nnMeanRstd is the mean and 1/sqrt(biased variance + eps) of x.
func nnMeanRstd(x []float64, eps float64) (mean, rstd float64) {
	var s float64
	for _, v := range x {
		s += v
	}
	mean = s / float64(len(x))
	var q float64
	for _, v := range x {
		d := v - mean
		q += d * d
	}
	return mean, 1 / math.Sqrt(q/float64(len(x))+eps)
}

// nnMeanRstdF32 is nnMeanRstd of float32 values in one pass: sums of d
// and d² with d = x - x[0], in float64, give the mean and the variance
// without the cancellation of sum(x²) - n*mean² (the shift is within a
// few deviations of the mean unless x[0] is an outlier of many).
func nnMeanRstdF32(x []float32, eps float64) (mean, rstd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	n, k := float64(len(x)), float64(x[0])
	s1, s2 := shiftSumsF32(x, k)
	return k + s1/n, 1 / math.Sqrt(math.Max(s2-s1*s1/n, 0)/n+eps)
}

// nnAffine returns w[i]*v + b[i] with absent weight 1 and bias 0.
func nnAffine(v float64, w, b []float64, i int) float64 {
	if w != nil {
		v *= w[i]
	}
	if b != nil {
		v += b[i]
	}
	return v
}

func layerNormKernel(k *core.KernelCall) error {
	x, w, b, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	rows, n := normRows(x.Shape(), k.Attrs.Ints("normalized_shape"))
	eps := k.Attrs.Float("eps")
	// A transformer's first norm reads a transposed view (a UNet's (B, C,
	// H, W) map seen as (B, H·W, C)): gathering it into f32 keeps it on
	// the f32 path, where the float64 path converted and wrote back every
	// element (a tenth of a small UNet's forward).
	strided := x.DType() == core.F32 && !x.IsContiguous() && out.DType() == core.F32 && out.IsContiguous()
	if nnDenseF32(w, b) && (strided || nnDenseF32(x)) {
		src, dst, wv, bv := f32Logical(x), f32s(out), nnOptF32(w), nnOptF32(b)
		parallelFor(rows, n*6, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				xr, yr := src[r*n:(r+1)*n], dst[r*n:(r+1)*n]
				if hostKernels && hostLayerNormRowF32(yr, xr, wv, bv, eps) {
					continue
				}
				mean, rstd := nnMeanRstdF32(xr, eps)
				normF32(yr, xr, wv, bv, float32(mean), float32(rstd))
			}
		})
		return nil
	}
	xv, wv, bv := readF64(x), nnOptF64(w), nnOptF64(b)
	parallelFor(rows, n*6, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := xv[r*n : (r+1)*n]
			mean, rstd := nnMeanRstd(xr, eps)
			for i, v := range xr {
				xr[i] = nnAffine((v-mean)*rstd, wv, bv, i)
			}
		}
	})
	writeF64(out, xv)
	return nil
}

// layerNormBackwardKernel: with xhat = (x-mean)*rstd and d = g*w,
// dx = rstd*(d - mean(d) - xhat*mean(d*xhat)) per row; dweight and dbias
// sum g*xhat and g over the rows.
func layerNormBackwardKernel(k *core.KernelCall) error {
	x, g, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	rows, n := normRows(x.Shape(), k.Attrs.Ints("normalized_shape"))
	eps := k.Attrs.Float("eps")
	if nnDenseF32(x, g, w) {
		layerNormBackwardF32(k, rows, n, eps)
		return nil
	}
	xv, gv, wv := readF64(x), readF64(g), nnOptF64(w)
	xhat, dx := tempF64(len(xv)), tempF64(len(xv))
	parallelFor(rows, n*10, func(lo, hi int) {
		d := make([]float64, n)
		for r := lo; r < hi; r++ {
			mean, rstd := nnMeanRstd(xv[r*n:(r+1)*n], eps)
			xh, gr := xhat[r*n:(r+1)*n], gv[r*n:(r+1)*n]
			for i := range xh {
				xh[i] = (xv[r*n+i] - mean) * rstd
				d[i] = gr[i] * nnWeightAt(wv, i)
			}
			normBackwardGroup(xh, d, rstd, dx[r*n:(r+1)*n])
		}
	})
	dw, db := make([]float64, n), make([]float64, n)
	parallelFor(n, rows*2, func(lo, hi int) {
		for r := 0; r < rows; r++ {
			for i := lo; i < hi; i++ {
				dw[i] += gv[r*n+i] * xhat[r*n+i]
				db[i] += gv[r*n+i]
			}
		}
	})
	writeF64(k.Outputs[0], dx)
	writeF64(k.Outputs[1], dw)
	writeF64(k.Outputs[2], db)
	return nil
}

// layerNormBackwardF32 is layerNormBackwardKernel on dense f32 data, with
// float64 sums; the row statistics are kept so that the column pass for
// dweight and dbias does not recompute them. Per row, with d = g*w and
// dots sd = sum(d), sdx = sum(d*(x-m)):
// dx = rstd*d - rstd*sd/n - (x-m)*rstd³*sdx/n.
func layerNormBackwardF32(k *core.KernelCall, rows, n int, eps float64) {
	xs, gs, ws, dx := f32s(k.Inputs[0]), f32s(k.Inputs[1]), nnOptF32(k.Inputs[2]), f32s(k.Outputs[0])
	nf := float64(n)
	dw, db := nnRowsWithColumnSums(xs, gs, rows, n, func(r int) (float64, float64) {
		xr, gr := xs[r*n:(r+1)*n], gs[r*n:(r+1)*n]
		m, s := nnMeanRstdF32(xr, eps)
		sd, sdx := normDotsF32(xr, gr, ws, m)
		normGradF32(dx[r*n:(r+1)*n], xr, gr, ws, float32(m), float32(s), float32(-s*sd/nf), float32(-s*s*s*sdx/nf))
		return m, s
	})
	writeF64(k.Outputs[1], dw)
	writeF64(k.Outputs[2], db)
}

// nnRowsWithColumnSums calls row for every row of [rows, n] data, which
// returns the row's mean and scale, and sums g*((x-mean)*scale) and g
// per column while the row is in cache. Rows run in blocks fixed by the
// shape, each summed into its own partials, which fold in order: the
// same sums on any number of threads.
func nnRowsWithColumnSums(xs, gs []float32, rows, n int, row func(r int) (mean, scale float64)) (dw, db []float64) {
	per := max(64, (rows+255)/256)
	blocks := (rows + per - 1) / per
	parts := tempF64(2 * blocks * n)
	parallelFor(blocks, per*n*12, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			pw, pb := parts[2*b*n:(2*b+1)*n], parts[(2*b+1)*n:(2*b+2)*n]
			for r := b * per; r < min(rows, (b+1)*per); r++ {
				m, s := row(r)
				normColsF32(pw, pb, xs[r*n:(r+1)*n], gs[r*n:(r+1)*n], m, s)
			}
		}
	})
	dw, db = make([]float64, n), make([]float64, n)
	parallelFor(n, blocks*2, func(lo, hi int) {
		for b := range blocks {
			pw, pb := parts[2*b*n:(2*b+1)*n], parts[(2*b+1)*n:(2*b+2)*n]
			for j := lo; j < hi; j++ {
				dw[j] += pw[j]
				db[j] += pb[j]
			}
		}
	})
	return dw, db
}

// nnWeightAt is w[i], or 1 when there is no weight.
func nnWeightAt(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}

// normBackwardGroup is the gradient of (x-mean)*rstd*weight over one group
// of values normalised together, given xhat and d = g*weight:
// dx = rstd*(d - mean(d) - xhat*mean(d*xhat)).
func normBackwardGroup(xhat, d []float64, rstd float64, dx []float64) {
	var sd, sdx float64
	for i, xh := range xhat {
		sd += d[i]
		sdx += d[i] * xh
	}
	n := float64(len(xhat))
	sd, sdx = sd/n, sdx/n
	for i, xh := range xhat {
		dx[i] = rstd * (d[i] - sd - xh*sdx)
	}
}

// rmsInvRoot is 1/sqrt(mean(x^2) + eps).
func rmsInvRoot(x []float64, eps float64) float64 {
	var q float64
	for _, v := range x {
		q += v * v
	}
	return 1 / math.Sqrt(q/float64(len(x))+eps)
}

func rmsNormKernel(k *core.KernelCall) error {
	x, w, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	rows, n := normRows(x.Shape(), k.Attrs.Ints("normalized_shape"))
	eps := oprules.RMSNormEps(k.Attrs, x.DType())
	if nnDenseF32(x, w) {
		src, dst, wv := f32s(x), f32s(out), nnOptF32(w)
		parallelFor(rows, n*4, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				xr, yr := src[r*n:(r+1)*n], dst[r*n:(r+1)*n]
				s := 1 / math.Sqrt(sumF32(formSq, xr)/float64(n)+eps)
				normF32(yr, xr, wv, nil, 0, float32(s))
			}
		})
		return nil
	}
	xv, wv := readF64(x), nnOptF64(w)
	parallelFor(rows, n*4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := xv[r*n : (r+1)*n]
			s := rmsInvRoot(xr, eps)
			for i, v := range xr {
				xr[i] = v * s * nnWeightAt(wv, i)
			}
		}
	})
	writeF64(out, xv)
	return nil
}

// rmsNormBackwardKernel: y = x*s*w with s = (mean(x^2)+eps)^-1/2 gives
// dx = s*g*w - s^3 * x * mean(g*w*x), dweight = sum over rows of g*x*s.
func rmsNormBackwardKernel(k *core.KernelCall) error {
	x, g, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	rows, n := normRows(x.Shape(), k.Attrs.Ints("normalized_shape"))
	eps := oprules.RMSNormEps(k.Attrs, x.DType())
	if nnDenseF32(x, g, w) {
		rmsNormBackwardF32(k, rows, n, eps)
		return nil
	}
	xv, gv, wv := readF64(x), readF64(g), nnOptF64(w)
	dx, scale := tempF64(len(xv)), tempF64(rows)
	parallelFor(rows, n*6, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, gr := xv[r*n:(r+1)*n], gv[r*n:(r+1)*n]
			s := rmsInvRoot(xr, eps)
			scale[r] = s
			var dot float64
			for i, v := range xr {
				dot += gr[i] * nnWeightAt(wv, i) * v
			}
			c := s * s * s * dot / float64(n)
			for i, v := range xr {
				dx[r*n+i] = s*gr[i]*nnWeightAt(wv, i) - c*v
			}
		}
	})
	dw := make([]float64, n)
	parallelFor(n, rows*2, func(lo, hi int) {
		for r := 0; r < rows; r++ {
			for i := lo; i < hi; i++ {
				dw[i] += gv[r*n+i] * xv[r*n+i] * scale[r]
			}
		}
	})
	writeF64(k.Outputs[0], dx)
	writeF64(k.Outputs[1], dw)
	return nil
}

// rmsNormBackwardF32 is rmsNormBackwardKernel on dense f32 data: per row,
// with d = g*w and sdx = sum(d*x), dx = s*d - x*s³*sdx/n.
func rmsNormBackwardF32(k *core.KernelCall, rows, n int, eps float64) {
	xs, gs, ws, dx := f32s(k.Inputs[0]), f32s(k.Inputs[1]), nnOptF32(k.Inputs[2]), f32s(k.Outputs[0])
	dw, _ := nnRowsWithColumnSums(xs, gs, rows, n, func(r int) (float64, float64) {
		xr, gr := xs[r*n:(r+1)*n], gs[r*n:(r+1)*n]
		s := 1 / math.Sqrt(sumF32(formSq, xr)/float64(n)+eps)
		_, sdx := normDotsF32(xr, gr, ws, 0)
		normGradF32(dx[r*n:(r+1)*n], xr, gr, ws, 0, float32(s), 0, float32(-s*s*s*sdx/float64(n)))
		return 0, s
	})
	writeF64(k.Outputs[1], dw)
}

// nnNCS views x [N, C, ...] as N x C x S.
func nnNCS(x core.Shape) (n, c, s int) {
	s = 1
	for _, d := range x[2:] {
		s *= d
	}
	return x[0], x[1], s
}

func groupNormKernel(k *core.KernelCall) error {
	x, w, b, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	n, c, s := nnNCS(x.Shape())
	groups, eps := k.Attrs.Int("num_groups"), k.Attrs.Float("eps")
	silu := k.Attrs.String("activation") == "silu"
	if nnDenseF32(x, w, b) {
		groupNormF32(k, n, c, s, groups, eps, silu)
		return nil
	}
	cg := c / groups
	m := cg * s
	xv, wv, bv := readF64(x), nnOptF64(w), nnOptF64(b)
	parallelFor(n*groups, m*6, func(lo, hi int) {
		for grp := lo; grp < hi; grp++ {
			xr := xv[grp*m : (grp+1)*m]
			mean, rstd := nnMeanRstd(xr, eps)
			first := (grp % groups) * cg
			for t, v := range xr {
				y := nnAffine((v-mean)*rstd, wv, bv, first+t/s)
				if silu {
					y /= 1 + math.Exp(-y)
				}
				xr[t] = y
			}
		}
	})
	writeF64(out, xv)
	return nil
}

func groupNormBackwardKernel(k *core.KernelCall) error {
	x, g, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	n, c, s := nnNCS(x.Shape())
	groups, eps := k.Attrs.Int("num_groups"), k.Attrs.Float("eps")
	if nnDenseF32(x, g, w) {
		groupNormBackwardF32(k, n, c, s, groups, eps)
		return nil
	}
	cg := c / groups
	m := cg * s
	xv, gv, wv := readF64(x), readF64(g), nnOptF64(w)
	xhat, dx := tempF64(len(xv)), tempF64(len(xv))
	parallelFor(n*groups, m*10, func(lo, hi int) {
		d := make([]float64, m)
		for grp := lo; grp < hi; grp++ {
			mean, rstd := nnMeanRstd(xv[grp*m:(grp+1)*m], eps)
			xh := xhat[grp*m : (grp+1)*m]
			first := (grp % groups) * cg
			for t := range xh {
				xh[t] = (xv[grp*m+t] - mean) * rstd
				d[t] = gv[grp*m+t] * nnWeightAt(wv, first+t/s)
			}
			normBackwardGroup(xh, d, rstd, dx[grp*m:(grp+1)*m])
		}
	})
	dw, db := nnChannelSums(xhat, gv, n, c, s)
	writeF64(k.Outputs[0], dx)
	writeF64(k.Outputs[1], dw)
	writeF64(k.Outputs[2], db)
	return nil
}

// nnChannelSums sums g*xhat and g per channel of [N, C, S] tensors.
func nnChannelSums(xhat, g []float64, n, c, s int) (dw, db []float64) {
	dw, db = make([]float64, c), make([]float64, c)
	parallelFor(c, n*s*2, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			for b := 0; b < n; b++ {
				base := (b*c + ch) * s
				for t := base; t < base+s; t++ {
					dw[ch] += g[t] * xhat[t]
					db[ch] += g[t]
				}
			}
		}
	})
	return dw, db
}

// batchStats is one channel's batch mean and biased variance.
func batchStats(x []float64, n, c, s, ch int) (mean, variance float64) {
	var sum float64
	for b := 0; b < n; b++ {
		for _, v := range x[(b*c+ch)*s : (b*c+ch+1)*s] {
			sum += v
		}
	}
	count := float64(n * s)
	mean = sum / count
	var q float64
	for b := 0; b < n; b++ {
		for _, v := range x[(b*c+ch)*s : (b*c+ch+1)*s] {
			q += (v - mean) * (v - mean)
		}
	}
	return mean, q / count
}

// batchNormKernel normalises per channel. Training uses the batch mean and
// biased variance and returns running statistics updated with the unbiased
// variance (or the batch statistics themselves when none are given); eval
// uses the running statistics and returns them unchanged.
func batchNormKernel(k *core.KernelCall) error {
	x, rmT, rvT, w, b := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Inputs[4]
	n, c, s := nnNCS(x.Shape())
	if nnDenseF32(x, w, b) {
		batchNormF32(k, n, c, s)
		return nil
	}
	training, momentum, eps := k.Attrs.Bool("training"), k.Attrs.Float("momentum"), k.Attrs.Float("eps")
	xv, rm, rv, wv, bv := readF64(x), nnOptF64(rmT), nnOptF64(rvT), nnOptF64(w), nnOptF64(b)
	newMean, newVar := make([]float64, c), make([]float64, c)
	count := float64(n * s)
	parallelFor(c, n*s*6, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var mean, variance float64
			if training {
				mean, variance = batchStats(xv, n, c, s, ch)
				unbiased := variance * count / (count - 1)
				newMean[ch], newVar[ch] = mean, unbiased
				if rm != nil {
					newMean[ch] = (1-momentum)*rm[ch] + momentum*mean
					newVar[ch] = (1-momentum)*rv[ch] + momentum*unbiased
				}
			} else {
				mean, variance = rm[ch], rv[ch]
				newMean[ch], newVar[ch] = mean, variance
			}
			rstd := 1 / math.Sqrt(variance+eps)
			for bi := 0; bi < n; bi++ {
				row := xv[(bi*c+ch)*s : (bi*c+ch+1)*s]
				for t, v := range row {
					row[t] = nnAffine((v-mean)*rstd, wv, bv, ch)
				}
			}
		}
	})
	writeF64(k.Outputs[0], xv)
	writeF64(k.Outputs[1], newMean)
	writeF64(k.Outputs[2], newVar)
	return nil
}

// batchNormBackwardKernel: in training the y path is the usual
// normalisation gradient over each channel's N*S values, and the updated
// running statistics add a*g_mean/count and a*g_var*2*(x-mean)/(count-1),
// with a the momentum (1 when no running statistics were given, since the
// batch statistics are returned directly). In eval mode y is affine in x.
func batchNormBackwardKernel(k *core.KernelCall) error {
	x, g := k.Inputs[0], k.Inputs[1]
	n, c, s := nnNCS(x.Shape())
	if nnDenseF32(x, g, k.Inputs[4]) {
		batchNormBackwardF32(k, n, c, s)
		return nil
	}
	training, momentum, eps := k.Attrs.Bool("training"), k.Attrs.Float("momentum"), k.Attrs.Float("eps")
	xv, gv := readF64(x), readF64(g)
	rm, rv, wv := nnOptF64(k.Inputs[2]), nnOptF64(k.Inputs[3]), nnOptF64(k.Inputs[4])
	gMean, gVar := nnOptF64(k.Inputs[5]), nnOptF64(k.Inputs[6])
	a := momentum
	if rm == nil {
		a = 1
	}
	count := float64(n * s)
	xhat, dx := tempF64(len(xv)), tempF64(len(xv))
	parallelFor(c, n*s*12, func(lo, hi int) {
		idx := make([]int, 0, n*s)
		xh, d, dr := tempF64(n*s), tempF64(n*s), tempF64(n*s)
		for ch := lo; ch < hi; ch++ {
			idx = idx[:0]
			for bi := 0; bi < n; bi++ {
				for t := (bi*c + ch) * s; t < (bi*c+ch+1)*s; t++ {
					idx = append(idx, t)
				}
			}
			var mean, variance float64
			if training {
				mean, variance = batchStats(xv, n, c, s, ch)
			} else {
				mean, variance = rm[ch], rv[ch]
			}
			rstd := 1 / math.Sqrt(variance+eps)
			weight := nnWeightAt(wv, ch)
			for j, t := range idx {
				xh[j], d[j] = (xv[t]-mean)*rstd, gv[t]*weight
				xhat[t] = xh[j]
			}
			if training {
				normBackwardGroup(xh, d, rstd, dr)
			} else {
				for j := range idx {
					dr[j] = d[j] * rstd
				}
			}
			for j, t := range idx {
				d := dr[j]
				if training && gMean != nil {
					d += gMean[ch] * a / count
				}
				if training && gVar != nil {
					d += gVar[ch] * a * 2 * (xv[t] - mean) / (count - 1)
				}
				dx[t] = d
			}
		}
	})
	dw, db := nnChannelSums(xhat, gv, n, c, s)
	writeF64(k.Outputs[0], dx)
	writeF64(k.Outputs[1], dw)
	writeF64(k.Outputs[2], db)
	return nil
}

// normalizeKernel divides each vector along axis by max(its p-norm, eps),
// the norms taken as the norm op's kernel takes them (vectorNorms).
func normalizeKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	axis, err := oprules.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	norms := vectorNorms(x, []int{axis}, k.Attrs.Float("p"))
	eps := k.Attrs.Float("eps")
	for i, n := range norms {
		if !math.IsNaN(n) {
			norms[i] = math.Max(n, eps)
		}
	}
	v := readF64(x)
	_, n, inner := axisSplit(x.Shape(), axis)
	for i := range v {
		// element i's vector is its position less the axis: (outer, inner).
		v[i] /= norms[i/(n*inner)*inner+i%inner]
	}
	writeF64(out, v)
	return nil
}
