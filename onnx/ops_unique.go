package onnx

import (
	"cmp"
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Unique, and the remaining operators whose work has no registry op:
// BitCast (the registry converts values, never reinterprets bits). Both
// run on the host, Unique because its output's length depends on the
// values; they refuse to be traced, since a traced graph would hold the
// result for the example inputs only. Scatter (opset 9's name for
// ScatterElements), TensorScatter and SwiGLU are registry ops.

func init() {
	def([]string{"axis", "sorted"}, unique, "Unique")
	def([]string{"to"}, bitCast, "BitCast")
	def([]string{"axis"}, scatterElements, "Scatter")
	def([]string{"axis", "mode"}, tensorScatter, "TensorScatter")
	def([]string{"alpha"}, func(c *ctx) ([]*core.Tensor, error) {
		a, b := c.in(0), c.in(1)
		if c.err == nil && !slices.Equal(a.Shape(), b.Shape()) {
			c.fail("A has shape %v and B %v: SwiGLU does not broadcast", a.Shape(), b.Shape())
			return nil, nil
		}
		gate := call("sigmoid", nil, call("mul", nil, a, like(a, c.attrFloat("alpha", 1))))
		return one(call("mul", nil, call("mul", nil, a, gate), b))
	}, "SwiGLU")
}

// onHost fails the node while a trace is being recorded: what it computes
// on the host would be a constant of the traced graph.
func onHost(c *ctx, why string) bool {
	if core.Tracing() {
		c.fail("%s on the host, so it cannot be traced (run the model with Call or Run)", why)
		return false
	}
	return true
}

// unique finds the distinct slices along axis (the distinct elements of
// the flattened input without one), sorted ascending or in the order
// they first occur; Y is a gather of the input at the first occurrences.
func unique(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if c.err != nil || !onHost(c, "Unique finds its values") {
		return nil, nil
	}
	ax := 0
	if c.has("axis") {
		ax = c.axis(c.attrInt("axis", 0), x.Rank())
	} else {
		x = x.Reshape([]int{-1})
	}
	if c.err != nil || x.Err() != nil {
		return nil, x.Err()
	}
	// Each slice along ax as a row of numbers: ax first, the rest flat.
	rows := x
	if x.Rank() > 1 {
		rows = call("contiguous", nil, call("permute", core.Attrs{"dims": moveFirst(x.Rank(), ax)}, x))
	}
	n := x.Shape()[ax]
	vals, err := rows.Float64s()
	if err != nil {
		return nil, err
	}
	width := 0
	if n > 0 {
		width = len(vals) / n
	}
	row := func(i int) []float64 { return vals[i*width : (i+1)*width] }
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if c.attrInt("sorted", 1) != 0 {
		slices.SortStableFunc(order, func(i, j int) int { return slices.CompareFunc(row(i), row(j), cmp.Compare[float64]) })
	}
	var first, counts []int64
	inverse := make([]int64, n)
	seen := map[string]int{}
	for _, i := range order {
		key := rowKey(row(i))
		if k, ok := seen[key]; ok {
			counts[k]++
			first[k] = min(first[k], int64(i))
			inverse[i] = int64(k)
			continue
		}
		seen[key] = len(first)
		inverse[i] = int64(len(first))
		first = append(first, int64(i))
		counts = append(counts, 1)
	}
	dev := x.Device()
	idx := core.FromSlice(first, core.Shape{len(first)}, dev)
	y := call("index_select", core.Attrs{"axis": ax}, x, idx)
	return []*core.Tensor{y, idx, core.FromSlice(inverse, core.Shape{n}, dev),
		core.FromSlice(counts, core.Shape{len(counts)}, dev)}, y.Err()
}

// moveFirst is the permutation that brings axis ax to the front.
func moveFirst(rank, ax int) []int {
	dims := []int{ax}
	for d := range rank {
		if d != ax {
			dims = append(dims, d)
		}
	}
	return dims
}

// rowKey identifies a row by its values' bits (-0 and 0 as one, as
// equality has them).
func rowKey(r []float64) string {
	b := make([]byte, 0, 8*len(r))
	for _, v := range r {
		if v == 0 {
			v = 0
		}
		u := math.Float64bits(v)
		for s := 0; s < 64; s += 8 {
			b = append(b, byte(u>>s))
		}
	}
	return string(b)
}

// bitCast reinterprets the input's bytes as another type of the same
// width; the bytes go through the host, where Go can view them so.
func bitCast(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	to := elemType(c.attrInt("to", 0))
	if c.err != nil || !onHost(c, "BitCast reinterprets bytes") {
		return nil, nil
	}
	from := c.inType(0)
	// UINT16 and UINT64 are held widened (i32, i64) with their values:
	// their bits are those of i16 and i64, to which they convert exactly.
	wide := map[elemType]core.DType{pb.TensorProto_UINT16: core.I16, pb.TensorProto_UINT64: core.I64}
	if w, ok := wide[from]; ok {
		x = x.Cast(w)
	} else if narrowOf(from) != nil {
		c.fail("BitCast from %s is not supported (a type webtensor holds widened)", typeName(from))
	}
	dt, held := wide[to]
	if !held {
		var err error
		if dt, err = dtypeOf(int32(to)); err != nil || narrowOf(to) != nil {
			c.fail("BitCast to %s is not supported (a type webtensor holds widened, or none)", typeName(to))
		}
	}
	if c.err != nil {
		return nil, nil
	}
	if dt.Size() != x.DType().Size() {
		c.fail("BitCast from %s (%d bits) to %s (%d bits): the widths differ", typeName(from), 8*x.DType().Size(), typeName(to), 8*dt.Size())
		return nil, nil
	}
	raw, err := x.Bytes()
	if err != nil {
		return nil, err
	}
	if dt == core.Bool {
		for i, b := range raw { // a bool byte is 0 or 1
			raw[i] = min(b, 1)
		}
	}
	y, err := wrapBytes(dt, x.Shape(), raw, true, x.Device())
	if held {
		c.setType(0, to)
	}
	if err != nil || to != pb.TensorProto_UINT16 {
		return []*core.Tensor{y}, err
	}
	return one(call("bitwise_and", nil, y.Cast(core.I32), core.Scalar(0xFFFF, core.I32, y.Device())))
}

// tensorScatter writes update into a copy of the cache along axis at
// write_indices[b] + j for batch b (modulo the cache's length when mode
// is circular): one scatter, the positions computed on the device.
func tensorScatter(c *ctx) ([]*core.Tensor, error) {
	cache, upd, at := c.in(0), c.in(1), c.opt(2)
	ax := c.axis(c.attrInt("axis", -2), cache.Rank())
	mode := c.attrString("mode", "linear")
	if mode != "linear" && mode != "circular" {
		c.fail("mode %q is not linear or circular", mode)
	}
	cs, us := cache.Shape(), upd.Shape()
	if c.err == nil && ax == 0 {
		c.fail("axis 0 is the batch axis; TensorScatter writes along a later one")
	}
	if c.err == nil && len(cs) == len(us) {
		for i := range cs {
			if (i != ax && cs[i] != us[i]) || (i == ax && us[i] > cs[i]) {
				c.fail("past_cache has shape %v and update %v: they must agree except along axis %d, where the update may be shorter", cs, us, ax)
				break
			}
		}
	} else if c.err == nil {
		c.fail("past_cache has shape %v and update %v: the ranks differ", cs, us)
	}
	if c.err != nil {
		return nil, nil
	}
	dev := cache.Device()
	shape := make([]int, len(us))
	for i := range shape {
		shape[i] = 1
	}
	shape[ax] = us[ax]
	pos := call("arange", core.Attrs{"stop": float64(us[ax]), "dtype": core.I64, "device": dev.String()}).Reshape(shape)
	if at != nil {
		start := make([]int, len(us))
		for i := range start {
			start[i] = 1
		}
		start[0] = us[0]
		pos = call("add", nil, pos, at.Cast(core.I64).Reshape(start))
	}
	if mode == "circular" {
		pos = call("remainder", nil, pos, like(pos, float64(cs[ax])))
	}
	pos = call("contiguous", nil, call("expand", core.Attrs{"shape": us}, pos))
	return one(call("scatter", core.Attrs{"axis": ax}, cache, pos, upd))
}
