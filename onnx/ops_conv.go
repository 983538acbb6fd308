package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Convolutions and pooling over 1-D and 2-D spatial inputs (1-D runs as
// 2-D with a height of one where the registry has only the 2-D op); other
// pools are composed (ops_pool.go), and ConvTranspose over three or more
// spatial dims is a matmul and a Col2Im (convTransposeCols).
// Padding ONNX gives per side is passed to the registry op when the two
// sides agree and within the op's limits; otherwise the input is padded
// first (with the window's identity) and the op runs unpadded.

var convAttrs = []string{"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}
var poolAttrs = []string{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides", "storage_order", "count_include_pad", "p"}

func init() {
	def(convAttrs, conv, "Conv")
	def(append([]string{"output_padding", "output_shape"}, convAttrs...), convTranspose, "ConvTranspose")
	def(poolAttrs, maxPool, "MaxPool")
	def(poolAttrs, avgPool, "AveragePool")
	def(poolAttrs, lpPool, "LpPool")
	def(nil, global("mean"), "GlobalAveragePool")
	def(nil, global("max"), "GlobalMaxPool")
	def([]string{"p"}, func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		return one(call("norm", core.Attrs{"axes": spatialAxes(x), "keepdim": true, "ord": float64(c.attrInt("p", 2))}, x))
	}, "GlobalLpPool")
}

// window is a convolution's or pool's geometry per spatial dim.
type window struct {
	kernel, stride, dil, begin, end []int
}

func (w window) symmetric() bool {
	for i := range w.begin {
		if w.begin[i] != w.end[i] {
			return false
		}
	}
	return true
}

func spatialAxes(x *core.Tensor) []int {
	axes := make([]int, 0, x.Rank())
	for a := 2; a < x.Rank(); a++ {
		axes = append(axes, a)
	}
	return axes
}

func intsOr(c *ctx, name string, n, def int) []int {
	v, ok := c.attrInts(name)
	if !ok {
		out := make([]int, n)
		for i := range out {
			out[i] = def
		}
		return out
	}
	if len(v) != n {
		c.fail("%s %v has %d values for %d spatial dims", name, v, len(v), n)
		return make([]int, n)
	}
	return toInts(v)
}

// geometry reads a node's window over the spatial dims of x; kernel comes
// from the weight's shape (convolutions) or kernel_shape (pools).
func geometry(c *ctx, x *core.Tensor, kernel []int) window {
	s := x.Rank() - 2
	w := window{kernel: kernel, stride: intsOr(c, "strides", s, 1), dil: intsOr(c, "dilations", s, 1),
		begin: make([]int, s), end: make([]int, s)}
	in := x.Shape()[2:]
	switch auto := c.attrString("auto_pad", "NOTSET"); auto {
	case "NOTSET":
		pads := intsOr(c, "pads", 2*s, 0)
		copy(w.begin, pads[:s])
		copy(w.end, pads[s:])
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		for i := range s {
			if w.stride[i] <= 0 {
				c.fail("strides %v are not positive", w.stride)
				return w
			}
			out := (in[i] + w.stride[i] - 1) / w.stride[i]
			total := max(0, (out-1)*w.stride[i]+(kernel[i]-1)*w.dil[i]+1-in[i])
			w.begin[i], w.end[i] = total/2, total-total/2
			if auto == "SAME_LOWER" {
				w.begin[i], w.end[i] = w.end[i], w.begin[i]
			}
		}
	default:
		c.fail("auto_pad %q is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", auto)
	}
	return w
}

// padSpatial pads the spatial dims of x by the window's sides.
func padSpatial(x *core.Tensor, w window, value float64) *core.Tensor {
	pads := []int{}
	for i := len(w.begin) - 1; i >= 0; i-- {
		pads = append(pads, w.begin[i], w.end[i])
	}
	return call("pad", core.Attrs{"pads": pads, "value": value}, x)
}

// as2d views an N-C-L tensor as N-C-1-L and the geometry with it.
func as2d(x *core.Tensor, w window) (*core.Tensor, window) {
	s := x.Shape()
	return x.Reshape([]int{s[0], s[1], 1, s[2]}), window{kernel: []int{1, w.kernel[0]}, stride: []int{1, w.stride[0]},
		dil: []int{1, w.dil[0]}, begin: []int{0, w.begin[0]}, end: []int{0, w.end[0]}}
}

func from2d(y *core.Tensor) *core.Tensor {
	s := y.Shape()
	return y.Reshape([]int{s[0], s[1], s[3]})
}

func spatialRank(c *ctx, x *core.Tensor) int {
	s := x.Rank() - 2
	if s != 1 && s != 2 {
		c.fail("input shape %v: only 1-D and 2-D spatial inputs are supported", x.Shape())
	}
	return s
}

func conv(c *ctx) ([]*core.Tensor, error) {
	return oneOrFail(c, convolve(c, c.in(0), c.in(1), c.opt(2)))
}

// oneOrFail returns y, or nothing when the node's parameters were wrong
// (c.err, which the runner reports).
func oneOrFail(c *ctx, y *core.Tensor) ([]*core.Tensor, error) {
	if c.err != nil || y == nil {
		return nil, nil
	}
	return one(y)
}

// convolve is Conv's work on x, weights wt and an optional bias, with the
// node's geometry; nil when the geometry is wrong (c.err says why).
func convolve(c *ctx, x, wt, bias *core.Tensor) *core.Tensor {
	s := spatialRank(c, x)
	if c.err != nil || wt.Err() != nil {
		if c.err == nil {
			c.err = wt.Err()
		}
		return nil
	}
	w := geometry(c, x, wt.Shape()[2:])
	if c.err != nil {
		return nil
	}
	if !w.symmetric() {
		x = padSpatial(x, w, 0)
		w.begin, w.end = make([]int, s), make([]int, s)
	}
	op := "conv2d"
	if s == 1 {
		op = "conv1d"
	}
	ins := []*core.Tensor{x, wt}
	if bias != nil {
		ins = append(ins, bias)
	}
	return call(op, core.Attrs{"stride": w.stride, "padding": w.begin, "dilation": w.dil,
		"groups": int(c.attrInt("group", 1))}, ins...)
}

// convTranspose runs the registry op unpadded and then crops (or extends,
// for output_padding) each spatial side, adding the bias last so extended
// positions get it too.
func convTranspose(c *ctx) ([]*core.Tensor, error) {
	x, wt, bias := c.in(0), c.in(1), c.opt(2)
	s := x.Rank() - 2
	if c.err == nil && (s < 1 || wt.Rank() != x.Rank()) {
		c.fail("input shape %v and weight shape %v: want [N, C, spatial...] and [C, M/group, kernel...] of one rank, with at least one spatial dim", x.Shape(), wt.Shape())
	}
	if c.err != nil || wt.Err() != nil {
		return nil, wt.Err()
	}
	kernel := wt.Shape()[2:]
	w := geometry(c, x, kernel)
	outPad := intsOr(c, "output_padding", s, 0)
	in := x.Shape()[2:]
	outShape, hasOut := c.attrInts("output_shape")
	auto := c.attrString("auto_pad", "NOTSET")
	if !hasOut && (auto == "SAME_UPPER" || auto == "SAME_LOWER") {
		outShape, hasOut = make([]int64, s), true
		for i := range s {
			outShape[i] = int64(in[i] * w.stride[i])
		}
	}
	if hasOut {
		if len(outShape) > s {
			outShape = outShape[len(outShape)-s:]
		}
		for i := range s {
			// A negative total (output_shape past the natural size) pads
			// the output; ONNX's halving floors, so the odd element goes
			// to the end.
			total := w.stride[i]*(in[i]-1) + outPad[i] + (kernel[i]-1)*w.dil[i] + 1 - int(outShape[i])
			half := floorDiv(total, 2)
			w.begin[i], w.end[i] = total-half, half
			if auto == "SAME_UPPER" {
				w.begin[i], w.end[i] = half, total-half
			}
		}
	}
	if c.err != nil {
		return nil, nil
	}
	var y *core.Tensor
	if s > 2 {
		if y = convTransposeCols(c, x, wt, w); y == nil {
			return nil, nil
		}
	} else {
		if s == 1 {
			x, _ = as2d(x, w)
			ws := wt.Shape()
			wt = wt.Reshape([]int{ws[0], ws[1], 1, ws[2]})
		}
		stride, dil := w.stride, w.dil
		if s == 1 {
			stride, dil = []int{1, stride[0]}, []int{1, dil[0]}
		}
		y = call("conv_transpose2d", core.Attrs{"stride": stride, "dilation": dil, "groups": int(c.attrInt("group", 1))}, x, wt)
		if s == 1 {
			y = from2d(y)
		}
	}
	crop := window{begin: make([]int, s), end: make([]int, s)}
	for i := range s {
		crop.begin[i], crop.end[i] = -w.begin[i], -w.end[i]+outPad[i]
	}
	y = padSpatial(y, crop, 0)
	if bias != nil {
		shape := make([]int, y.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[1] = bias.Numel()
		y = call("add", nil, y, bias.Reshape(shape))
	}
	return one(y)
}

// convTransposeCols is an unpadded transposed convolution over any number
// of spatial dims (the registry's op is 2-D): each input position's
// columns, the weights' product with its channels ([N, M*prod(kernel), L]
// by group), are summed into the output by Col2Im.
func convTransposeCols(c *ctx, x, wt *core.Tensor, w window) *core.Tensor {
	xs, ws := x.Shape(), wt.Shape()
	s := len(xs) - 2
	g := int(c.attrInt("group", 1))
	if g < 1 || xs[1] != ws[0] || ws[0]%g != 0 {
		c.fail("group %d, input shape %v and weight shape %v: want the input's channels, the weight's dim 0, a multiple of group", g, xs, ws)
		return nil
	}
	kernel, pixels := core.Shape(ws[2:]).Numel(), core.Shape(xs[2:]).Numel()
	full := make([]int, s)
	for i := range s {
		if w.stride[i] < 1 || w.dil[i] < 1 {
			c.fail("strides %v and dilations %v must be positive", w.stride, w.dil)
			return nil
		}
		full[i] = w.stride[i]*(xs[2+i]-1) + (ws[2+i]-1)*w.dil[i] + 1
	}
	cin, m := xs[1]/g, ws[1]
	// [g, M*K, Cin/g] @ [N, g, Cin/g, L] = [N, g, M*K, L]
	wg := call("transpose", core.Attrs{"dim0": 1, "dim1": 2}, wt.Reshape([]int{g, cin, m * kernel}))
	cols := call("matmul", nil, wg, x.Reshape([]int{xs[0], g, cin, pixels}))
	return col2imSum(c, cols.Reshape([]int{xs[0], g * m * kernel, pixels}), full, ws[2:], w.stride, w.dil, make([]int, 2*s))
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func poolWindow(c *ctx, x *core.Tensor) (window, bool) {
	s := x.Rank() - 2
	if s < 1 {
		c.fail("input shape %v has no spatial dims", x.Shape())
		return window{}, false
	}
	k, ok := c.attrInts("kernel_shape")
	if !ok || len(k) != s {
		c.fail("kernel_shape %v does not give one size per spatial dim (%d)", k, s)
	}
	if c.err != nil {
		return window{}, false
	}
	return geometry(c, x, toInts(k)), c.err == nil
}

// fitsNative says whether the registry's pool pads this window itself:
// the same on both sides and at most half the kernel.
func fitsNative(w window) bool {
	for i := range w.begin {
		if w.begin[i] != w.end[i] || w.begin[i] > w.kernel[i]/2 {
			return false
		}
	}
	return true
}

// pool2d runs a 2-D registry pool on x, viewing 1-D input as 2-D.
func pool2d(x *core.Tensor, w window, op string, a core.Attrs) *core.Tensor {
	one := x.Rank() == 3
	if one {
		x, w = as2d(x, w)
	}
	a["kernel_size"], a["stride"], a["padding"] = w.kernel, w.stride, w.begin
	y := call(op, a, x)
	if one {
		y = from2d(y)
	}
	return y
}

func maxPool(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	w, ok := poolWindow(c, x)
	if !ok {
		return nil, nil
	}
	if c.nout > 1 {
		return maxPoolIndices(c, x, w), nil
	}
	if composedPool(w, poolMax) {
		return one(ndPool(c, x, w, poolMax))
	}
	if !fitsNative(w) {
		low := math.Inf(-1)
		if !x.DType().IsFloat() {
			low = math.MinInt32
		}
		x = padSpatial(x, w, low)
		w.begin, w.end = make([]int, len(w.begin)), make([]int, len(w.end))
	}
	a := core.Attrs{"dilation": w.dil, "ceil_mode": c.attrInt("ceil_mode", 0) != 0}
	if x.Rank() == 3 {
		a["dilation"] = []int{1, w.dil[0]}
	}
	return one(pool2d(x, w, "max_pool2d", a))
}

// avgPool divides by the window's count of real elements, when padding is
// not counted, as the ratio of two zero-padded averages: of x and of ones.
func avgPool(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	w, ok := poolWindow(c, x)
	if !ok {
		return nil, nil
	}
	if composedPool(w, poolAvg) {
		return one(ndPool(c, x, w, poolAvg))
	}
	ceil := c.attrInt("ceil_mode", 0) != 0
	include := c.attrInt("count_include_pad", 0) != 0
	if fitsNative(w) {
		return one(pool2d(x, w, "avg_pool2d", core.Attrs{"ceil_mode": ceil, "count_include_pad": include}))
	}
	padded := padSpatial(x, w, 0)
	flat := w
	flat.begin, flat.end = make([]int, len(w.begin)), make([]int, len(w.end))
	y := pool2d(padded, flat, "avg_pool2d", core.Attrs{"ceil_mode": ceil})
	if include {
		return one(y)
	}
	ones := padSpatial(call("ones_like", nil, x), w, 0)
	return one(call("div", nil, y, pool2d(ones, flat, "avg_pool2d", core.Attrs{"ceil_mode": ceil})))
}

// lpPool is (sum of |x|^p over the window)^(1/p): an average pool counting
// padding, times the window size.
func lpPool(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	w, ok := poolWindow(c, x)
	if !ok {
		return nil, nil
	}
	if composedPool(w, poolLp) {
		return one(ndPool(c, x, w, poolLp))
	}
	p := float64(c.attrInt("p", 2))
	size := 1
	for _, k := range w.kernel {
		size *= k
	}
	xp := call("pow", nil, call("abs", nil, x), like(x, p))
	if !fitsNative(w) {
		xp = padSpatial(xp, w, 0)
		w.begin, w.end = make([]int, len(w.begin)), make([]int, len(w.end))
	}
	y := pool2d(xp, w, "avg_pool2d", core.Attrs{"ceil_mode": c.attrInt("ceil_mode", 0) != 0, "count_include_pad": true})
	y = call("mul", nil, y, like(y, float64(size)))
	return one(call("pow", nil, y, like(y, 1/p)))
}

func global(op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		return one(call(op, core.Attrs{"axes": spatialAxes(x), "keepdim": true}, x))
	}
}
