package onnx

import (
	"github.com/webtensor/webtensor/core"
)

// GridSample as tensor ops: each spatial axis's sampling coordinate is
// computed from the grid, turned into taps (an index and a weight: one
// for nearest, two for linear, four for cubic), and every combination of
// the axes' taps gathers from the flattened input with take_along_axis,
// weighted and summed. The arithmetic is ONNX's reference
// (onnx/reference/ops/op_grid_sample.py): denormalisation by
// align_corners, rounding halves to even for nearest, out-of-range
// coordinates clamped (border) or reflected (reflection) before the taps,
// and each tap read with the padding mode (zeros: 0 outside).

func init() {
	def([]string{"align_corners", "mode", "padding_mode"}, gridSample, "GridSample")
}

// gridAxis is one spatial axis of the input: its size and the bounds of
// its coordinates (the centres of its edge pixels with align_corners,
// their outer edges without).
type gridAxis struct {
	size   int
	lo, hi float64
}

// gridTap is one sampling position along an axis: its index, in range,
// and its weight ([N, 1, P] each; weight nil for 1).
type gridTap struct {
	index, weight *core.Tensor
}

func gridSample(c *ctx) ([]*core.Tensor, error) {
	x, grid := c.in(0), c.in(1)
	if c.err != nil {
		return nil, nil
	}
	mode := c.attrString("mode", "linear")
	switch mode {
	case "bilinear": // opset 16's names
		mode = "linear"
	case "bicubic":
		mode = "cubic"
	case "linear", "nearest", "cubic":
	default:
		c.fail("mode %q is not one of linear (bilinear), nearest, cubic (bicubic)", mode)
	}
	padding := c.attrString("padding_mode", "zeros")
	if padding != "zeros" && padding != "border" && padding != "reflection" {
		c.fail("padding_mode %q is not one of zeros, border, reflection", padding)
	}
	align := c.attrInt("align_corners", 0) != 0
	if c.err != nil {
		return nil, nil
	}
	xs, gs := x.Shape(), grid.Shape()
	D := len(xs) - 2
	if D < 1 || len(gs) != D+2 || gs[0] != xs[0] || gs[D+1] != D {
		c.fail("X has shape %v and grid %v: want X [N, C, D1, ..., Dr] and grid [N, H1, ..., Hr, r] with r >= 1", xs, gs)
		return nil, nil
	}
	if !x.DType().IsFloat() || !grid.DType().IsFloat() {
		c.fail("X (%s) and grid (%s) must be floating point", x.DType(), grid.DType())
		return nil, nil
	}
	N, C := xs[0], xs[1]
	outShape := append([]int{N, C}, gs[1:D+1]...)
	P, S := 1, 1
	for _, d := range gs[1 : D+1] {
		P *= d
	}
	for _, d := range xs[2:] {
		S *= d
	}
	if N*C*P == 0 {
		return one(core.FromFloat64s(x.DType(), core.Shape(outShape), nil, x.Device()))
	}
	if S == 0 {
		c.fail("X has shape %v: an empty spatial axis cannot be sampled", xs)
		return nil, nil
	}
	g := grid.Reshape([]int{N, P, D})
	taps := make([][]gridTap, D)
	strides := make([]int, D)
	stride := 1
	for k := D - 1; k >= 0; k-- {
		strides[k] = stride
		stride *= xs[2+k]
		ax := gridAxis{size: xs[2+k], lo: -0.5, hi: float64(xs[2+k]) - 0.5}
		if align {
			ax.lo, ax.hi = 0, float64(xs[2+k]-1)
		}
		// The grid's last axis lists coordinates innermost axis first.
		n := call("slice", core.Attrs{"axis": 2, "start": D - 1 - k, "stop": D - k}, g).Reshape([]int{N, 1, P})
		taps[k] = ax.taps(ax.coordinate(n, align, mode, padding), mode, padding)
	}
	xf := x.Reshape([]int{N, C, S})
	var y *core.Tensor
	// Every combination of one tap per axis: its flat index and weight.
	pick := make([]int, D)
	for {
		var idx, w *core.Tensor
		for k, j := range pick {
			t := taps[k][j]
			term := t.index
			if strides[k] != 1 {
				term = call("mul", nil, term, like(term, float64(strides[k])))
			}
			if idx == nil {
				idx = term
			} else {
				idx = call("add", nil, idx, term)
			}
			switch {
			case t.weight == nil:
			case w == nil:
				w = t.weight
			default:
				w = call("mul", nil, w, t.weight)
			}
		}
		v := call("take_along_axis", core.Attrs{"axis": 2}, xf, idx)
		if w != nil {
			v = call("mul", nil, v, w.Cast(x.DType()))
		}
		if y == nil {
			y = v
		} else {
			y = call("add", nil, y, v)
		}
		k := D - 1
		for ; k >= 0; k-- {
			if pick[k]++; pick[k] < len(taps[k]) {
				break
			}
			pick[k] = 0
		}
		if k < 0 {
			break
		}
	}
	return one(y.Reshape(outShape))
}

