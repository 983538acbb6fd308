package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Resize is separable: each resized axis is one host-built map from input
// to output positions, the same arithmetic as ONNX's reference
// (onnx/reference/ops/op_resize.py): nearest becomes an index_select, so
// values are copied exactly; linear and cubic (antialiased or not) become a
// matmul with the [in, out] weight matrix along the axis, which handles
// every coordinate transformation mode, exclude_outside and the
// extrapolation of tf_crop_and_resize alike.

func init() {
	def([]string{"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
		"extrapolation_value", "keep_aspect_ratio_policy", "mode", "nearest_mode"}, resize, "Resize")
	def([]string{"mode", "scales"}, upsample, "Upsample")
}

// upsample is Upsample (opsets 7 to 9, deprecated since 10), Resize
// before it had coordinate modes: each output position y reads input
// y/scale, nearest rounding down, linear between the two positions
// around it (clamped at the edge), as onnxruntime's Upsample does. The
// scales are an attribute up to opset 8 and an input from 9.
func upsample(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if x.Err() != nil {
		return nil, x.Err()
	}
	mode := c.attrString("mode", "nearest")
	if mode == "bilinear" || mode == "trilinear" {
		mode = "linear"
	}
	if mode != "nearest" && mode != "linear" {
		c.fail("mode %q is not one of nearest, linear", mode)
		return nil, nil
	}
	var scales []float64
	if c.n.opset < 9 {
		a := c.attr("scales", pb.AttributeProto_FLOATS)
		if a == nil {
			c.fail("attribute \"scales\" is required before opset 9")
			return nil, nil
		}
		for _, f := range a.GetFloats() {
			scales = append(scales, float64(f))
		}
	} else {
		if c.has("scales") {
			c.fail("attribute \"scales\" is an input from opset 9 (the model imports opset %d)", c.n.opset)
			return nil, nil
		}
		st := c.in(1)
		if c.err != nil {
			return nil, nil
		}
		var err error
		if scales, err = st.Float64s(); err != nil {
			return nil, err
		}
	}
	shape := x.Shape()
	if len(scales) != len(shape) {
		c.fail("scales %v give %d values for rank %d", scales, len(scales), len(shape))
		return nil, nil
	}
	p := resizeParams{mode: mode, transform: "asymmetric", nearest: "floor"}
	y := x
	for a, scale := range scales {
		if !(scale >= 1) {
			c.fail("scales %v: each must be at least 1", scales)
			return nil, nil
		}
		if scale == 1 {
			continue
		}
		m := p.axisMap(shape[a], int(scale*float64(shape[a])), scale, [2]float64{0, 1})
		if mode == "nearest" {
			y = m.pick(y, a, 0)
		} else {
			y = m.blend(y, a, 0)
		}
	}
	return one(y)
}

// axisMap is one axis's resampling: per output position, taps (input
// index, weight) or, when extrapolated, none.
type axisMap struct {
	in, out int
	taps    [][]tap
	outside []bool
}

type tap struct {
	index  int
	weight float64
}

type resizeParams struct {
	mode, transform, nearest string
	cubicA                   float64
	antialias, exclude       bool
}

func (p resizeParams) coeffs(ratio, scale float64) []float64 {
	switch p.mode {
	case "nearest":
		if ratio == math.Trunc(ratio) {
			return []float64{0, 1}
		}
		switch p.nearest {
		case "round_prefer_ceil":
			return bools(ratio < 0.5, ratio >= 0.5)
		case "floor":
			return []float64{1, 0}
		case "ceil":
			return []float64{0, 1}
		}
		return bools(ratio <= 0.5, ratio > 0.5)
	case "linear":
		if !p.antialias {
			return []float64{1 - ratio, ratio}
		}
		scale = min(scale, 1)
		start := int(math.Floor(-1/scale) + 1)
		c := make([]float64, 2-2*start)
		for i := range c {
			c[i] = max(0, min(1, 1-math.Abs(float64(start+i)-ratio)*scale))
		}
		return normalized(c)
	default: // cubic
		a := p.cubicA
		if !p.antialias {
			r1, r2 := ratio+1, 2-ratio
			return []float64{
				((a*r1-5*a)*r1+8*a)*r1 - 4*a,
				((a+2)*ratio-(a+3))*ratio*ratio + 1,
				((a+2)*(1-ratio)-(a+3))*(1-ratio)*(1-ratio) + 1,
				((a*r2-5*a)*r2+8*a)*r2 - 4*a,
			}
		}
		scale = min(scale, 1)
		start := int(math.Floor(-2/scale) + 1)
		c := make([]float64, 2-2*start)
		for i := range c {
			x := math.Abs(scale * (float64(start+i) - ratio))
			switch {
			case x <= 1:
				c[i] = (a+2)*x*x*x - (a+3)*x*x + 1
			case x < 2:
				c[i] = a*x*x*x - 5*a*x*x + 8*a*x - 4*a
			}
		}
		return normalized(c)
	}
}

