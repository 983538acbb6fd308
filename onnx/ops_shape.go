package onnx

import (
	"github.com/webtensor/webtensor/core"
)

// Shape operators. The numbers ONNX passes as tensors (target shapes,
// axes, slice bounds, pads) are read on the host (ctx.ints), so a traced
// graph holds plain views with constant attributes; the subgraph that
// computed them is dead code there and the passes drop it.

func init() {
	def([]string{"allowzero"}, reshape, "Reshape")
	def([]string{"perm"}, transposeOp, "Transpose")
	def([]string{"axis"}, func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		return one(call("concat", core.Attrs{"axis": c.axis(c.attrInt("axis", 0), x.Rank())}, c.ins...))
	}, "Concat")
	def([]string{"axis", "num_outputs"}, split, "Split")
	def(nil, sliceOp, "Slice")
	def([]string{"axes"}, squeeze, "Squeeze")
	def([]string{"axes"}, unsqueeze, "Unsqueeze")
	def([]string{"axis"}, flatten, "Flatten")
	def(nil, expand, "Expand")
	def(nil, func(c *ctx) ([]*core.Tensor, error) {
		reps, _ := c.ints(1)
		return one(call("tile", core.Attrs{"reps": toInts(reps)}, c.in(0)))
	}, "Tile")
	def([]string{"mode"}, pad, "Pad")
	def([]string{"start", "end"}, shapeOp, "Shape")
	def(nil, func(c *ctx) ([]*core.Tensor, error) {
		return one(core.FromSlice([]int64{int64(c.in(0).Numel())}, core.Shape{}, c.m.dev))
	}, "Size")
	def([]string{"value"}, constantOfShape, "ConstantOfShape")
	def(nil, rangeOp, "Range")
	def([]string{"to", "saturate", "round_mode"}, castOp, "Cast")
	def([]string{"saturate", "round_mode"}, func(c *ctx) ([]*core.Tensor, error) {
		c.in(1)
		return castAs(c, c.inType(1))
	}, "CastLike")
	def([]string{"blocksize", "mode"}, depthToSpace, "DepthToSpace")
	def([]string{"blocksize", "mode"}, spaceToDepth, "SpaceToDepth")
}

