package onnx

import (
	"slices"

	"github.com/webtensor/webtensor/core"
)

// DeformConv over any number of spatial dims, composed of registry ops so
// it runs on every backend and traces: each kernel tap's sampling point
// (its place in the convolution plus the offset) is interpolated linearly
// from the 2^n input positions around it (one take_along_axis for them
// all; a position outside the input contributes zero, as GridSample's
// zero padding does in ONNX's reference), scaled by the mask, and the
// columns so made meet the weights in a grouped matmul.

func init() {
	def([]string{"dilations", "group", "kernel_shape", "offset_group", "pads", "strides"}, deformConv, "DeformConv")
}

// deformGeometry is a DeformConv's shapes: s spatial dims of sizes in,
// the kernel's, the output's, and the window's stride, dilation and pads.
type deformGeometry struct {
	in, kernel, out           []int
	stride, dil, begin        []int
	group, offGroup, taps, np int // np: output positions
}

func deformConv(c *ctx) ([]*core.Tensor, error) {
	x, wt, offset, bias, mask := c.in(0), c.in(1), c.in(2), c.opt(3), c.opt(4)
	if c.err != nil {
		return nil, nil
	}
	g := deformShapes(c, x, wt, offset, bias, mask)
	if c.err != nil {
		return nil, nil
	}
	xs := x.Shape()
	n, ch, s := xs[0], xs[1], len(g.in)
	pixels := core.Shape(g.in).Numel()
	dt, dev := x.DType(), x.Device()
	// base[k, d, l]: tap k's coordinate along d at output position l.
	base := make([]float64, g.taps*s*g.np)
	k, l := make([]int, s), make([]int, s)
	for ki := range g.taps {
		clear(l)
		for li := range g.np {
			for d := range s {
				base[(ki*s+d)*g.np+li] = float64(l[d]*g.stride[d] - g.begin[d] + k[d]*g.dil[d])
			}
			step(l, g.out)
		}
		step(k, g.kernel)
	}
	pos := call("add", nil, offset.Reshape([]int{n, g.offGroup, g.taps, s, g.np}),
		core.FromFloat64s(dt, core.Shape{g.taps, s, g.np}, base, dev))
	low := call("floor", nil, pos)
	frac := call("sub", nil, pos, low)
	// Each corner's flat input position and weight, [N, G, K, L] each.
	var flats, weights []*core.Tensor
	for corner := range 1 << s {
		var flat, weight, inside *core.Tensor
		for d := range s {
			at := func(t *core.Tensor) *core.Tensor {
				return call("slice", core.Attrs{"axis": 3, "start": d, "stop": d + 1}, t).Reshape([]int{n, g.offGroup, g.taps, g.np})
			}
			p, f := at(low), at(frac)
			w := call("sub", nil, like(f, 1), f)
			if corner>>(s-1-d)&1 == 1 {
				p, w = call("add", nil, p, like(p, 1)), f
			}
			ok := call("logical_and", nil, call("ge", nil, p, like(p, 0)), call("le", nil, p, like(p, float64(g.in[d]-1))))
			term := call("mul", nil, call("where", nil, ok, p, like(p, 0)).Cast(core.I64), core.Scalar(float64(core.Shape(g.in[d+1:]).Numel()), core.I64, dev))
			if d == 0 {
				flat, weight, inside = term, w, ok
			} else {
				flat, weight, inside = call("add", nil, flat, term), call("mul", nil, weight, w), call("logical_and", nil, inside, ok)
			}
		}
		flats = append(flats, flat)
		weights = append(weights, call("where", nil, inside, weight, like(weight, 0)))
	}
	// [N, G, 1, 2^s*K*L] against the input's [N, G, C/G, pixels].
	corners := 1 << s
	idx := call("stack", core.Attrs{"axis": 2}, flats...).Reshape([]int{n, g.offGroup, 1, corners * g.taps * g.np})
	wts := call("stack", core.Attrs{"axis": 2}, weights...)
	if mask != nil {
		wts = call("mul", nil, wts, mask.Reshape([]int{n, g.offGroup, 1, g.taps, g.np}))
	}
	cpg := ch / g.offGroup
	picked := call("take_along_axis", core.Attrs{"axis": 3}, x.Reshape([]int{n, g.offGroup, cpg, pixels}), idx)
	picked = call("mul", nil, picked.Reshape([]int{n, g.offGroup, cpg, corners, g.taps * g.np}),
		wts.Reshape([]int{n, g.offGroup, 1, corners, g.taps * g.np}))
	cols := call("sum", core.Attrs{"axes": []int{3}}, picked) // [N, G, C/G, K*L] = [N, C, K, L]
	// Grouped matmul: [group, oC/group, C/group*K] @ [N, group, C/group*K, L].
	oc := wt.Shape()[0]
	cols = cols.Reshape([]int{n, g.group, ch / g.group * g.taps, g.np})
	y := call("matmul", nil, wt.Reshape([]int{g.group, oc / g.group, ch / g.group * g.taps}), cols)
	y = y.Reshape(append([]int{n, oc}, g.out...))
	if bias != nil {
		shape := make([]int, y.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[1] = oc
		y = call("add", nil, y, bias.Reshape(shape))
	}
	return one(y)
}

// deformShapes checks the inputs' shapes and the attributes against each
// other (c.err says what disagrees) and returns the geometry.
func deformShapes(c *ctx, x, wt, offset, bias, mask *core.Tensor) deformGeometry {
	var g deformGeometry
	xs, ws, offs := x.Shape(), wt.Shape(), offset.Shape()
	s := len(xs) - 2
	if s < 1 || len(ws) != len(xs) || len(offs) != len(xs) {
		c.fail("X %v, W %v and offset %v: want [N, C, spatial...], [oC, C/group, kernel...] and [N, offset_group*prod(kernel)*%d, out...] of one rank, with at least one spatial dim", xs, ws, offs, max(s, 1))
		return g
	}
	g.in, g.kernel, g.out = xs[2:], ws[2:], offs[2:]
	if k, ok := c.attrInts("kernel_shape"); ok && !slices.Equal(toInts(k), g.kernel) {
		c.fail("kernel_shape %v does not match W's shape %v", k, ws)
		return g
	}
	g.stride, g.dil = intsOr(c, "strides", s, 1), intsOr(c, "dilations", s, 1)
	pads := intsOr(c, "pads", 2*s, 0)
	g.group, g.offGroup = int(c.attrInt("group", 1)), int(c.attrInt("offset_group", 1))
	if c.err != nil {
		return g
	}
	g.begin = pads[:s]
	if g.group < 1 || xs[1] != ws[1]*g.group || ws[0]%g.group != 0 {
		c.fail("group %d with X %v and W %v: want C = W's dim 1 * group and oC a multiple of group", g.group, xs, ws)
		return g
	}
	if g.offGroup < 1 || xs[1]%g.offGroup != 0 {
		c.fail("offset_group %d does not divide X's %d channels", g.offGroup, xs[1])
		return g
	}
	g.taps, g.np = core.Shape(g.kernel).Numel(), core.Shape(g.out).Numel()
	for d := range s {
		if g.stride[d] < 1 || g.dil[d] < 1 || pads[d] < 0 || pads[s+d] < 0 {
			c.fail("strides %v, dilations %v and pads %v: want positive strides and dilations and pads of at least 0", g.stride, g.dil, pads)
			return g
		}
		want := (g.in[d]+pads[d]+pads[s+d]-(g.kernel[d]-1)*g.dil[d]-1)/g.stride[d] + 1
		if g.out[d] != want {
			c.fail("offset has shape %v: its spatial dims are the output's, want %d along spatial dim %d", offs, want, d)
			return g
		}
	}
	if offs[0] != xs[0] || offs[1] != g.offGroup*g.taps*s {
		c.fail("offset has shape %v: want [%d, %d, ...] (offset_group %d * %d kernel taps * %d dims)", offs, xs[0], g.offGroup*g.taps*s, g.offGroup, g.taps, s)
		return g
	}
	if mask != nil {
		want := append([]int{xs[0], g.offGroup * g.taps}, g.out...)
		if !slices.Equal(mask.Shape(), want) {
			c.fail("mask has shape %v, want %v", mask.Shape(), want)
			return g
		}
	}
	if bias != nil && (bias.Rank() != 1 || bias.Numel() != ws[0]) {
		c.fail("B has shape %v, want [%d]", bias.Shape(), ws[0])
	}
	return g
}
