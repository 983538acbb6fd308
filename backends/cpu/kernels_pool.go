package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Pooling and resampling kernels. Each works plane by plane (one batch item
// and channel) in float64, or int64 for integer max pooling, with planes in
// parallel; the backward kernels scatter into the plane of their own input,
// so planes never share output.

func init() {
	register("max_pool2d", maxPoolKernel)
	register("_max_pool2d_backward", maxPoolBackwardKernel)
	register("avg_pool2d", avgPoolKernel)
	register("_avg_pool2d_backward", avgPoolBackwardKernel)
	register("adaptive_avg_pool2d", adaptivePoolKernel)
	register("_adaptive_avg_pool2d_backward", adaptivePoolBackwardKernel)
	register("interpolate", interpolateKernel)
	register("_interpolate_backward", interpolateBackwardKernel)
}

// forPlanes runs fn(p, in, out) on every plane p of n planes, in parallel;
// in and out are plane p's slices of src and dst.
func forPlanes[S, D any](n int, src []S, inSize int, dst []D, outSize, cost int, fn func(in []S, out []D)) {
	parallelFor(n, cost, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			fn(src[p*inSize:(p+1)*inSize], dst[p*outSize:(p+1)*outSize])
		}
	})
}

// maxWindows visits every window of a plane and reports the window's
// maximum and its plane index, the way PyTorch picks them: the first maximum
// in scan order wins and a NaN beats everything (a later NaN wins again).
// A window lying entirely in the padding reports empty and index -1.
func maxWindows[T int64 | float64 | float32](g *oprules.PoolGeom, plane []T, empty T, visit func(o int, best T, at int)) {
	ih, iw := g.In[0], g.In[1]
	for oh := 0; oh < g.Out[0]; oh++ {
		h0 := oh*g.Stride[0] - g.Padding[0]
		for ow := 0; ow < g.Out[1]; ow++ {
			w0 := ow*g.Stride[1] - g.Padding[1]
			best, at := empty, -1
			for ki := 0; ki < g.Kernel[0]; ki++ {
				h := h0 + ki*g.Dilation[0]
				if h < 0 || h >= ih {
					continue
				}
				for kj := 0; kj < g.Kernel[1]; kj++ {
					w := w0 + kj*g.Dilation[1]
					if w < 0 || w >= iw {
						continue
					}
					if v := plane[h*iw+w]; at < 0 || v > best || v != v {
						best, at = v, h*iw+w
					}
				}
			}
			visit(oh*g.Out[1]+ow, best, at)
		}
	}
}

func poolCost(g *oprules.PoolGeom) int { return g.Out[0] * g.Out[1] * g.Kernel[0] * g.Kernel[1] }

func maxPoolKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.Pool2dGeom(x.Shape(), k.Attrs, true)
	if err != nil {
		return err
	}
	planes, inSize, outSize := g.Batch*g.C, g.In[0]*g.In[1], g.Out[0]*g.Out[1]
	if poolF32(x, out) {
		maxPoolF32(&g, x, out)
		return nil
	}
	if x.DType().IsFloat() {
		res := tempF64(out.Numel())
		forPlanes(planes, readF64(x), inSize, res, outSize, poolCost(&g), func(in, o []float64) {
			maxWindows(&g, in, math.Inf(-1), func(i int, best float64, _ int) { o[i] = best })
		})
		writeF64(out, res)
		return nil
	}
	res := tempI64(out.Numel())
	forPlanes(planes, readI64(x), inSize, res, outSize, poolCost(&g), func(in, o []int64) {
		maxWindows(&g, in, lowestInt(x.DType()), func(i int, best int64, _ int) { o[i] = best })
	})
	writeI64(out, res)
	return nil
}

// lowestInt is the smallest value of an integer dtype: the result of a max
// window that only covers padding.
func lowestInt(d core.DType) int64 {
	switch d {
	case core.I32:
		return math.MinInt32
	case core.I16:
		return math.MinInt16
	case core.I8:
		return math.MinInt8
	case core.U8:
		return 0
	}
	return math.MinInt64
}

