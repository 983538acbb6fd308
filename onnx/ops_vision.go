package onnx

import (
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Image-geometry operators composed of registry ops: AffineGrid (a matmul
// against a constant grid), Col2Im (an index_add of every block's values
// at positions computed from the shapes alone) and MaxUnpool (a scatter
// into zeros).

func init() {
	def([]string{"align_corners"}, affineGrid, "AffineGrid")
	def([]string{"dilations", "pads", "strides"}, col2im, "Col2Im")
	def([]string{"kernel_shape", "pads", "strides"}, maxUnpool, "MaxUnpool")
}

// affineGrid is theta applied to the normalised coordinates of every
// output position: grid[n, ..., :] = theta[n] @ [x, y, (z,) 1].
func affineGrid(c *ctx) ([]*core.Tensor, error) {
	theta := c.in(0)
	size, _ := c.ints(1)
	align := c.attrInt("align_corners", 0) != 0
	spatial := len(size) - 2
	ts := theta.Shape()
	if c.err == nil && (spatial != 2 && spatial != 3 || len(ts) != 3 || ts[1] != spatial || ts[2] != spatial+1 || int64(ts[0]) != size[0]) {
		c.fail("theta has shape %v and size is %v, want [N, 2, 3] with [N, C, H, W] or [N, 3, 4] with [N, C, D, H, W]", ts, size)
	}
	for _, d := range size[2:] {
		if c.err == nil && d < 1 {
			c.fail("size %v has an empty spatial dim", size)
		}
	}
	if c.err != nil {
		return nil, nil
	}
	dims := toInts(size[2:])
	points := 1
	for _, d := range dims {
		points *= d
	}
	// The grid's rows are [x, y, (z,) 1]: the last dim varies fastest and
	// comes first.
	coord := func(i, n int) float64 {
		if align {
			if n == 1 {
				return -1
			}
			return -1 + 2*float64(i)/float64(n-1)
		}
		return -1 + float64(2*i+1)/float64(n)
	}
	base := make([]float64, 0, points*(spatial+1))
	at := make([]int, spatial)
	for range points {
		for k := spatial - 1; k >= 0; k-- {
			base = append(base, coord(at[k], dims[k]))
		}
		base = append(base, 1)
		step(at, dims)
	}
	grid := core.FromFloat64s(theta.DType(), core.Shape{points, spatial + 1}, base, theta.Device())
	y := call("matmul", nil, grid, call("transpose", core.Attrs{"dim0": 1, "dim1": 2}, theta))
	return one(y.Reshape(append(append([]int{ts[0]}, dims...), spatial)))
}

// col2im sums each block's column back into the image: position k of
// block l lands at a pixel fixed by the shapes, or, in the padding, in a
// spare last element that is cut off.
func col2im(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	image, _ := c.ints(1)
	block, _ := c.ints(2)
	s := len(image)
	xs := x.Shape()
	if c.err == nil && (s == 0 || len(block) != s || len(xs) != 3) {
		c.fail("input has shape %v, image_shape %v and block_shape %v: want [N, C*prod(block), L] and one size per spatial dim", xs, image, block)
	}
	if c.err != nil {
		return nil, nil
	}
	stride, dil := intsOr(c, "strides", s, 1), intsOr(c, "dilations", s, 1)
	pads := intsOr(c, "pads", 2*s, 0)
	if c.err != nil {
		return nil, nil
	}
	return oneOrFail(c, col2imSum(c, x, toInts(image), toInts(block), stride, dil, pads))
}

// col2imSum is Col2Im's work: x is [N, C*prod(kern), L], the blocks'
// columns, and the result [N, C, img...]; nil when the shapes disagree
// (c.err says why).
func col2imSum(c *ctx, x *core.Tensor, img, kern, stride, dil, pads []int) *core.Tensor {
	s := len(img)
	xs := x.Shape()
	kernel, pixels := 1, 1
	blocks := make([]int, s)
	nblocks := 1
	for i := range s {
		kernel *= kern[i]
		pixels *= img[i]
		if stride[i] < 1 || dil[i] < 1 || kern[i] < 1 {
			c.fail("strides %v, dilations %v and block_shape %v must be positive", stride, dil, kern)
			return nil
		}
		blocks[i] = (img[i]+pads[i]+pads[s+i]-dil[i]*(kern[i]-1)-1)/stride[i] + 1
		nblocks *= max(blocks[i], 0)
	}
	if c.err == nil && (xs[1]%kernel != 0 || xs[2] != nblocks) {
		c.fail("input has shape %v: want dim 1 a multiple of %d (the block's size) and dim 2 %d (the blocks %v)", xs, kernel, nblocks, blocks)
	}
	if c.err != nil {
		return nil
	}
	target := make([]int64, 0, kernel*nblocks)
	koff, boff := make([]int, s), make([]int, s)
	for range kernel {
		clear(boff)
		for range nblocks {
			flat, inside := 0, true
			for i := range s {
				p := boff[i]*stride[i] - pads[i] + koff[i]*dil[i]
				inside = inside && p >= 0 && p < img[i]
				flat = flat*img[i] + p
			}
			if !inside {
				flat = pixels
			}
			target = append(target, int64(flat))
			step(boff, blocks)
		}
		step(koff, kern)
	}
	n, ch := xs[0], xs[1]/kernel
	canvas := core.Zeros(core.Shape{n, ch, pixels + 1}, x.DType(), x.Device())
	cols := x.Reshape([]int{n, ch, kernel * nblocks})
	y := call("index_add", core.Attrs{"axis": 2}, canvas, core.FromSlice(target, core.Shape{len(target)}, x.Device()), cols)
	y = call("slice", core.Attrs{"axis": 2, "start": 0, "stop": pixels}, y)
	return y.Reshape(append([]int{n, ch}, img...))
}

// step advances a row-major multi-index over dims.
func step(at, dims []int) {
	for k := len(at) - 1; k >= 0; k-- {
		if at[k]++; at[k] < dims[k] {
			return
		}
		at[k] = 0
	}
}

// maxUnpool puts each value at its index in the flattened output of the
// shape MaxPool came from (ONNX's inferred shape), zeros elsewhere; an
// output_shape input pads that at the end, as ONNX's reference does.
func maxUnpool(c *ctx) ([]*core.Tensor, error) {
	x, idx := c.in(0), c.in(1)
	xs := x.Shape()
	s := len(xs) - 2
	kernel, ok := c.attrInts("kernel_shape")
	if c.err == nil && (s < 1 || !ok || len(kernel) != s) {
		c.fail("X has shape %v and kernel_shape is %v: want one kernel size per spatial dim", xs, kernel)
	}
	if c.err == nil && !slices.Equal(idx.Shape(), xs) {
		c.fail("I has shape %v, want X's %v", idx.Shape(), xs)
	}
	if c.err != nil {
		return nil, nil
	}
	stride, pads := intsOr(c, "strides", s, 1), intsOr(c, "pads", 2*s, 0)
	inferred := []int{xs[0], xs[1]}
	numel := xs[0] * xs[1]
	for i := range s {
		d := (xs[i+2]-1)*stride[i] - pads[i] - pads[s+i] + int(kernel[i])
		if d < 1 {
			c.fail("the unpooled dim %d would be %d", i+2, d)
			return nil, nil
		}
		inferred = append(inferred, d)
		numel *= d
	}
	flat := core.Zeros(core.Shape{numel}, x.DType(), x.Device())
	y := call("scatter", core.Attrs{"axis": 0}, flat, idx.Reshape([]int{-1}), x.Reshape([]int{-1})).Reshape(inferred)
	if out, given := c.ints(2); given {
		if len(out) != len(xs) {
			c.fail("output_shape %v has %d dims, want %d", out, len(out), len(xs))
			return nil, nil
		}
		var grow []int
		for i := len(out) - 1; i >= 0; i-- {
			if int(out[i]) < inferred[i] {
				c.fail("output_shape %v is smaller than the unpooled shape %v", out, inferred)
				return nil, nil
			}
			grow = append(grow, 0, int(out[i])-inferred[i])
		}
		y = call("pad", core.Attrs{"pads": grow}, y)
	}
	return one(y)
}
