package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Dense float32 pooling reads and writes float32 in place: the generic
// kernels' float64 round trip (a widening copy of the input, a narrowing
// one of the output) cost more than the windows themselves. The results
// are the generic kernels' bit for bit: a max is one of its inputs, and an
// average still sums in float64 and rounds once.

// poolF32 reports whether x and out take the float32 path.
func poolF32(x, out *core.Tensor) bool { return denseF32(x) && out.DType() == core.F32 }

// maxPoolF32 is max_pool2d on dense float32. Non-overlapping 2x2 windows
// inside the image (the common downsampling layer) have their own loop;
// every other geometry scans windows as maxWindows does.
func maxPoolF32(g *oprules.PoolGeom, x, out *core.Tensor) {
	inSize, outSize := g.In[0]*g.In[1], g.Out[0]*g.Out[1]
	halves := g.Kernel == [2]int{2, 2} && g.Stride == [2]int{2, 2} && g.Padding == [2]int{} &&
		g.Dilation == [2]int{1, 1} && 2*g.Out[0] <= g.In[0] && 2*g.Out[1] <= g.In[1]
	forPlanes(g.Batch*g.C, f32s(x), inSize, f32s(out), outSize, poolCost(g), func(in, o []float32) {
		if !halves {
			maxWindows(g, in, float32(math.Inf(-1)), func(i int, best float32, _ int) { o[i] = best })
			return
		}
		iw, ow := g.In[1], g.Out[1]
		for oh := range g.Out[0] {
			r0, r1, dst := in[2*oh*iw:][:2*ow], in[(2*oh+1)*iw:][:2*ow], o[oh*ow:][:ow]
			for j := range dst {
				dst[j] = max2x2(r0[2*j], r0[2*j+1], r1[2*j], r1[2*j+1])
			}
		}
	})
}

// max2x2 is the maximum of a window's values in scan order, with
// maxWindows' rules: the first maximum wins and a NaN beats everything.
func max2x2(a, b, c, d float32) float32 { return maxNext(maxNext(maxNext(a, b), c), d) }

// maxNext is maxWindows' step: v replaces best when larger or NaN. It
// selects bit patterns under a mask, without a branch: on random data a
// branch here mispredicts half the time, which made the loop four times
// slower.
func maxNext(best, v float32) float32 {
	bb, vb := math.Float32bits(best), math.Float32bits(v)
	mask := -(bit(v > best) | bit(v != v))
	return math.Float32frombits(bb ^ (bb^vb)&mask)
}

// bit is 1 for true, which the compiler computes with a SETcc.
func bit(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// avgPoolF32 is avg_pool2d on dense float32, summing each window in
// float64 as the generic kernel does.
func avgPoolF32(g *oprules.PoolGeom, x, out *core.Tensor) {
	forPlanes(g.Batch*g.C, f32s(x), g.In[0]*g.In[1], f32s(out), g.Out[0]*g.Out[1], poolCost(g), func(in, o []float32) {
		for oh := 0; oh < g.Out[0]; oh++ {
			for ow := 0; ow < g.Out[1]; ow++ {
				h0, h1, w0, w1, div := g.AvgWindow(oh, ow)
				sum := 0.0
				for h := h0; h < h1; h++ {
					for _, v := range in[h*g.In[1]+w0 : h*g.In[1]+max(w1, w0)] {
						sum += float64(v)
					}
				}
				res := 0.0
				if h0 < h1 && w0 < w1 {
					res = sum / float64(div)
				}
				o[oh*g.Out[1]+ow] = float32(res)
			}
		}
	})
}