func maxPoolBackwardKernel(k *core.KernelCall) error {
	grad, x, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	g, err := oprules.Pool2dGeom(x.Shape(), k.Attrs, true)
	if err != nil {
		return err
	}
	planes, inSize, outSize := g.Batch*g.C, g.In[0]*g.In[1], g.Out[0]*g.Out[1]
	gy, xs := readF64(grad), readF64(x)
	dx := tempF64(out.Numel())
	parallelFor(planes, poolCost(&g), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			gp, dp := gy[p*outSize:(p+1)*outSize], dx[p*inSize:(p+1)*inSize]
			maxWindows(&g, xs[p*inSize:(p+1)*inSize], math.Inf(-1), func(o int, _ float64, at int) {
				if at >= 0 {
					dp[at] += gp[o]
				}
			})
		}
	})
	writeF64(out, dx)
	return nil
}

func avgPoolKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.Pool2dGeom(x.Shape(), k.Attrs, false)
	if err != nil {
		return err
	}
	if poolF32(x, out) {
		avgPoolF32(&g, x, out)
		return nil
	}
	res := tempF64(out.Numel())
	forPlanes(g.Batch*g.C, readF64(x), g.In[0]*g.In[1], res, g.Out[0]*g.Out[1], poolCost(&g), func(in, o []float64) {
		for oh := 0; oh < g.Out[0]; oh++ {
			for ow := 0; ow < g.Out[1]; ow++ {
				h0, h1, w0, w1, div := g.AvgWindow(oh, ow)
				sum := 0.0
				for h := h0; h < h1; h++ {
					for _, v := range in[h*g.In[1]+w0 : h*g.In[1]+max(w1, w0)] {
						sum += v
					}
				}
				if h0 < h1 && w0 < w1 {
					o[oh*g.Out[1]+ow] = sum / float64(div)
				}
			}
		}
	})
	writeF64(out, res)
	return nil
}

func avgPoolBackwardKernel(k *core.KernelCall) error {
	grad, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.Pool2dGeom(k.Attrs.Ints("input_shape"), k.Attrs, false)
	if err != nil {
		return err
	}
	dx := tempF64(out.Numel())
	forPlanes(g.Batch*g.C, readF64(grad), g.Out[0]*g.Out[1], dx, g.In[0]*g.In[1], poolCost(&g), func(gy, d []float64) {
		for oh := 0; oh < g.Out[0]; oh++ {
			for ow := 0; ow < g.Out[1]; ow++ {
				h0, h1, w0, w1, div := g.AvgWindow(oh, ow)
				share := gy[oh*g.Out[1]+ow] / float64(div)
				for h := h0; h < h1; h++ {
					for w := w0; w < w1; w++ {
						d[h*g.In[1]+w] += share
					}
				}
			}
		}
	})
	writeF64(out, dx)
	return nil
}

// adaptiveCells visits every output cell of adaptive pooling with its input
// window [h0,h1) x [w0,w1).
func adaptiveCells(g *oprules.PoolGeom, visit func(o, h0, h1, w0, w1 int)) {
	for oh := 0; oh < g.Out[0]; oh++ {
		h0, h1 := kernelkit.AdaptiveRange(oh, g.In[0], g.Out[0])
		for ow := 0; ow < g.Out[1]; ow++ {
			w0, w1 := kernelkit.AdaptiveRange(ow, g.In[1], g.Out[1])
			visit(oh*g.Out[1]+ow, h0, h1, w0, w1)
		}
	}
}

// adaptiveCost bounds the work of one plane: along a dim the windows cover
// at most in + out elements in all (each overlaps the next by one at most).
func adaptiveCost(g *oprules.PoolGeom) int { return (g.In[0] + g.Out[0]) * (g.In[1] + g.Out[1]) }

func adaptivePoolKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.AdaptivePool2dGeom(x.Shape(), k.Attrs.Ints("output_size"))
	if err != nil {
		return err
	}
	res := tempF64(out.Numel())
	forPlanes(g.Batch*g.C, readF64(x), g.In[0]*g.In[1], res, g.Out[0]*g.Out[1], adaptiveCost(&g), func(in, o []float64) {
		adaptiveCells(&g, func(i, h0, h1, w0, w1 int) {
			sum := 0.0
			for h := h0; h < h1; h++ {
				for _, v := range in[h*g.In[1]+w0 : h*g.In[1]+w1] {
					sum += v
				}
			}
			o[i] = sum / float64((h1-h0)*(w1-w0))
		})
	})
	writeF64(out, res)
	return nil
}

