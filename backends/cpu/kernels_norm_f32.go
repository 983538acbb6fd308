package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// group_norm and batch_norm on dense f32 data, forward and backward,
// through the row kernels: a channel's weight and bias are scalars over
// each of its [S] segments, so a segment is normalised ((x-m)*rstd) and
// then mapped (*w + b), the float64 path's formula. Statistics are
// float64 sums of segments in order, so any thread count gives the same
// bits.

// nnSegStats is the mean and biased variance of the segments of x listed
// by seg (start offsets, each of s elements), all one group: the mean
// first, then the shifted sums about it.
func nnSegStats(x []float32, seg func(yield func(int) bool), s int, count float64) (mean, variance float64) {
	var sum neumaier
	for o := range seg {
		sum.add(sumF32(formSum, x[o:o+s]))
	}
	mean = sum.value() / count
	var a1, a2 neumaier
	for o := range seg {
		s1, s2 := shiftSumsF32(x[o:o+s], mean)
		a1.add(s1)
		a2.add(s2)
	}
	s1, s2 := a1.value(), a2.value()
	return mean, math.Max(s2-s1*s1/count, 0) / count
}

// nnSegMeanRstd is nnSegStats with 1/sqrt(variance + eps).
func nnSegMeanRstd(x []float32, seg func(yield func(int) bool), s int, count, eps float64) (mean, rstd float64) {
	mean, variance := nnSegStats(x, seg, s, count)
	return mean, 1 / math.Sqrt(variance+eps)
}

// nnSegNorm writes ((x-m)*rstd)*w + b over one segment; w and b are the
// channel's (absent: 1 and 0).
func nnSegNorm(y, x, ws, bs []float32, ch int, m, rstd float64) {
	normF32(y, x, nil, nil, float32(m), float32(rstd))
	if ws != nil || bs != nil {
		w, b := float32(1), float32(0)
		if ws != nil {
			w = ws[ch]
		}
		if bs != nil {
			b = bs[ch]
		}
		axpbF32(y, y, w, b)
	}
}

// nnSegments lists count segments of s elements, stride apart from first.
func nnSegments(first, count, stride int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for i := range count {
			if !yield(first + i*stride) {
				return
			}
		}
	}
}

// groupNormF32 normalises each group; with silu each segment then goes
// through SiLU while it is still in cache (the fused GroupNorm+SiLU of a
// diffusion ResNet block: one pass over memory instead of two).
func groupNormF32(k *core.KernelCall, n, c, s, groups int, eps float64, silu bool) {
	xs, ws, bs, ys := f32s(k.Inputs[0]), nnOptF32(k.Inputs[1]), nnOptF32(k.Inputs[2]), f32s(k.Outputs[0])
	cg := c / groups
	m := cg * s
	cost := m * 6
	if silu {
		cost += m * 8
	}
	parallelFor(n*groups, cost, func(lo, hi int) {
		for grp := lo; grp < hi; grp++ {
			mean, rstd := nnSegMeanRstd(xs, nnSegments(grp*m, cg, s), s, float64(m), eps)
			for j := range cg {
				o := grp*m + j*s
				nnSegNorm(ys[o:o+s], xs[o:o+s], ws, bs, (grp%groups)*cg+j, mean, rstd)
				if silu {
					siluF32(ys[o : o+s])
				}
			}
		}
	})
}

// siluF32 applies SiLU in place: the vector kernel where there is one,
// else float64 math rounded once, as the silu op's Go path does.
func siluF32(y []float32) {
	if len(y) == 0 || unF32(unSilu, y, y) {
		return
	}
	for i, v := range y {
		x := float64(v)
		y[i] = float32(x / (1 + math.Exp(-x)))
	}
}

// groupNormBackwardF32: per group, with d = g*w[ch], sd = sum(d) and sdx =
// sum(d*(x-m)) over its channels, dx = rstd*d - rstd*sd/m -
// (x-m)*rstd³*sdx/m; dweight and dbias add every batch's sum(g*xhat) and
// sum(g) per channel, in batch order.
func groupNormBackwardF32(k *core.KernelCall, n, c, s, groups int, eps float64) {
	xs, gs, ws, dx := f32s(k.Inputs[0]), f32s(k.Inputs[1]), nnOptF32(k.Inputs[2]), f32s(k.Outputs[0])
	cg := c / groups
	m := cg * s
	segG, segGX := make([]float64, n*c), make([]float64, n*c)
	parallelFor(n*groups, m*10, func(lo, hi int) {
		for grp := lo; grp < hi; grp++ {
			mean, rstd := nnSegMeanRstd(xs, nnSegments(grp*m, cg, s), s, float64(m), eps)
			var sd, sdx float64
			for j := range cg {
				o, ch := grp*m+j*s, (grp%groups)*cg+j
				a1, a2 := normDotsF32(xs[o:o+s], gs[o:o+s], nil, mean)
				segG[grp*cg+j], segGX[grp*cg+j] = a1, a2*rstd
				w := nnWeightF32(ws, ch)
				sd, sdx = sd+w*a1, sdx+w*a2
			}
			mf := float64(m)
			b0, cc := float32(-rstd*sd/mf), float32(-rstd*rstd*rstd*sdx/mf)
			for j := range cg {
				o, ch := grp*m+j*s, (grp%groups)*cg+j
				normGradF32(dx[o:o+s], xs[o:o+s], gs[o:o+s], nil, float32(mean), float32(rstd*nnWeightF32(ws, ch)), b0, cc)
			}
		}
	})
	dw, db := make([]float64, c), make([]float64, c)
	for b := range n {
		for ch := range c {
			dw[ch] += segGX[b*c+ch]
			db[ch] += segG[b*c+ch]
		}
	}
	writeF64(k.Outputs[1], dw)
	writeF64(k.Outputs[2], db)
}

