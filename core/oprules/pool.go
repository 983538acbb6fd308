package oprules

import (
	"fmt"
	"math"
)

// Pooling and resampling over NCHW input with PyTorch semantics. Their
// backward rules are internal ops with their own kernels: a pooling gradient
// is a scatter that no combination of public ops expresses cheaply.

// PoolGeom is a resolved 2-D pooling: shape inference and every backend's
// kernels read it, so they agree on sizes.
type PoolGeom struct {
	Batched  bool // the input has a batch dim
	Batch, C int
	In, Out  [2]int

	Kernel, Stride, Padding, Dilation [2]int
	CeilMode, CountIncludePad         bool
	DivisorOverride                   int // avg_pool2d: 0 when absent
}

// InShape is the full input shape.
func (g PoolGeom) InShape() Shape { return g.layout(g.In) }

// OutShape is the full result shape.
func (g PoolGeom) OutShape() Shape { return g.layout(g.Out) }

func (g PoolGeom) layout(hw [2]int) Shape {
	if g.Batched {
		return Shape{g.Batch, g.C, hw[0], hw[1]}
	}
	return Shape{g.C, hw[0], hw[1]}
}

// poolInput accepts (N, C, H, W) or (C, H, W) with non-empty C, H and W; the
// batch may be empty, as in PyTorch.
func poolInput(x Shape) (PoolGeom, error) {
	var g PoolGeom
	switch len(x) {
	case 3:
		g.Batch, g.C, g.In = 1, x[0], [2]int{x[1], x[2]}
	case 4:
		g.Batched, g.Batch, g.C, g.In = true, x[0], x[1], [2]int{x[2], x[3]}
	default:
		return g, fmt.Errorf("input must be (N, C, H, W) or (C, H, W), got shape %v", x)
	}
	if g.C == 0 || g.In[0] == 0 || g.In[1] == 0 {
		return g, fmt.Errorf("input %v has an empty channel or spatial dim (only the batch may be empty)", x)
	}
	return g, nil
}

// Pool2dGeom resolves max_pool2d (dilated) or avg_pool2d attributes on x.
func Pool2dGeom(x Shape, a Attrs, dilated bool) (PoolGeom, error) {
	g, err := poolInput(x)
	if err != nil {
		return g, err
	}
	if g.Kernel, err = spatialAttr(a, "kernel_size", 2, 1, 1); err != nil {
		return g, err
	}
	g.Stride = g.Kernel
	if len(a.Ints("stride")) > 0 {
		if g.Stride, err = spatialAttr(a, "stride", 2, 1, 1); err != nil {
			return g, err
		}
	}
	if g.Padding, err = spatialAttr(a, "padding", 2, 0, 0); err != nil {
		return g, err
	}
	g.Dilation = [2]int{1, 1}
	if dilated {
		if g.Dilation, err = spatialAttr(a, "dilation", 2, 1, 1); err != nil {
			return g, err
		}
	}
	g.CeilMode, g.CountIncludePad = a.Bool("ceil_mode"), a.Bool("count_include_pad")
	if a.Has("divisor_override") {
		if g.DivisorOverride = a.Int("divisor_override"); g.DivisorOverride == 0 {
			return g, fmt.Errorf("divisor_override must be non-zero")
		}
	}
	for i := range g.Out {
		if g.Padding[i] > g.Kernel[i]/2 {
			return g, fmt.Errorf("padding %v must be at most half of kernel_size %v", g.Padding[:], g.Kernel[:])
		}
		g.Out[i] = poolOutSize(g.In[i], g.Kernel[i], g.Padding[i], g.Stride[i], g.Dilation[i], g.CeilMode)
	}
	if g.Out[0] < 1 || g.Out[1] < 1 {
		return g, fmt.Errorf("input %v is too small for kernel_size %v with padding %v and dilation %v (output size %v)",
			x, g.Kernel[:], g.Padding[:], g.Dilation[:], g.Out[:])
	}
	return g, nil
}