func bools(a, b bool) []float64 {
	f := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	return []float64{f(a), f(b)}
}

func normalized(c []float64) []float64 {
	s := 0.0
	for _, v := range c {
		s += v
	}
	for i := range c {
		c[i] /= s
	}
	return c
}

// source maps output position y to its input coordinate; outside marks
// tf_crop_and_resize positions that take the extrapolation value.
func (p resizeParams) source(y float64, scale float64, in, out int, roi [2]float64) (x float64, outside bool) {
	outW := scale * float64(in)
	switch p.transform {
	case "align_corners":
		if outW == 1 {
			return 0, false
		}
		return y * float64(in-1) / (outW - 1), false
	case "asymmetric":
		return y / scale, false
	case "tf_crop_and_resize":
		if outW == 1 {
			x = (roi[1] - roi[0]) * float64(in-1) / 2
		} else {
			x = y * (roi[1] - roi[0]) * float64(in-1) / (outW - 1)
		}
		x += roi[0] * float64(in-1)
		return x, x < 0 || x > float64(in-1)
	case "pytorch_half_pixel":
		if outW == 1 {
			return -0.5, false
		}
		return (y+0.5)/scale - 0.5, false
	case "half_pixel_symmetric":
		adjustment := float64(out) / outW
		offset := float64(in) / 2 * (1 - adjustment)
		return offset + (y+0.5)/scale - 0.5, false
	}
	return (y+0.5)/scale - 0.5, false
}

func (p resizeParams) axisMap(in, out int, scale float64, roi [2]float64) axisMap {
	m := axisMap{in: in, out: out, taps: make([][]tap, out), outside: make([]bool, out)}
	for y := range out {
		x, outside := p.source(float64(y), scale, in, out, roi)
		m.outside[y] = outside
		xi := math.Floor(x)
		ratio := x - xi
		if x == xi {
			ratio = 1
		}
		c := p.coeffs(ratio, scale)
		n := len(c)
		pad := (n + 1) / 2
		xp := x + float64(pad)
		pp := math.Floor(xp)
		frac := xp - pp
		var offset int
		if n%2 == 0 {
			offset = -(n / 2) + 1
			if frac == 0 {
				offset = -(n / 2)
			}
		} else {
			offset = -((n - 1) / 2)
			if frac > 0.5 {
				offset++
			}
		}
		start := int(pp) + offset - pad
		if p.exclude {
			sum := 0.0
			for i := range c {
				if idx := start + i; idx < 0 || idx >= in {
					c[i] = 0
				}
				sum += c[i]
			}
			if sum != 0 {
				for i := range c {
					c[i] /= sum
				}
			}
		}
		for i, w := range c {
			m.taps[y] = append(m.taps[y], tap{index: max(0, min(start+i, in-1)), weight: w})
		}
	}
	return m
}

