package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Pooling the registry has no op for (3-D and higher spatial inputs;
// average and Lp pools with dilations) is written out: every offset of the
// window is one strided view of the padded input, and the views are
// combined elementwise (maximum, or a sum divided by the window's count).
// The view count is the window's size, so this is for the windows models
// use (a few dozen elements), not a general-purpose pooling kernel.

// poolKind is what a pool computes over its window.
type poolKind int

const (
	poolMax poolKind = iota
	poolAvg
	poolLp
)

// poolOutput is ONNX's output length of one spatial dim: floor, or with
// ceil_mode ceiling, of the window's positions, where a ceil-mode window
// must still start inside the input or its leading padding.
func poolOutput(in, kernel, stride, dil, begin, end int, ceil bool) int {
	span := dil*(kernel-1) + 1
	num := in + begin + end - span
	if num < 0 {
		return 0
	}
	out := num/stride + 1
	if ceil && num%stride != 0 {
		out++
		if (out-1)*stride >= in+begin {
			out--
		}
	}
	return out
}

// windowViews calls f with the strided view of xp (padded, spatial dims
// from 2) for every offset of the window, the views holding out[i] elements
// stride[i] apart from offset*dil[i].
func windowViews(xp *core.Tensor, w window, out []int, f func(v *core.Tensor, offset []int)) {
	s := len(w.kernel)
	offset := make([]int, s)
	for {
		v := xp
		for i := range s {
			start := offset[i] * w.dil[i]
			v = call("slice", core.Attrs{"axis": 2 + i, "start": start, "stop": start + (out[i]-1)*w.stride[i] + 1,
				"step": w.stride[i]}, v)
		}
		f(v, offset)
		i := s - 1
		for ; i >= 0; i-- {
			if offset[i]++; offset[i] < w.kernel[i] {
				break
			}
			offset[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// poolGeometry is a pool's output size per spatial dim and its window with
// the end padding extended by the ceil-mode overhang, so every view fits.
func poolGeometry(c *ctx, x *core.Tensor, w window) (out []int, over window, ok bool) {
	ceil := c.attrInt("ceil_mode", 0) != 0
	in := x.Shape()[2:]
	if size := core.Shape(w.kernel).Numel(); size > 4096 {
		c.fail("a window of %d elements (kernel_shape %v) is too large for the importer's composed pooling", size, w.kernel)
		return nil, window{}, false
	}
	out = make([]int, len(in))
	over = window{kernel: w.kernel, stride: w.stride, dil: w.dil, begin: w.begin, end: make([]int, len(in))}
	for i := range in {
		if w.stride[i] <= 0 || w.dil[i] <= 0 || w.kernel[i] <= 0 {
			c.fail("kernel_shape %v, strides %v and dilations %v must be positive", w.kernel, w.stride, w.dil)
			return nil, over, false
		}
		out[i] = poolOutput(in[i], w.kernel[i], w.stride[i], w.dil[i], w.begin[i], w.end[i], ceil)
		if out[i] <= 0 {
			c.fail("input shape %v is smaller than the window %v (dilations %v, pads %v %v)", x.Shape(), w.kernel, w.dil, w.begin, w.end)
			return nil, over, false
		}
		need := (out[i]-1)*w.stride[i] + w.dil[i]*(w.kernel[i]-1) + 1
		over.end[i] = w.end[i] + max(0, need-in[i]-w.begin[i]-w.end[i])
	}
	return out, over, true
}

// ndPool pools x over window w in any spatial rank. Average pools divide
// by the count of the window's positions inside the input, or, counting
// padding, inside the padded input (never the ceil-mode overhang).
func ndPool(c *ctx, x *core.Tensor, w window, kind poolKind) *core.Tensor {
	in := x.Shape()[2:]
	out, over, ok := poolGeometry(c, x, w)
	if !ok {
		return nil
	}
	if kind == poolMax {
		low := math.Inf(-1)
		if !x.DType().IsFloat() {
			lo, _ := intRange(x.DType())
			low = lo
		}
		var y *core.Tensor
		windowViews(padSpatial(x, over, low), over, out, func(v *core.Tensor, _ []int) {
			if y == nil {
				y = v
			} else {
				y = call("maximum", nil, y, v)
			}
		})
		return y
	}
	if kind == poolLp {
		x = call("pow", nil, call("abs", nil, x), like(x, float64(c.attrInt("p", 2))))
	}
	sum := windowSum(padSpatial(x, over, 0), over, out)
	if kind == poolLp {
		return call("pow", nil, sum, like(sum, 1/float64(c.attrInt("p", 2))))
	}
	// The divisor: a [1, 1, spatial] tensor of ones over the positions that
	// count (the input, or the input and its pads), zeros elsewhere.
	ones := core.Ones(core.Shape(append([]int{1, 1}, in...)), x.DType(), x.Device())
	if c.attrInt("count_include_pad", 0) != 0 {
		ones = padSpatial(ones, w, 1)
		extra := window{begin: make([]int, len(in)), end: make([]int, len(in))}
		for i := range in {
			extra.end[i] = over.end[i] - w.end[i]
		}
		ones = padSpatial(ones, extra, 0)
	} else {
		ones = padSpatial(ones, over, 0)
	}
	return call("div", nil, sum, windowSum(ones, over, out))
}

func windowSum(xp *core.Tensor, w window, out []int) *core.Tensor {
	var y *core.Tensor
	windowViews(xp, w, out, func(v *core.Tensor, _ []int) {
		if y == nil {
			y = v.Contiguous()
		} else {
			y = call("add", nil, y, v)
		}
	})
	return y
}

// maxPoolIndices is MaxPool with its Indices output: the running maximum
// over the window's views keeps, beside each value, the flat index of the
// input element it came from (the first of equal maxima, in the window's
// row-major order, as ONNX's reference takes). Indices count over the
// whole input, row-major, or with storage_order 1 with the spatial dims
// column-major; a padded position has index -1 and never wins.
func maxPoolIndices(c *ctx, x *core.Tensor, w window) []*core.Tensor {
	s := x.Shape()
	in := s[2:]
	out, over, ok := poolGeometry(c, x, w)
	if !ok {
		return nil
	}
	// place[i] is what one step along spatial dim i adds to a flat index.
	place := make([]int64, len(in))
	step := int64(1)
	for k := range in {
		i := len(in) - 1 - k
		if c.attrInt("storage_order", 0) != 0 {
			i = k
		}
		place[i] = step
		step *= int64(in[i])
	}
	plane := core.Shape(in).Numel()
	base := make([]int64, s[0]*s[1])
	for i := range base {
		base[i] = int64(i * plane)
	}
	baseT := core.FromSlice(base, core.Shape(append([]int{s[0], s[1]}, ones(len(in))...)), x.Device())
	low := math.Inf(-1)
	if !x.DType().IsFloat() {
		low, _ = intRange(x.DType())
	}
	n := core.Shape(out).Numel()
	var y, idx *core.Tensor
	windowViews(padSpatial(x, over, low), over, out, func(v *core.Tensor, offset []int) {
		flat := make([]int64, n)
		pos := make([]int, len(out))
		for e := range flat {
			f := int64(0)
			for i, o := range pos {
				coord := o*w.stride[i] + offset[i]*w.dil[i] - w.begin[i]
				if coord < 0 || coord >= in[i] {
					f = -1
					break
				}
				f += int64(coord) * place[i]
			}
			flat[e] = f
			for i := len(pos) - 1; i >= 0; i-- {
				if pos[i]++; pos[i] < out[i] {
					break
				}
				pos[i] = 0
			}
		}
		at := core.FromSlice(flat, core.Shape(append([]int{1, 1}, out...)), x.Device())
		at = call("where", nil, call("ge", nil, at, like(at, 0)), call("add", nil, at, baseT), at)
		if y == nil {
			y, idx = v, call("expand", core.Attrs{"shape": []int(v.Shape())}, at)
			return
		}
		wins := call("gt", nil, v, y)
		y = call("where", nil, wins, v, y)
		idx = call("where", nil, wins, at, idx)
	})
	return []*core.Tensor{y, idx}
}

func ones(n int) []int {
	v := make([]int, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// composedPool says whether a pool must be written out: the registry's
// pools are 2-D (1-D runs as 2-D) and only its max pool takes dilations.
func composedPool(w window, kind poolKind) bool {
	if s := len(w.kernel); s != 1 && s != 2 {
		return true
	}
	if kind != poolMax {
		for _, d := range w.dil {
			if d != 1 {
				return true
			}
		}
	}
	return false
}
