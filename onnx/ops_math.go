package onnx

import (
	"math"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Linear algebra, reductions, scans, sorting and the softmax family.

var reduceAttrs = []string{"axes", "keepdims", "noop_with_empty_axes"}

func init() {
	def(nil, binaryOp("matmul"), "MatMul")
	def([]string{"alpha", "beta", "transA", "transB"}, gemm, "Gemm")
	def([]string{"equation"}, func(c *ctx) ([]*core.Tensor, error) {
		eq := strings.ReplaceAll(c.attrString("equation", ""), " ", "")
		return one(call("einsum", core.Attrs{"equation": eq}, c.ins...))
	}, "Einsum")
	square := func(x *core.Tensor) *core.Tensor { return call("mul", nil, x, x) }
	for name, r := range map[string]reducer{
		"ReduceSum":       {op: "sum"},
		"ReduceMean":      {op: "mean"},
		"ReduceMax":       {op: "max"},
		"ReduceMin":       {op: "min"},
		"ReduceProd":      {op: "prod"},
		"ReduceLogSumExp": {op: "logsumexp"},
		"ReduceL1":        {op: "sum", pre: func(x *core.Tensor) *core.Tensor { return call("abs", nil, x) }},
		"ReduceL2": {op: "sum", pre: square,
			post: func(x *core.Tensor) *core.Tensor { return call("sqrt", nil, x) }},
		"ReduceSumSquare": {op: "sum", pre: square},
		"ReduceLogSum":    {op: "sum", post: func(x *core.Tensor) *core.Tensor { return call("log", nil, x) }},
	} {
		def(reduceAttrs, r.run, name)
	}
	def([]string{"axis", "keepdims", "select_last_index"}, argReduce("argmax"), "ArgMax")
	def([]string{"axis", "keepdims", "select_last_index"}, argReduce("argmin"), "ArgMin")
	def([]string{"axis", "largest", "sorted"}, topk, "TopK")
	def([]string{"axis"}, axisOp("softmax"), "Softmax")
	def([]string{"axis"}, axisOp("log_softmax"), "LogSoftmax")
	def([]string{"axis"}, hardmax, "Hardmax")
	def([]string{"exclusive", "reverse"}, scan("cumsum", 0), "CumSum")
	def([]string{"exclusive", "reverse"}, scan("cumprod", 1), "CumProd")
}

func gemm(c *ctx) ([]*core.Tensor, error) {
	a, b := c.in(0), c.in(1)
	if c.attrInt("transA", 0) != 0 {
		a = call("transpose", nil, a)
	}
	if c.attrInt("transB", 0) != 0 {
		b = call("transpose", nil, b)
	}
	y := call("matmul", nil, a, b)
	if alpha := c.attrFloat("alpha", 1); alpha != 1 {
		y = call("mul", nil, y, like(y, alpha))
	}
	if bias := c.opt(2); bias != nil {
		if beta := c.attrFloat("beta", 1); beta != 1 {
			bias = call("mul", nil, bias, like(bias, beta))
		}
		y = call("add", nil, y, bias)
	}
	return one(y)
}

// emptyMaxMin is ReduceMax or ReduceMin over axes that hold no values,
// which ONNX defines as the reduction's identity (the registry refuses
// it): -inf, or the dtype's least value, for max and +inf, or its
// greatest, for min (false and true for bool). nil when it does not apply.
func emptyMaxMin(c *ctx, op string, x *core.Tensor, axes []int, keep bool) *core.Tensor {
	if (op != "max" && op != "min") || c.err != nil {
		return nil
	}
	s := x.Shape()
	empty := false
	for _, ax := range axes {
		empty = empty || s[ax] == 0
	}
	if !empty {
		return nil
	}
	var out []int
	for i, d := range s {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	switch dt := x.DType(); {
	case dt == core.Bool:
		lo, hi = 0, 1
	case !dt.IsFloat():
		lo, hi = intRange(dt)
	}
	v := lo
	if op == "min" {
		v = hi
	}
	return call("full", core.Attrs{"shape": out, "dtype": x.DType(), "value": v, "device": c.m.dev.String()})
}

// reducer is a Reduce* operator: an optional elementwise step before and
// after one registry reduction.
type reducer struct {
	op        string
	pre, post func(*core.Tensor) *core.Tensor
}

// run resolves the axes (an input since opset 18, and for ReduceSum since
// 13; an attribute before), with noop_with_empty_axes deciding what no
// axes means.
func (r reducer) run(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	list, ok := c.ints(1)
	if !ok {
		list, _ = c.attrInts("axes")
	}
	keep := c.attrInt("keepdims", 1) != 0
	if len(list) == 0 && c.attrInt("noop_with_empty_axes", 0) != 0 {
		return one(x)
	}
	a := core.Attrs{"keepdim": keep}
	axes := make([]int, x.Rank())
	for i := range axes {
		axes[i] = i
	}
	if len(list) > 0 {
		axes = c.axes(list, x.Rank())
		a["axes"] = axes
	}
	if y := emptyMaxMin(c, r.op, x, axes, keep); y != nil {
		return one(y)
	}
	y := x
	if r.pre != nil {
		y = r.pre(y)
	}
	y = call(r.op, a, y)
	if r.post != nil {
		y = r.post(y)
	}
	if y.Err() == nil && y.DType() != x.DType() {
		y = y.Cast(x.DType()) // sum and prod widen small integers; ONNX keeps the type
	}
	return one(y)
}

// argReduce finds the last extreme, when asked, as the first one of the
// flipped axis.
func argReduce(op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		ax := c.axis(c.attrInt("axis", 0), x.Rank())
		a := core.Attrs{"axis": ax, "keepdim": c.attrInt("keepdims", 1) != 0}
		if c.err != nil {
			return nil, nil
		}
		if c.attrInt("select_last_index", 0) == 0 {
			return one(call(op, a, x))
		}
		i := call(op, a, call("flip", core.Attrs{"axes": []int{ax}}, x))
		return one(call("sub", nil, like(i, float64(x.Shape()[ax]-1)), i))
	}
}

func topk(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	k, _ := c.ints(1)
	if len(k) != 1 {
		c.fail("K has %d values, want 1", len(k))
		return nil, nil
	}
	ax := c.axis(c.attrInt("axis", -1), x.Rank())
	return core.Call("topk", []*core.Tensor{x}, core.Attrs{"k": int(k[0]), "axis": ax,
		"largest": c.attrInt("largest", 1) != 0, "sorted": c.attrInt("sorted", 1) != 0})
}

func axisOp(op string) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		return one(call(op, core.Attrs{"axis": c.axis(c.attrInt("axis", -1), x.Rank())}, x))
	}
}