// coordinate maps normalised grid values n in [-1, 1] to input positions
// along the axis, rounded for nearest, and brings positions outside the
// axis's bounds back in for the border and reflection modes.
func (a gridAxis) coordinate(n *core.Tensor, align bool, mode, padding string) *core.Tensor {
	size := float64(a.size)
	var x *core.Tensor
	if align { // (n + 1) / 2 * (size - 1)
		x = call("mul", nil, call("add", nil, n, like(n, 1)), like(n, (size-1)/2))
	} else { // ((n + 1) * size - 1) / 2
		x = call("div", nil, call("sub", nil, call("mul", nil, call("add", nil, n, like(n, 1)), like(n, size)), like(n, 1)), like(n, 2))
	}
	if mode == "nearest" {
		x = call("round", nil, x)
	}
	outside := call("logical_or", nil, call("lt", nil, x, like(x, a.lo)), call("gt", nil, x, like(x, a.hi)))
	switch padding {
	case "border":
		x = call("where", nil, outside, call("clamp", core.Attrs{"min": 0.0, "max": size - 1}, x), x)
	case "reflection":
		x = a.reflect(x)
	}
	return x
}

// reflect folds positions outside [lo, hi] back in, bouncing between the
// bounds as often as needed (the reference's _gs_reflect).
func (a gridAxis) reflect(x *core.Tensor) *core.Tensor {
	span := a.hi - a.lo
	if span <= 0 { // one pixel with align_corners: everything is at lo
		return call("add", nil, call("mul", nil, x, like(x, 0)), like(x, a.lo))
	}
	fold := func(dist *core.Tensor, near, far float64) *core.Tensor {
		// dist >= 0 past the near bound: n whole spans and a remainder r;
		// an even n lands r inside from the near bound, an odd one from
		// the far bound.
		n := call("floor", nil, call("div", nil, dist, like(dist, span)))
		r := call("sub", nil, dist, call("mul", nil, n, like(n, span)))
		even := call("eq", nil, call("remainder", nil, n, like(n, 2)), like(n, 0))
		sign := 1.0
		if near > far {
			sign = -1
		}
		fromNear := call("add", nil, like(r, near), call("mul", nil, r, like(r, sign)))
		fromFar := call("sub", nil, like(r, far), call("mul", nil, r, like(r, sign)))
		return call("where", nil, even, fromNear, fromFar)
	}
	below := fold(call("sub", nil, like(x, a.lo), x), a.lo, a.hi)
	above := fold(call("sub", nil, x, like(x, a.hi)), a.hi, a.lo)
	return call("where", nil, call("lt", nil, x, like(x, a.lo)), below,
		call("where", nil, call("gt", nil, x, like(x, a.hi)), above, x))
}

// taps are the positions mode reads around coordinate x, each index made
// valid by the padding mode: zeros gives out-of-range taps weight 0,
// border clamps them, reflection reflects them.
func (a gridAxis) taps(x *core.Tensor, mode, padding string) []gridTap {
	if mode == "nearest" {
		return []gridTap{a.tap(call("trunc", nil, x), nil, padding)}
	}
	x0 := call("floor", nil, x)
	t := call("sub", nil, x, x0)
	if mode == "linear" {
		return []gridTap{
			a.tap(x0, call("sub", nil, like(t, 1), t), padding),
			a.tap(call("add", nil, x0, like(x0, 1)), t, padding),
		}
	}
	// Keys' cubic convolution with a = -0.75, at distances 1+t, t, 1-t, 2-t.
	const ca = -0.75
	near := func(d *core.Tensor) *core.Tensor { // ((a+2)d - (a+3)) d^2 + 1
		p := call("sub", nil, call("mul", nil, d, like(d, ca+2)), like(d, ca+3))
		return call("add", nil, call("mul", nil, call("mul", nil, p, d), d), like(d, 1))
	}
	far := func(d *core.Tensor) *core.Tensor { // ((a d - 5a) d + 8a) d - 4a
		p := call("sub", nil, call("mul", nil, d, like(d, ca)), like(d, 5*ca))
		p = call("add", nil, call("mul", nil, p, d), like(d, 8*ca))
		return call("sub", nil, call("mul", nil, p, d), like(d, 4*ca))
	}
	oneMinus := call("sub", nil, like(t, 1), t)
	w := []*core.Tensor{
		far(call("add", nil, t, like(t, 1))),
		near(t),
		near(oneMinus),
		far(call("add", nil, oneMinus, like(t, 1))),
	}
	out := make([]gridTap, 4)
	for i := range out {
		out[i] = a.tap(call("add", nil, x0, like(x0, float64(i-1))), w[i], padding)
	}
	return out
}

// tap turns an integer-valued position into an index inside the axis and
// a weight, by the padding mode.
func (a gridAxis) tap(i, w *core.Tensor, padding string) gridTap {
	last := float64(a.size - 1)
	switch padding {
	case "zeros":
		in := call("logical_and", nil, call("ge", nil, i, like(i, 0)), call("le", nil, i, like(i, last)))
		valid := in.Cast(i.DType())
		if w == nil {
			w = valid
		} else {
			w = call("mul", nil, w, valid)
		}
	case "reflection":
		i = call("trunc", nil, a.reflect(i))
	}
	// Clamping is the border mode and, for the others, keeps the index of
	// a zero-weight or rounded-off tap in range.
	i = call("clamp", core.Attrs{"min": 0.0, "max": last}, i)
	return gridTap{index: i.Cast(core.I32), weight: w}
}