func resize(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if x.Err() != nil {
		return nil, x.Err()
	}
	r := x.Rank()
	p := resizeParams{mode: c.attrString("mode", "nearest"), transform: c.attrString("coordinate_transformation_mode", "half_pixel"),
		nearest: c.attrString("nearest_mode", "round_prefer_floor"), cubicA: c.attrFloat("cubic_coeff_a", -0.75),
		antialias: c.attrInt("antialias", 0) != 0, exclude: c.attrInt("exclude_outside", 0) != 0}
	if p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic" {
		c.fail("mode %q is not one of nearest, linear, cubic", p.mode)
		return nil, nil
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if list, ok := c.attrInts("axes"); ok {
		axes = c.axes(list, r)
	}
	shape := x.Shape()
	scales := make([]float64, len(axes))
	sizes := make([]int, len(axes))
	if sz, ok := c.ints(3); ok && len(sz) > 0 {
		if len(sz) != len(axes) {
			c.fail("sizes %v give %d values for %d axes", sz, len(sz), len(axes))
			return nil, nil
		}
		for i, a := range axes {
			sizes[i], scales[i] = int(sz[i]), float64(sz[i])/float64(shape[a])
		}
		if policy := c.attrString("keep_aspect_ratio_policy", "stretch"); policy != "stretch" {
			s := scales[0]
			for _, v := range scales {
				if policy == "not_larger" {
					s = min(s, v)
				} else {
					s = max(s, v)
				}
			}
			for i, a := range axes {
				scales[i], sizes[i] = s, int(s*float64(shape[a])+0.5)
			}
		}
	} else {
		st := c.opt(2)
		if st == nil {
			c.fail("neither scales nor sizes is given")
			return nil, nil
		}
		v, err := st.Float64s()
		if err != nil {
			return nil, err
		}
		if len(v) != len(axes) {
			c.fail("scales %v give %d values for %d axes", v, len(v), len(axes))
			return nil, nil
		}
		for i, a := range axes {
			scales[i], sizes[i] = v[i], int(v[i]*float64(shape[a]))
		}
	}
	roi := make([][2]float64, len(axes))
	for i := range roi {
		roi[i] = [2]float64{0, 1}
	}
	if rt := c.opt(1); rt != nil && rt.Numel() > 0 && p.transform == "tf_crop_and_resize" {
		v, err := rt.Float64s()
		if err != nil {
			return nil, err
		}
		if len(v) != 2*len(axes) {
			c.fail("roi %v gives %d values for %d axes", v, len(v), len(axes))
			return nil, nil
		}
		for i := range roi {
			roi[i] = [2]float64{v[i], v[i+len(axes)]}
		}
	}
	if c.err != nil {
		return nil, nil
	}
	extrap := c.attrFloat("extrapolation_value", 0)
	y := x
	for i, a := range axes {
		if sizes[i] == shape[a] && scales[i] == 1 && roi[i] == [2]float64{0, 1} {
			continue
		}
		m := p.axisMap(shape[a], sizes[i], scales[i], roi[i])
		if p.mode == "nearest" {
			y = m.pick(y, a, extrap)
		} else {
			y = m.blend(y, a, extrap)
		}
	}
	return one(y)
}

// pick copies, for each output position, the input position with weight 1.
func (m axisMap) pick(x *core.Tensor, axis int, extrap float64) *core.Tensor {
	idx := make([]int64, m.out)
	for y, taps := range m.taps {
		for _, t := range taps {
			if t.weight == 1 {
				idx[y] = int64(t.index)
			}
		}
	}
	y := call("index_select", core.Attrs{"axis": axis}, x, core.FromSlice(idx, core.Shape{m.out}, x.Device()))
	return m.extrapolate(y, axis, extrap)
}

// blend multiplies the axis, moved last, by the [in, out] weights.
func (m axisMap) blend(x *core.Tensor, axis int, extrap float64) *core.Tensor {
	w := make([]float64, m.in*m.out)
	for y, taps := range m.taps {
		if m.outside[y] {
			continue
		}
		for _, t := range taps {
			w[t.index*m.out+y] += t.weight
		}
	}
	dt := x.DType()
	xf := x
	if !dt.IsFloat() {
		xf = x.Cast(core.F32)
	}
	r := x.Rank()
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[axis], perm[r-1] = r-1, axis
	moved := call("permute", core.Attrs{"dims": perm}, xf)
	y := call("matmul", nil, moved, core.FromFloat64s(xf.DType(), core.Shape{m.in, m.out}, w, x.Device()))
	y = call("permute", core.Attrs{"dims": perm}, y)
	y = m.extrapolate(y, axis, extrap)
	if !dt.IsFloat() {
		y = call("round", nil, y).Cast(dt)
	}
	return y
}

func (m axisMap) extrapolate(y *core.Tensor, axis int, extrap float64) *core.Tensor {
	any := false
	mask := make([]bool, m.out)
	for i, o := range m.outside {
		mask[i], any = o, any || o
	}
	if !any {
		return y
	}
	shape := make([]int, y.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[axis] = m.out
	return call("where", nil, core.FromSlice(mask, core.Shape(shape), y.Device()), like(y, extrap), y)
}