// nnWeightF32 is w[i] in float64, or 1 when there is no weight.
func nnWeightF32(w []float32, i int) float64 {
	if w == nil {
		return 1
	}
	return float64(w[i])
}

// batchNormF32 is batchNormKernel on dense f32 x, weight and bias.
func batchNormF32(k *core.KernelCall, n, c, s int) {
	training, momentum, eps := k.Attrs.Bool("training"), k.Attrs.Float("momentum"), k.Attrs.Float("eps")
	xs, ws, bs, ys := f32s(k.Inputs[0]), nnOptF32(k.Inputs[3]), nnOptF32(k.Inputs[4]), f32s(k.Outputs[0])
	rm, rv := nnOptF64(k.Inputs[1]), nnOptF64(k.Inputs[2])
	newMean, newVar := make([]float64, c), make([]float64, c)
	count := float64(n * s)
	parallelFor(c, n*s*6, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			var mean, rstd float64
			if training {
				var variance float64
				mean, variance = nnSegStats(xs, nnSegments(ch*s, n, c*s), s, count)
				rstd = 1 / math.Sqrt(variance+eps)
				unbiased := variance * count / (count - 1)
				newMean[ch], newVar[ch] = mean, unbiased
				if rm != nil {
					newMean[ch] = (1-momentum)*rm[ch] + momentum*mean
					newVar[ch] = (1-momentum)*rv[ch] + momentum*unbiased
				}
			} else {
				mean, rstd = rm[ch], 1/math.Sqrt(rv[ch]+eps)
				newMean[ch], newVar[ch] = rm[ch], rv[ch]
			}
			for o := range nnSegments(ch*s, n, c*s) {
				nnSegNorm(ys[o:o+s], xs[o:o+s], ws, bs, ch, mean, rstd)
			}
		}
	})
	writeF64(k.Outputs[1], newMean)
	writeF64(k.Outputs[2], newVar)
}

// batchNormBackwardF32 is batchNormBackwardKernel on dense f32 x, g and
// weight: per channel, with sums over its N segments, dx = a*g + ((x-m)*c
// + b0), the training terms (and those of the running statistics'
// gradients) folded into b0 and c.
func batchNormBackwardF32(k *core.KernelCall, n, c, s int) {
	training, momentum, eps := k.Attrs.Bool("training"), k.Attrs.Float("momentum"), k.Attrs.Float("eps")
	xs, gs, ws, dx := f32s(k.Inputs[0]), f32s(k.Inputs[1]), nnOptF32(k.Inputs[4]), f32s(k.Outputs[0])
	rm, rv := nnOptF64(k.Inputs[2]), nnOptF64(k.Inputs[3])
	gMean, gVar := nnOptF64(k.Inputs[5]), nnOptF64(k.Inputs[6])
	a := momentum
	if rm == nil {
		a = 1
	}
	count := float64(n * s)
	dw, db := make([]float64, c), make([]float64, c)
	parallelFor(c, n*s*10, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			segs := nnSegments(ch*s, n, c*s)
			var mean, variance float64
			if training {
				mean, variance = nnSegStats(xs, segs, s, count)
			} else {
				mean, variance = rm[ch], rv[ch]
			}
			rstd := 1 / math.Sqrt(variance+eps)
			var sg, sgx float64
			for o := range segs {
				a1, a2 := normDotsF32(xs[o:o+s], gs[o:o+s], nil, mean)
				sg, sgx = sg+a1, sgx+a2
			}
			dw[ch], db[ch] = sgx*rstd, sg
			w := nnWeightF32(ws, ch)
			var b0, cc float64
			if training {
				b0, cc = -rstd*w*sg/count, -rstd*rstd*rstd*w*sgx/count
				if gMean != nil {
					b0 += gMean[ch] * a / count
				}
				if gVar != nil {
					cc += gVar[ch] * a * 2 / (count - 1)
				}
			}
			for o := range segs {
				normGradF32(dx[o:o+s], xs[o:o+s], gs[o:o+s], nil, float32(mean), float32(rstd*w), float32(b0), float32(cc))
			}
		}
	})
	writeF64(k.Outputs[1], dw)
	writeF64(k.Outputs[2], db)
}
