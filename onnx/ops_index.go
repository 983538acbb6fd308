package onnx

import (
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Indexing operators. ONNX lets indices be negative (counting from the
// end); the registry's index ops mostly do not, so indices are wrapped on
// the device with one where, keeping them out of host reads.

func init() {
	def([]string{"axis"}, gather, "Gather")
	def([]string{"axis"}, func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		return one(call("take_along_axis", core.Attrs{"axis": c.axis(c.attrInt("axis", 0), x.Rank())}, x, c.in(1)))
	}, "GatherElements")
	def([]string{"batch_dims"}, gatherND, "GatherND")
	def([]string{"axis", "reduction"}, scatterElements, "ScatterElements")
	def([]string{"reduction"}, scatterND, "ScatterND")
	def(nil, func(c *ctx) ([]*core.Tensor, error) {
		nz := call("nonzero", nil, c.in(0))
		return one(call("contiguous", nil, call("permute", core.Attrs{"dims": []int{1, 0}}, nz)))
	}, "NonZero")
	def([]string{"axis"}, compress, "Compress")
	def([]string{"axis"}, oneHot, "OneHot")
	def([]string{"upper"}, trilu, "Trilu")
	def([]string{"dtype", "k"}, eyeLike, "EyeLike")
}

// wrapIndex adds dim to negative indices.
func wrapIndex(idx *core.Tensor, dim int) *core.Tensor {
	neg := call("lt", nil, idx, like(idx, 0))
	return call("where", nil, neg, call("add", nil, idx, like(idx, float64(dim))), idx)
}

func gather(c *ctx) ([]*core.Tensor, error) {
	x, idx := c.in(0), c.in(1)
	ax := c.axis(c.attrInt("axis", 0), x.Rank())
	if c.err != nil || idx.Err() != nil {
		return nil, idx.Err()
	}
	s := x.Shape()
	flat := wrapIndex(idx, s[ax]).Reshape([]int{idx.Numel()})
	y := call("index_select", core.Attrs{"axis": ax}, x, flat)
	out := append(append(append([]int{}, s[:ax]...), idx.Shape()...), s[ax+1:]...)
	return one(y.Reshape(out))
}

// gatherND turns each index tuple into one row number of the data viewed
// as [batch, rows, rest] and takes those rows.
func gatherND(c *ctx) ([]*core.Tensor, error) {
	x, idx := c.in(0), c.in(1)
	b := int(c.attrInt("batch_dims", 0))
	xs, is := x.Shape(), idx.Shape()
	if len(is) == 0 || b < 0 || b >= len(is) || b > len(xs) {
		c.fail("indices shape %v, data shape %v and batch_dims %d do not fit", is, xs, b)
		return nil, nil
	}
	k := is[len(is)-1]
	if b+k > len(xs) {
		c.fail("index tuples of %d values exceed data rank %d after %d batch dims", k, len(xs), b)
		return nil, nil
	}
	batch := core.Shape(xs[:b]).Numel()
	rows := core.Shape(xs[b : b+k]).Numel()
	rest := core.Shape(xs[b+k:]).Numel()
	m := core.Shape(is[b : len(is)-1]).Numel()
	lin := rowNumbers(idx.Reshape([]int{batch, m, k}), xs[b:b+k])
	data := x.Reshape([]int{batch, rows, rest})
	pick := call("expand", core.Attrs{"shape": []int{batch, m, rest}}, lin.Reshape([]int{batch, m, 1}))
	y := call("take_along_axis", core.Attrs{"axis": 1}, data, pick)
	out := append(append([]int{}, is[:len(is)-1]...), xs[b+k:]...)
	return one(y.Reshape(out))
}

// rowNumbers maps index tuples (last axis of idx, each wrapped when
// negative) to row-major positions in dims.
func rowNumbers(idx *core.Tensor, dims []int) *core.Tensor {
	k := len(dims)
	strides := make([]int64, k)
	acc := int64(1)
	for j := k - 1; j >= 0; j-- {
		strides[j] = acc
		acc *= int64(dims[j])
	}
	sizes := make([]int64, k)
	for j, d := range dims {
		sizes[j] = int64(d)
	}
	dev := idx.Device()
	i64 := idx.Cast(core.I64)
	neg := call("lt", nil, i64, like(i64, 0))
	wrapped := call("where", nil, neg, call("add", nil, i64, core.FromSlice(sizes, core.Shape{k}, dev)), i64)
	scaled := call("mul", nil, wrapped, core.FromSlice(strides, core.Shape{k}, dev))
	return call("sum", core.Attrs{"axes": []int{-1}}, scaled)
}

func scatterElements(c *ctx) ([]*core.Tensor, error) {
	x, idx, upd := c.in(0), c.in(1), c.in(2)
	ax := c.axis(c.attrInt("axis", 0), x.Rank())
	if c.err != nil {
		return nil, nil
	}
	idx = wrapIndex(idx, x.Shape()[ax])
	return one(scatterAlong(c, x, idx, upd, ax))
}

func scatterAlong(c *ctx, x, idx, upd *core.Tensor, ax int) *core.Tensor {
	switch red := c.attrString("reduction", "none"); red {
	case "none":
		return call("scatter", core.Attrs{"axis": ax}, x, idx, upd)
	case "add":
		return call("scatter_add", core.Attrs{"axis": ax}, x, idx, upd)
	case "max":
		return call("scatter_reduce", core.Attrs{"axis": ax, "reduce": "amax"}, x, idx, upd)
	case "min":
		return call("scatter_reduce", core.Attrs{"axis": ax, "reduce": "amin"}, x, idx, upd)
	case "mul":
		return scatterMul(c, x, idx, upd, ax)
	default:
		c.fail("reduction %q is not supported (none, add, mul, max, min)", red)
		return x
	}
}

// scatterMul multiplies x by the updates at the indices along ax (the
// registry's scatter_reduce has no product): each update sits in a
// [.., dim, n, ..] grid of factors, 1 where its index is not the row,
// whose product over the updates is the factor of each row; the factors,
// padded with ones to x's shape, multiply x. It holds x's dim times the
// updates' count along ax per other position, which a scatter of a few
// updates keeps small.
func scatterMul(c *ctx, x, idx, upd *core.Tensor, ax int) *core.Tensor {
	xs, is := x.Shape(), idx.Shape()
	for d := range is {
		if len(is) != len(xs) || d != ax && is[d] > xs[d] || !slices.Equal(is, upd.Shape()) {
			c.fail("indices shape %v, updates shape %v and data shape %v: want indices and updates of one shape, within the data's outside axis %d", is, upd.Shape(), xs, ax)
			return x
		}
	}
	rows := make([]int, len(is)+1)
	for i := range rows {
		rows[i] = 1
	}
	rows[ax] = xs[ax]
	pos := call("arange", core.Attrs{"stop": float64(xs[ax]), "dtype": core.I64, "device": x.Device().String()}).Reshape(rows)
	hit := call("eq", nil, call("unsqueeze", core.Attrs{"axis": ax}, idx.Cast(core.I64)), pos)
	factors := call("where", nil, hit, call("unsqueeze", core.Attrs{"axis": ax}, upd), like(upd, 1))
	factors = call("prod", core.Attrs{"axes": []int{ax + 1}}, factors).Cast(x.DType())
	pads := make([]int, 0, 2*len(xs))
	for d := len(xs) - 1; d >= 0; d-- {
		pads = append(pads, 0, xs[d]-factors.Shape()[d])
	}
	return call("mul", nil, x, call("pad", core.Attrs{"pads": pads, "value": 1.0}, factors))
}

// scatterND writes whole rows of the data viewed as [rows, rest].
func scatterND(c *ctx) ([]*core.Tensor, error) {
	x, idx, upd := c.in(0), c.in(1), c.in(2)
	xs, is := x.Shape(), idx.Shape()
	if len(is) == 0 || is[len(is)-1] > len(xs) {
		c.fail("indices shape %v does not fit data shape %v", is, xs)
		return nil, nil
	}
	k := is[len(is)-1]
	rows, rest := core.Shape(xs[:k]).Numel(), core.Shape(xs[k:]).Numel()
	m := core.Shape(is[:len(is)-1]).Numel()
	lin := rowNumbers(idx.Reshape([]int{m, k}), xs[:k])
	pick := call("expand", core.Attrs{"shape": []int{m, rest}}, lin.Reshape([]int{m, 1}))
	y := scatterAlong(c, x.Reshape([]int{rows, rest}), pick, upd.Reshape([]int{m, rest}), 0)
	return one(y.Reshape(xs))
}

func compress(c *ctx) ([]*core.Tensor, error) {
	x, cond := c.in(0), c.in(1)
	if !c.has("axis") {
		x = x.Reshape([]int{x.Numel()})
	}
	ax := c.axis(c.attrInt("axis", 0), x.Rank())
	if c.err != nil {
		return nil, nil
	}
	if n := x.Shape()[ax]; cond.Numel() > n {
		cond = call("slice", core.Attrs{"stop": n}, cond)
	} else if cond.Numel() < n {
		x = call("slice", core.Attrs{"axis": ax, "stop": cond.Numel()}, x)
	}
	pos := call("nonzero", nil, cond)
	pos = pos.Reshape([]int{pos.Numel()})
	return one(call("index_select", core.Attrs{"axis": ax}, x, pos))
}

// oneHot compares each (wrapped) index with 0..depth-1 along the new axis
// and picks the off or on value.
func oneHot(c *ctx) ([]*core.Tensor, error) {
	idx, vals := c.in(0), c.in(2)
	depth, _ := c.scalar(1)
	r := idx.Rank() + 1
	ax := c.axis(c.attrInt("axis", -1), r)
	if c.err != nil {
		return nil, nil
	}
	d := int(depth)
	classes := call("arange", core.Attrs{"stop": float64(d), "dtype": core.I64, "device": idx.Device().String()})
	shape := make([]int, r)
	for i := range shape {
		shape[i] = 1
	}
	shape[ax] = d
	wrapped := wrapIndex(idx.Cast(core.I64), d)
	hit := call("eq", nil, unsqueezeAt(wrapped, ax), classes.Reshape(shape))
	off := call("slice", core.Attrs{"stop": 1}, vals).Reshape([]int{})
	on := call("slice", core.Attrs{"start": 1, "stop": 2}, vals).Reshape([]int{})
	return one(call("where", nil, hit, on, off))
}

func unsqueezeAt(x *core.Tensor, ax int) *core.Tensor {
	return call("unsqueeze", core.Attrs{"axis": ax}, x)
}

// trilu keeps the triangle on the host-built mask of the last two dims.
func trilu(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	k, _ := c.scalar(1)
	s := x.Shape()
	if len(s) < 2 {
		c.fail("input shape %v has rank below 2", s)
		return nil, nil
	}
	rows, cols := s[len(s)-2], s[len(s)-1]
	upper := c.attrInt("upper", 1) != 0
	mask := make([]bool, rows*cols)
	for i := range rows {
		for j := range cols {
			if upper {
				mask[i*cols+j] = int64(j-i) >= int64(k)
			} else {
				mask[i*cols+j] = int64(j-i) <= int64(k)
			}
		}
	}
	m := core.FromSlice(mask, core.Shape{rows, cols}, x.Device())
	return one(call("where", nil, m, x, like(x, 0)))
}

func eyeLike(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	s := x.Shape()
	if len(s) != 2 {
		c.fail("input shape %v is not 2-D", s)
		return nil, nil
	}
	dt := x.DType()
	if c.has("dtype") {
		var err error
		if dt, err = dtypeOf(int32(c.attrInt("dtype", 0))); err != nil {
			return nil, err
		}
	}
	k := int(c.attrInt("k", 0))
	vals := make([]float64, s[0]*s[1])
	for i := range s[0] {
		if j := i + k; j >= 0 && j < s[1] {
			vals[i*s[1]+j] = 1
		}
	}
	return one(core.FromFloat64s(dt, s, vals, x.Device()))
}