// poolOutSize is PyTorch's pooling_output_shape: with ceil_mode the last
// window may hang over the end but must start inside the input or its left
// padding.
func poolOutSize(in, k, pad, stride, dil int, ceil bool) int {
	num := in + 2*pad - dil*(k-1) - 1
	if ceil {
		num += stride - 1
	}
	out := floorDiv(num, stride) + 1
	if ceil && (out-1)*stride >= in+pad {
		out--
	}
	return out
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// AvgWindow returns the clipped window [h0,h1) x [w0,w1) of output (oh, ow)
// and the divisor PyTorch's avg_pool2d uses for it.
func (g PoolGeom) AvgWindow(oh, ow int) (h0, h1, w0, w1, divisor int) {
	h0, w0 = oh*g.Stride[0]-g.Padding[0], ow*g.Stride[1]-g.Padding[1]
	h1 = min(h0+g.Kernel[0], g.In[0]+g.Padding[0])
	w1 = min(w0+g.Kernel[1], g.In[1]+g.Padding[1])
	padded := (h1 - h0) * (w1 - w0)
	h0, w0 = max(h0, 0), max(w0, 0)
	h1, w1 = min(h1, g.In[0]), min(w1, g.In[1])
	switch {
	case g.DivisorOverride != 0:
		divisor = g.DivisorOverride
	case g.CountIncludePad:
		divisor = padded
	default:
		divisor = (h1 - h0) * (w1 - w0)
	}
	return h0, h1, w0, w1, divisor
}

// AdaptivePool2dGeom resolves adaptive_avg_pool2d to output_size on x.
func AdaptivePool2dGeom(x Shape, outputSize []int) (PoolGeom, error) {
	g, err := poolInput(x)
	if err != nil {
		return g, err
	}
	switch len(outputSize) {
	case 1:
		g.Out = [2]int{outputSize[0], outputSize[0]}
	case 2:
		g.Out = [2]int{outputSize[0], outputSize[1]}
	default:
		return g, fmt.Errorf("output_size must have 1 or 2 values, got %v", outputSize)
	}
	if g.Out[0] < 1 || g.Out[1] < 1 {
		return g, fmt.Errorf("output_size must be positive, got %v", outputSize)
	}
	return g, nil
}

// InterpGeom is a resolved interpolate call on a 4-D input.
type InterpGeom struct {
	Batch, C     int
	In, Out      [2]int
	Mode         string // "nearest" or "bilinear"
	AlignCorners bool
	ScaleFactor  [2]float64 // the user's scale_factor per dim; 0 when size was given
}

// InShape is the full input shape.
func (g InterpGeom) InShape() Shape { return Shape{g.Batch, g.C, g.In[0], g.In[1]} }

// OutShape is the full result shape.
func (g InterpGeom) OutShape() Shape { return Shape{g.Batch, g.C, g.Out[0], g.Out[1]} }

// InterpolateGeom resolves interpolate's attributes on x.
func InterpolateGeom(x Shape, a Attrs) (InterpGeom, error) {
	g := InterpGeom{Mode: a.String("mode"), AlignCorners: a.Bool("align_corners")}
	if len(x) != 4 {
		return g, fmt.Errorf("input must be 4-D (N, C, H, W), got shape %v", x)
	}
	g.Batch, g.C, g.In = x[0], x[1], [2]int{x[2], x[3]}
	if g.Mode == "nearest" && a.Has("align_corners") {
		return g, fmt.Errorf("align_corners can only be set with mode bilinear, not %q", g.Mode)
	}
	size, scale := a.Ints("size"), a.Floats("scale_factor")
	switch {
	case a.Has("size") && a.Has("scale_factor"):
		return g, fmt.Errorf("give size or scale_factor, not both (size %v, scale_factor %v)", size, scale)
	case a.Has("size"):
		if len(size) != 1 && len(size) != 2 {
			return g, fmt.Errorf("size must have 1 or 2 values, got %v", size)
		}
		g.Out = [2]int{size[0], size[len(size)-1]}
	case a.Has("scale_factor"):
		if len(scale) != 1 && len(scale) != 2 {
			return g, fmt.Errorf("scale_factor must have 1 or 2 values, got %v", scale)
		}
		for i := range g.Out {
			s := scale[min(i, len(scale)-1)]
			if !(s > 0) || math.IsInf(s, 0) {
				return g, fmt.Errorf("scale_factor must be positive and finite, got %v", scale)
			}
			g.ScaleFactor[i] = s
			g.Out[i] = int(math.Floor(float64(g.In[i]) * s))
		}
	default:
		return g, fmt.Errorf("give either size or scale_factor")
	}
	if g.In[0] < 1 || g.In[1] < 1 || g.Out[0] < 1 || g.Out[1] < 1 {
		return g, fmt.Errorf("input and output sizes must be positive, got input %v and output %v", g.In[:], g.Out[:])
	}
	return g, nil
}

// NearestSource is the input index that output index dst of dim (0: H,
// 1: W) copies: PyTorch's floor(dst*scale) in float32, scale being
// 1/scale_factor when one was given and in/out otherwise.
func (g InterpGeom) NearestSource(dim, dst int) int {
	in, out := g.In[dim], g.Out[dim]
	switch out {
	case in:
		return dst
	case 2 * in:
		return dst >> 1
	}
	scale := float32(in) / float32(out)
	if g.ScaleFactor[dim] > 0 {
		scale = float32(1 / g.ScaleFactor[dim])
	}
	return min(int(math.Floor(float64(float32(dst)*scale))), in-1)
}

// LinearSource gives the two input indices output index dst of dim blends
// and their weights, as PyTorch's bilinear upsampling computes them.
func (g InterpGeom) LinearSource(dim, dst int) (i0, i1 int, w0, w1 float64) {
	in, out := g.In[dim], g.Out[dim]
	var src float64
	switch {
	case g.AlignCorners:
		if out > 1 {
			src = float64(in-1) / float64(out-1) * float64(dst)
		}
	default:
		scale := float64(in) / float64(out)
		if g.ScaleFactor[dim] > 0 {
			scale = 1 / g.ScaleFactor[dim]
		}
		src = max(scale*(float64(dst)+0.5)-0.5, 0)
	}
	i0 = min(int(math.Floor(src)), in-1)
	w1 = min(max(src-float64(i0), 0), 1)
	i1 = i0
	if i0 < in-1 {
		i1 = i0 + 1
	}
	return i0, i1, 1 - w1, w1
}