func hardmax(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	ax := c.axis(c.attrInt("axis", -1), x.Rank())
	if c.err != nil {
		return nil, nil
	}
	best := call("argmax", core.Attrs{"axis": ax, "keepdim": true}, x)
	shape := make([]int, x.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[ax] = x.Shape()[ax]
	pos := call("arange", core.Attrs{"stop": float64(shape[ax]), "dtype": core.I64, "device": x.Device().String()})
	return one(call("eq", nil, best, pos.Reshape(shape)).Cast(x.DType()))
}

// scan is CumSum or CumProd: reverse reads the axis flipped, exclusive
// shifts the input one step along it (a pad of one identity element
// before and a crop of one after) so each output leaves out its own
// element exactly.
func scan(op string, identity float64) func(c *ctx) ([]*core.Tensor, error) {
	return func(c *ctx) ([]*core.Tensor, error) {
		x := c.in(0)
		axv, _ := c.ints(1)
		if len(axv) != 1 {
			c.fail("axis has %d values, want 1", len(axv))
			return nil, nil
		}
		ax := c.axis(axv[0], x.Rank())
		if c.err != nil {
			return nil, nil
		}
		reverse := c.attrInt("reverse", 0) != 0
		y := x
		if reverse {
			y = call("flip", core.Attrs{"axes": []int{ax}}, y)
		}
		if c.attrInt("exclusive", 0) != 0 {
			pads := make([]int, 0, 2*(x.Rank()-ax))
			for a := x.Rank() - 1; a > ax; a-- {
				pads = append(pads, 0, 0)
			}
			y = call("pad", core.Attrs{"pads": append(pads, 1, -1), "value": identity}, y)
		}
		y = call(op, core.Attrs{"axis": ax}, y)
		if reverse {
			y = call("flip", core.Attrs{"axes": []int{ax}}, y)
		}
		if y.Err() == nil && y.DType() != x.DType() {
			y = y.Cast(x.DType())
		}
		return one(y)
	}
}