func toInts(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func reshape(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	dims, _ := c.ints(1)
	shape := toInts(dims)
	if c.attrInt("allowzero", 0) == 0 {
		for i, d := range shape {
			if d == 0 {
				if i >= x.Rank() {
					c.fail("shape %v copies dim %d (0) from an input of rank %d", dims, i, x.Rank())
					return nil, nil
				}
				shape[i] = x.Shape()[i]
			}
		}
	}
	return one(x.Reshape(shape))
}

func transposeOp(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	perm, ok := c.attrInts("perm")
	dims := make([]int, x.Rank())
	for i := range dims {
		dims[i] = x.Rank() - 1 - i
		if ok {
			if len(perm) != x.Rank() {
				c.fail("perm %v has %d entries for rank %d", perm, len(perm), x.Rank())
				return nil, nil
			}
			dims[i] = c.axis(perm[i], x.Rank())
		}
	}
	return one(call("permute", core.Attrs{"dims": dims}, x))
}

func split(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	ax := c.axis(c.attrInt("axis", 0), x.Rank())
	if c.err != nil {
		return nil, nil
	}
	n := x.Shape()[ax]
	sizes, ok := c.ints(1)
	if !ok {
		parts := int(c.attrInt("num_outputs", int64(len(c.n.outputs))))
		if parts <= 0 {
			c.fail("num_outputs %d is not positive", parts)
			return nil, nil
		}
		// ONNX makes every piece ceil(n/parts) long but the last, which
		// is what is left (tensor_split would spread the remainder).
		each := (n + parts - 1) / parts
		if !c.has("num_outputs") && n%parts != 0 {
			c.fail("dim %d of size %d does not split into %d equal outputs", ax, n, parts)
			return nil, nil
		}
		sizes = make([]int64, parts)
		left := n
		for i := range sizes {
			sizes[i] = int64(min(each, left))
			left -= int(sizes[i])
		}
	}
	return core.Call("split", []*core.Tensor{x}, core.Attrs{"sizes": toInts(sizes), "axis": ax})
}

// sliceOp resolves ONNX's clamped bounds on the host; a negative step
// reads the flipped axis with the mirrored positive step.
func sliceOp(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	starts, _ := c.ints(1)
	ends, _ := c.ints(2)
	axes, hasAxes := c.ints(3)
	steps, hasSteps := c.ints(4)
	if len(starts) != len(ends) || (hasAxes && len(axes) != len(starts)) || (hasSteps && len(steps) != len(starts)) {
		c.fail("starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
		return nil, nil
	}
	y := x
	for i := range starts {
		ax := i
		if hasAxes {
			ax = c.axis(axes[i], x.Rank())
		}
		step := int64(1)
		if hasSteps {
			step = steps[i]
		}
		if c.err != nil {
			return nil, nil
		}
		y = sliceAxis(c, y, ax, starts[i], ends[i], step)
	}
	return one(y)
}

func clamp64(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }

func sliceAxis(c *ctx, x *core.Tensor, ax int, start, end, step int64) *core.Tensor {
	dim := int64(x.Shape()[ax])
	if step == 0 {
		c.fail("slice step is 0 on axis %d", ax)
		return x
	}
	if start < 0 {
		start += dim
	}
	if end < 0 {
		end += dim
	}
	if step > 0 {
		start, end = clamp64(start, 0, dim), clamp64(end, 0, dim)
		return call("slice", core.Attrs{"axis": ax, "start": int(start), "stop": int(max(end, start)), "step": int(step)}, x)
	}
	start, end = clamp64(start, 0, dim-1), clamp64(end, -1, dim-1)
	count := int64(0)
	if start > end {
		count = (start - end + (-step) - 1) / (-step)
	}
	flipped := call("flip", core.Attrs{"axes": []int{ax}}, x)
	first := dim - 1 - start
	return call("slice", core.Attrs{"axis": ax, "start": int(first), "stop": int(first + count*(-step)), "step": int(-step)}, flipped)
}

// squeezeAxes reads Squeeze's and Unsqueeze's axes: an input from opset
// 13, an attribute before it.
func squeezeAxes(c *ctx) ([]int64, bool) {
	if !c.has("axes") {
		return c.ints(1)
	}
	if c.n.opset >= 13 {
		c.fail("attribute \"axes\" is an input from opset 13 (the model imports opset %d)", c.n.opset)
		return nil, false
	}
	if c.opt(1) != nil {
		c.fail("axes is given both as an attribute and as an input")
		return nil, false
	}
	return c.attrInts("axes")
}

func squeeze(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	axes, ok := squeezeAxes(c)
	if c.err != nil {
		return nil, nil
	}
	if !ok {
		return one(call("squeeze", nil, x))
	}
	return one(call("squeeze", core.Attrs{"axes": c.axes(axes, x.Rank())}, x))
}

func unsqueeze(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	axes, _ := squeezeAxes(c)
	if c.err != nil {
		return nil, nil
	}
	rank := x.Rank() + len(axes)
	inserted := make([]bool, rank)
	for _, a := range c.axes(axes, rank) {
		if inserted[a] {
			c.fail("axes %v repeat an axis", axes)
			return nil, nil
		}
		inserted[a] = true
	}
	shape := make([]int, 0, rank)
	in := x.Shape()
	for i := range rank {
		if inserted[i] {
			shape = append(shape, 1)
		} else {
			shape, in = append(shape, in[0]), in[1:]
		}
	}
	return one(x.Reshape(shape))
}

func flatten(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	a := c.attrInt("axis", 1)
	if a < 0 {
		a += int64(x.Rank())
	}
	if a < 0 || a > int64(x.Rank()) {
		c.fail("axis %d is out of range for rank %d", c.attrInt("axis", 1), x.Rank())
		return nil, nil
	}
	s := x.Shape()
	return one(x.Reshape([]int{core.Shape(s[:a]).Numel(), core.Shape(s[a:]).Numel()}))
}

// expand broadcasts both ways, as ONNX's Expand does: a 1 in the shape
// keeps the input's dim.
func expand(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	dims, _ := c.ints(1)
	out, err := core.BroadcastShapes(x.Shape(), toInts(dims))
	if err != nil {
		return nil, err
	}
	return one(call("expand", core.Attrs{"shape": []int(out)}, x))
}

// pad converts ONNX's [begin..., end...] pads into the registry's
// trailing-dim-first pairs; wrap mode is built from slices and concats.
func pad(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	pads, _ := c.ints(1)
	r := x.Rank()
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if list, ok := c.ints(3); ok {
		axes = c.axes(list, r)
	}
	if len(pads) != 2*len(axes) {
		c.fail("pads %v need 2 values for each of %d axes", pads, len(axes))
		return nil, nil
	}
	begin, end := make([]int, r), make([]int, r)
	for i, a := range axes {
		begin[a], end[a] = int(pads[i]), int(pads[i+len(axes)])
	}
	mode := c.attrString("mode", "constant")
	if mode == "wrap" {
		return one(wrapPad(x, begin, end))
	}
	torchPads := make([]int, 0, 2*r)
	last := 0 // only the dims from the first padded one on are passed
	for a := range r {
		if begin[a] != 0 || end[a] != 0 {
			last = r - a
			break
		}
	}
	for a := r - 1; a >= r-last; a-- {
		torchPads = append(torchPads, begin[a], end[a])
	}
	if len(torchPads) == 0 {
		return one(x)
	}
	attrs := core.Attrs{"pads": torchPads}
	switch mode {
	case "constant":
		if v, ok := c.scalar(2); ok {
			attrs["value"] = v
		}
	case "reflect":
		attrs["mode"] = "reflect"
	case "edge":
		attrs["mode"] = "replicate"
	default:
		c.fail("mode %q is not supported (constant, reflect, edge, wrap)", mode)
		return nil, nil
	}
	return one(call("pad", attrs, x))
}

func wrapPad(x *core.Tensor, begin, end []int) *core.Tensor {
	for a := range begin {
		n := x.Shape()[a]
		parts := []*core.Tensor{}
		if b := begin[a]; b > 0 {
			parts = append(parts, call("slice", core.Attrs{"axis": a, "start": n - b}, x))
		}
		mid := call("slice", core.Attrs{"axis": a, "start": max(0, -begin[a]), "stop": n + min(0, end[a])}, x)
		parts = append(parts, mid)
		if e := end[a]; e > 0 {
			parts = append(parts, call("slice", core.Attrs{"axis": a, "stop": e}, x))
		}
		if len(parts) > 1 {
			x = call("concat", core.Attrs{"axis": a}, parts...)
		} else {
			x = mid
		}
	}
	return x
}

func shapeOp(c *ctx) ([]*core.Tensor, error) {
	s := c.in(0).Shape()
	r := int64(len(s))
	start, end := c.attrInt("start", 0), c.attrInt("end", r)
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = clamp64(start, 0, r), clamp64(end, 0, r)
	vals := []int64{}
	for i := start; i < end; i++ {
		vals = append(vals, int64(s[i]))
	}
	t := core.FromSlice(vals, core.Shape{len(vals)}, c.m.dev)
	c.run.ints[t] = vals
	return one(t)
}

func constantOfShape(c *ctx) ([]*core.Tensor, error) {
	dims, _ := c.ints(0)
	shape, err := checkDims(dims)
	if err != nil {
		return nil, err
	}
	dt, v := core.F32, 0.0
	if a := c.n.attrs["value"]; a != nil {
		t, err := decodeTensor(a.GetT(), core.CPU, nil)
		if err != nil {
			return nil, err
		}
		if t.Numel() != 1 {
			c.fail("value has %d elements, want 1", t.Numel())
			return nil, nil
		}
		dt = t.DType()
		v, _ = t.Item()
		c.setType(0, elemType(a.GetT().GetDataType()))
	}
	return one(call("full", core.Attrs{"shape": []int(shape), "dtype": dt, "value": v, "device": c.m.dev.String()}))
}

func rangeOp(c *ctx) ([]*core.Tensor, error) {
	start, _ := c.scalar(0)
	limit, _ := c.scalar(1)
	delta, _ := c.scalar(2)
	dt := c.in(0).DType()
	if c.err != nil {
		return nil, nil
	}
	if delta == 0 {
		c.fail("delta is 0")
		return nil, nil
	}
	return one(call("arange", core.Attrs{"start": start, "stop": limit, "step": delta, "dtype": dt, "device": c.m.dev.String()}))
}

func castOp(c *ctx) ([]*core.Tensor, error) {
	return castAs(c, elemType(c.attrInt("to", 0)))
}

// castAs is Cast to element type to, narrow types included (narrow.go):
// saturate matters for float8 and round_mode for FLOAT8E8M0.
func castAs(c *ctx, to elemType) ([]*core.Tensor, error) {
	x := c.in(0)
	if c.err != nil {
		return nil, nil
	}
	c.setType(0, to)
	return oneErr(castTo(x, to, c.attrInt("saturate", 1) != 0, c.attrString("round_mode", "up")))
}

// depthToSpace rearranges [N, C*b*b, H, W] into [N, C, H*b, W*b]; DCR
// takes the block index before the channel, CRD after.
func depthToSpace(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	b := int(c.attrInt("blocksize", 0))
	s := x.Shape()
	if len(s) != 4 || b <= 0 || s[1]%(b*b) != 0 {
		c.fail("input shape %v and blocksize %d: want [N, C*b*b, H, W]", s, b)
		return nil, nil
	}
	n, ch, h, w := s[0], s[1]/(b*b), s[2], s[3]
	var y *core.Tensor
	if c.attrString("mode", "DCR") == "CRD" {
		y = x.Reshape([]int{n, ch, b, b, h, w})
		y = call("permute", core.Attrs{"dims": []int{0, 1, 4, 2, 5, 3}}, y)
	} else {
		y = x.Reshape([]int{n, b, b, ch, h, w})
		y = call("permute", core.Attrs{"dims": []int{0, 3, 4, 1, 5, 2}}, y)
	}
	return one(y.Reshape([]int{n, ch, h * b, w * b}))
}

func spaceToDepth(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	b := int(c.attrInt("blocksize", 0))
	s := x.Shape()
	if len(s) != 4 || b <= 0 || s[2]%b != 0 || s[3]%b != 0 {
		c.fail("input shape %v and blocksize %d: want [N, C, H, W] with H and W multiples of b", s, b)
		return nil, nil
	}
	n, ch, h, w := s[0], s[1], s[2]/b, s[3]/b
	y := x.Reshape([]int{n, ch, h, b, w, b})
	// DCR (the default) puts the block offset before the channel, CRD
	// (opset 28) after it, mirroring DepthToSpace's modes.
	switch mode := c.attrString("mode", "DCR"); mode {
	case "DCR":
		y = call("permute", core.Attrs{"dims": []int{0, 3, 5, 1, 2, 4}}, y)
	case "CRD":
		y = call("permute", core.Attrs{"dims": []int{0, 1, 3, 5, 2, 4}}, y)
	default:
		c.fail("mode %q is neither DCR nor CRD", mode)
		return nil, nil
	}
	return one(y.Reshape([]int{n, ch * b * b, h, w}))
}