func adaptivePoolBackwardKernel(k *core.KernelCall) error {
	grad, out := k.Inputs[0], k.Outputs[0]
	s := grad.Shape()
	g, err := oprules.AdaptivePool2dGeom(k.Attrs.Ints("input_shape"), s[len(s)-2:])
	if err != nil {
		return err
	}
	dx := tempF64(out.Numel())
	forPlanes(g.Batch*g.C, readF64(grad), g.Out[0]*g.Out[1], dx, g.In[0]*g.In[1], adaptiveCost(&g), func(gy, d []float64) {
		adaptiveCells(&g, func(i, h0, h1, w0, w1 int) {
			share := gy[i] / float64((h1-h0)*(w1-w0))
			for h := h0; h < h1; h++ {
				for w := w0; w < w1; w++ {
					d[h*g.In[1]+w] += share
				}
			}
		})
	})
	writeF64(out, dx)
	return nil
}

// taps are the input indices and weights one output index blends along one
// dim: a single tap of weight 1 for nearest, two for bilinear.
type taps struct {
	idx [2]int
	wt  [2]float64
	n   int
}

// interpTaps precomputes the taps of every output index of dim.
func interpTaps(g *oprules.InterpGeom, dim int) []taps {
	out := make([]taps, g.Out[dim])
	for i := range out {
		if g.Mode == "nearest" {
			out[i] = taps{idx: [2]int{g.NearestSource(dim, i)}, wt: [2]float64{1}, n: 1}
			continue
		}
		i0, i1, w0, w1 := g.LinearSource(dim, i)
		out[i] = taps{idx: [2]int{i0, i1}, wt: [2]float64{w0, w1}, n: 2}
	}
	return out
}

// interpVisit calls visit for every (output, input, weight) triple of a
// plane; the forward gathers along it and the backward scatters.
func interpVisit(g *oprules.InterpGeom, rows, cols []taps, visit func(o, i int, wt float64)) {
	iw := g.In[1]
	for oh, r := range rows {
		for ow, c := range cols {
			o := oh*g.Out[1] + ow
			for a := 0; a < r.n; a++ {
				for b := 0; b < c.n; b++ {
					visit(o, r.idx[a]*iw+c.idx[b], r.wt[a]*c.wt[b])
				}
			}
		}
	}
}

func interpolateKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.InterpolateGeom(x.Shape(), k.Attrs)
	if err != nil {
		return err
	}
	rows, cols := interpTaps(&g, 0), interpTaps(&g, 1)
	if g.Mode == "nearest" && denseF32(x) && denseF32(out) {
		// A UNet's upsampler: the copy in f32, where the float64 path
		// converted the image in and the result out.
		iw, ow := g.In[1], g.Out[1]
		forPlanes(g.Batch*g.C, f32s(x), g.In[0]*iw, f32s(out), g.Out[0]*ow, g.Out[0]*ow, func(in, o []float32) {
			for oh, r := range rows {
				src, dst := in[r.idx[0]*iw:][:iw], o[oh*ow:][:ow]
				for j, c := range cols {
					dst[j] = src[c.idx[0]]
				}
			}
		})
		return nil
	}
	res := tempF64(out.Numel())
	forPlanes(g.Batch*g.C, readF64(x), g.In[0]*g.In[1], res, g.Out[0]*g.Out[1], 4*g.Out[0]*g.Out[1], func(in, o []float64) {
		if g.Mode == "nearest" {
			// A copy, not a weighted sum, so -0 and NaN payloads pass through.
			interpVisit(&g, rows, cols, func(oi, ii int, _ float64) { o[oi] = in[ii] })
			return
		}
		interpVisit(&g, rows, cols, func(oi, ii int, wt float64) { o[oi] += wt * in[ii] })
	})
	writeF64(out, res)
	return nil
}

func interpolateBackwardKernel(k *core.KernelCall) error {
	grad, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.InterpolateGeom(k.Attrs.Ints("input_shape"), k.Attrs)
	if err != nil {
		return err
	}
	rows, cols := interpTaps(&g, 0), interpTaps(&g, 1)
	dx := tempF64(out.Numel())
	forPlanes(g.Batch*g.C, readF64(grad), g.Out[0]*g.Out[1], dx, g.In[0]*g.In[1], 4*g.Out[0]*g.Out[1], func(gy, d []float64) {
		interpVisit(&g, rows, cols, func(oi, ii int, wt float64) { d[ii] += wt * gy[oi] })
	})
	writeF64(out, dx)
	return nil
}
