package cpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// Hand-computed checks of the shape-copy, indexing and sorting ops: values,
// a few gradients and the errors bad arguments must give.

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

func leaf(vals []float64, shape ...int) *core.Tensor {
	return core.FromSlice(vals, core.Shape(shape)).SetRequiresGrad(true)
}

// gradOf returns d sum(f(x) * w)/dx where w = 1, 2, 3, ... over f's output.
func gradOf(t *testing.T, x *core.Tensor, f func(*core.Tensor) *core.Tensor) []float64 {
	t.Helper()
	y := f(x)
	require.NoError(t, y.Err())
	w := core.FromSlice(seq(y.Numel()), y.Shape())
	w = core.Call1("add", nil, w, core.Scalar(1, core.F64))
	loss := core.Call1("sum", nil, core.Call1("mul", nil, y.Cast(core.F64), w))
	require.NoError(t, loss.Backward())
	require.NotNil(t, x.Grad())
	return f64s(t, x.Grad())
}

func TestConcatStackSplitChunk(t *testing.T) {
	a := core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{2, 2})
	b := core.FromSlice([]float32{5, 6}, core.Shape{2, 1})
	assert.Equal(t, []float64{1, 2, 5, 3, 4, 6}, f64s(t, core.Call1("concat", core.Attrs{"axis": -1}, a, b)))
	c := core.Call1("concat", nil, a, core.FromSlice([]int32{7, 8}, core.Shape{1, 2}))
	assert.Equal(t, core.F32, c.DType(), "concat promotes i32 to f32")
	assert.Equal(t, []float64{1, 2, 3, 4, 7, 8}, f64s(t, c))

	s := core.Call1("stack", core.Attrs{"axis": 1}, a, core.FromSlice([]float32{9, 8, 7, 6}, core.Shape{2, 2}))
	assert.Equal(t, core.Shape{2, 2, 2}, s.Shape())
	assert.Equal(t, []float64{1, 2, 9, 8, 3, 4, 7, 6}, f64s(t, s))

	x := core.FromSlice(seq(10), core.Shape{2, 5})
	parts := callN(t, "split", core.Attrs{"sections": 3, "axis": 1}, x)
	require.Len(t, parts, 3)
	assert.Equal(t, []float64{0, 1, 5, 6}, f64s(t, parts[0]))
	assert.Equal(t, []float64{2, 3, 7, 8}, f64s(t, parts[1]))
	assert.Equal(t, []float64{4, 9}, f64s(t, parts[2]))
	parts = callN(t, "split", core.Attrs{"sizes": []int{4, 1}, "axis": -1}, x)
	assert.Equal(t, core.Shape{2, 1}, parts[1].Shape())

	chunks := callN(t, "chunk", core.Attrs{"chunks": 4}, core.FromSlice(seq(5), core.Shape{5}))
	require.Len(t, chunks, 3, "torch.chunk gives ceil-sized pieces, here fewer than asked")
	assert.Equal(t, []float64{4}, f64s(t, chunks[2]))

	xs := leaf(seq(6), 3, 2)
	g := gradOf(t, xs, func(x *core.Tensor) *core.Tensor {
		p := callN(t, "split", core.Attrs{"sizes": []int{1, 2}}, x)
		return p[1]
	})
	assert.Equal(t, []float64{0, 0, 1, 2, 3, 4}, g, "the unused piece gets zeros")
}

func TestSliceIsAViewWithGradient(t *testing.T) {
	x := core.FromSlice(seq(12), core.Shape{3, 4})
	v := core.Call1("slice", core.Attrs{"axis": 1, "start": -3, "step": 2}, x)
	require.NoError(t, v.Err())
	assert.Same(t, x.Storage(), v.Storage())
	assert.Equal(t, core.Shape{3, 2}, v.Shape())
	assert.Equal(t, []float64{1, 3, 5, 7, 9, 11}, f64s(t, v))
	empty := core.Call1("slice", core.Attrs{"start": 5, "stop": 1}, x)
	assert.Equal(t, core.Shape{0, 4}, empty.Shape())
	clamped := core.Call1("slice", core.Attrs{"start": -99, "stop": 99, "step": 2}, x)
	assert.Equal(t, []float64{0, 1, 2, 3, 8, 9, 10, 11}, f64s(t, clamped))

	xl := leaf(seq(5), 5)
	g := gradOf(t, xl, func(x *core.Tensor) *core.Tensor {
		return core.Call1("slice", core.Attrs{"start": 1, "stop": -1, "step": 2}, x)
	})
	assert.Equal(t, []float64{0, 1, 0, 2, 0}, g)
}

func TestPadModes(t *testing.T) {
	x := core.FromSlice([]float64{1, 2, 3}, core.Shape{1, 3})
	pad := func(a core.Attrs) []float64 { return f64s(t, core.Call1("pad", a, x)) }
	assert.Equal(t, []float64{9, 9, 1, 2, 3, 9}, pad(core.Attrs{"pads": []int{2, 1}, "value": 9}))
	assert.Equal(t, []float64{3, 2, 1, 2, 3, 2, 1}, pad(core.Attrs{"pads": []int{2, 2}, "mode": "reflect"}))
	assert.Equal(t, []float64{1, 1, 2, 3, 3, 3}, pad(core.Attrs{"pads": []int{1, 2}, "mode": "replicate"}))
	assert.Equal(t, []float64{0, 0, 0, 2, 3, 0}, pad(core.Attrs{"pads": []int{-1, 1, 1, 0}}))
	ints := core.Call1("pad", core.Attrs{"pads": []int{1, 0}, "value": -2.7}, core.FromSlice([]int32{5}, core.Shape{1}))
	assert.Equal(t, []int64{-2, 5}, i64s(t, ints), "the fill value converts like a cast")

	xl := leaf([]float64{1, 2, 3}, 3)
	g := gradOf(t, xl, func(x *core.Tensor) *core.Tensor {
		return core.Call1("pad", core.Attrs{"pads": []int{2, 1}, "mode": "reflect"}, x)
	})
	// out = [3 2 1 2 3 2] with weights 1..6: x0 gets 3, x1 gets 2+4+6, x2 gets 1+5.
	assert.Equal(t, []float64{3, 12, 6}, g)
	xl = leaf([]float64{1, 2, 3}, 3)
	g = gradOf(t, xl, func(x *core.Tensor) *core.Tensor {
		return core.Call1("pad", core.Attrs{"pads": []int{-1, 2}}, x)
	})
	assert.Equal(t, []float64{0, 1, 2}, g)
}

func TestFlipRollTileRepeat(t *testing.T) {
	x := core.FromSlice(seq(6), core.Shape{2, 3})
	assert.Equal(t, []float64{5, 4, 3, 2, 1, 0}, f64s(t, core.Call1("flip", nil, x)))
	assert.Equal(t, []float64{2, 1, 0, 5, 4, 3}, f64s(t, core.Call1("flip", core.Attrs{"axes": []int{-1}}, x)))
	assert.Equal(t, []float64{4, 5, 0, 1, 2, 3}, f64s(t, core.Call1("roll", core.Attrs{"shifts": []int{2}}, x)))
	assert.Equal(t, []float64{5, 3, 4, 2, 0, 1}, f64s(t, core.Call1("roll", core.Attrs{"shifts": []int{1, 4}, "axes": []int{0, 1}}, x)))
	tiled := core.Call1("tile", core.Attrs{"reps": []int{2, 1, 2}}, core.FromSlice([]float64{1, 2}, core.Shape{2}))
	assert.Equal(t, core.Shape{2, 1, 4}, tiled.Shape())
	assert.Equal(t, []float64{1, 2, 1, 2, 1, 2, 1, 2}, f64s(t, tiled))
	assert.Equal(t, []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, f64s(t, core.Call1("repeat_interleave", core.Attrs{"repeats": 2}, x)))
	assert.Equal(t, []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5},
		f64s(t, core.Call1("repeat_interleave", core.Attrs{"repeats": 2, "axis": 0}, x)))
	big := core.FromSlice([]int64{math.MaxInt64, -7}, core.Shape{2})
	assert.Equal(t, []int64{-7, math.MaxInt64}, i64s(t, core.Call1("flip", nil, big)), "copies are exact for i64")

	g := gradOf(t, leaf([]float64{1, 2}, 2), func(x *core.Tensor) *core.Tensor {
		return core.Call1("tile", core.Attrs{"reps": []int{3}}, x)
	})
	assert.Equal(t, []float64{1 + 3 + 5, 2 + 4 + 6}, g)
	g = gradOf(t, leaf([]float64{1, 2}, 2), func(x *core.Tensor) *core.Tensor {
		return core.Call1("repeat_interleave", core.Attrs{"repeats": 3, "axis": 0}, x)
	})
	assert.Equal(t, []float64{1 + 2 + 3, 4 + 5 + 6}, g)
	g = gradOf(t, leaf(seq(4), 4), func(x *core.Tensor) *core.Tensor {
		return core.Call1("roll", core.Attrs{"shifts": []int{1}}, x)
	})
	assert.Equal(t, []float64{2, 3, 4, 1}, g)
}

func TestGatherScatter(t *testing.T) {
	x := core.FromSlice([]float64{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	idx := core.FromSlice([]int64{2, 0, 1, 1}, core.Shape{2, 2})
	assert.Equal(t, []float64{3, 1, 5, 5}, f64s(t, core.Call1("gather", core.Attrs{"axis": 1}, x, idx)))

	src := core.FromSlice([]float64{10, 20, 30, 40, 50, 60}, core.Shape{2, 3})
	sc := core.Call1("scatter", core.Attrs{"axis": 1}, x, core.FromSlice([]int32{2, 0, 1, 0}, core.Shape{2, 2}), src)
	assert.Equal(t, []float64{20, 2, 10, 50, 40, 6}, f64s(t, sc))
	sa := core.Call1("scatter_add", core.Attrs{"axis": 0}, core.FromSlice(make([]float64, 3), core.Shape{1, 3}),
		core.FromSlice([]int64{0, 0, 0, 0, 0, 0}, core.Shape{2, 3}), src)
	assert.Equal(t, []float64{50, 70, 90}, f64s(t, sa))

	g := gradOf(t, leaf([]float64{1, 2, 3}, 3), func(x *core.Tensor) *core.Tensor {
		return core.Call1("gather", nil, x, core.FromSlice([]int64{2, 2, 0}, core.Shape{3}))
	})
	assert.Equal(t, []float64{3, 0, 1 + 2}, g, "repeated indices accumulate")

	xl, sl := leaf([]float64{1, 2, 3}, 3), leaf([]float64{7, 8, 9}, 3)
	y := core.Call1("scatter", nil, xl, core.FromSlice([]int64{2, 0}, core.Shape{2}), sl)
	require.NoError(t, core.Call1("sum", nil, core.Call1("mul", nil, y, core.FromSlice([]float64{1, 2, 3}, core.Shape{3}))).Backward())
	assert.Equal(t, []float64{0, 2, 0}, f64s(t, xl.Grad()), "overwritten positions get no gradient")
	assert.Equal(t, []float64{3, 1, 0}, f64s(t, sl.Grad()), "src outside the index region gets none")
}

func TestScatterReduce(t *testing.T) {
	idx := core.FromSlice([]int64{0, 0, 1}, core.Shape{3})
	sr := func(x, src *core.Tensor, reduce string, include bool) *core.Tensor {
		return core.Call1("scatter_reduce", core.Attrs{"reduce": reduce, "include_self": include}, x, idx, src)
	}
	ix := core.FromSlice([]int32{-3, 5, 7}, core.Shape{3})
	assert.Equal(t, []int64{-1, 3, 7}, i64s(t, sr(ix, core.FromSlice([]int32{1, 1, 2}, core.Shape{3}), "mean", true)), "integer mean rounds down")
	fx := core.FromSlice([]float64{1, 5, 7}, core.Shape{3})
	src := core.FromSlice([]float64{3, 4, 2}, core.Shape{3})
	assert.Equal(t, []float64{4, 5, 7}, f64s(t, sr(fx, src, "amax", true)))
	assert.Equal(t, []float64{3, 2, 7}, f64s(t, sr(fx, src, "amin", false)))
	assert.Equal(t, []float64{3.5, 2, 7}, f64s(t, sr(fx, src, "mean", false)))
	assert.Equal(t, []float64{8, 7, 7}, f64s(t, sr(fx, src, "sum", true)))
	nan := sr(fx, core.FromSlice([]float64{math.NaN(), 4, 2}, core.Shape{3}), "amax", true)
	assert.True(t, math.IsNaN(f64s(t, nan)[0]), "amax propagates NaN")

	xl, sl := leaf([]float64{1, 5, 7}, 3), leaf([]float64{3, 4, 2}, 3)
	y := core.Call1("scatter_reduce", core.Attrs{"reduce": "mean"}, xl, idx, sl)
	require.NoError(t, core.Call1("sum", nil, y).Backward())
	assert.InDeltaSlice(t, []float64{1.0 / 3, 0.5, 1}, f64s(t, xl.Grad()), 1e-12)
	assert.InDeltaSlice(t, []float64{1.0 / 3, 1.0 / 3, 0.5}, f64s(t, sl.Grad()), 1e-12)

	xl, sl = leaf([]float64{1, 5, 7}, 3), leaf([]float64{3, 4, 2}, 3)
	y = core.Call1("scatter_reduce", core.Attrs{"reduce": "amax"}, xl, idx, sl)
	require.NoError(t, core.Call1("sum", nil, y).Backward())
	assert.Equal(t, []float64{0, 1, 1}, f64s(t, xl.Grad()))
	assert.Equal(t, []float64{0, 1, 0}, f64s(t, sl.Grad()))
}

func TestIndexSelectAddEmbedding(t *testing.T) {
	x := core.FromSlice(seq(6), core.Shape{3, 2})
	idx := core.FromSlice([]int64{2, 0, 2}, core.Shape{3})
	assert.Equal(t, []float64{4, 5, 0, 1, 4, 5}, f64s(t, core.Call1("index_select", nil, x, idx)))
	added := core.Call1("index_add", core.Attrs{"alpha": 2}, x, idx, core.FromSlice([]float64{1, 1, 10, 10, 100, 100}, core.Shape{3, 2}))
	assert.Equal(t, []float64{20, 21, 2, 3, 206, 207}, f64s(t, added))

	emb := core.Call1("embedding", nil, x, core.FromSlice([]int32{1, 1, 0, 2}, core.Shape{2, 2}))
	assert.Equal(t, core.Shape{2, 2, 2}, emb.Shape())
	assert.Equal(t, []float64{2, 3, 2, 3, 0, 1, 4, 5}, f64s(t, emb))
	g := gradOf(t, leaf(seq(6), 3, 2), func(w *core.Tensor) *core.Tensor {
		return core.Call1("embedding", nil, w, core.FromSlice([]int64{1, 1}, core.Shape{2}))
	})
	assert.Equal(t, []float64{0, 0, 1 + 3, 2 + 4, 0, 0}, g)
}

func TestMasksNonzeroOneHot(t *testing.T) {
	x := core.FromSlice(seq(6), core.Shape{2, 3})
	mask := core.FromSlice([]bool{true, false, true}, core.Shape{3})
	assert.Equal(t, []float64{-1, 1, -1, -1, 4, -1}, f64s(t, core.Call1("masked_fill", core.Attrs{"value": -1}, x, mask)))
	sel := core.Call1("masked_select", nil, x, mask)
	assert.Equal(t, core.Shape{4}, sel.Shape())
	assert.Equal(t, []float64{0, 2, 3, 5}, f64s(t, sel))
	g := gradOf(t, leaf([]float64{1, 2, 3}, 3), func(x *core.Tensor) *core.Tensor {
		return core.Call1("masked_select", nil, x, core.FromSlice([]bool{true, false, true, false, false, true}, core.Shape{2, 3}))
	})
	assert.Equal(t, []float64{1, 0, 2 + 3}, g, "broadcast x collects the gradients of its copies")

	nz := core.Call1("nonzero", nil, core.FromSlice([]float32{0, 1, float32(math.NaN()), 0}, core.Shape{2, 2}))
	assert.Equal(t, core.Shape{2, 2}, nz.Shape())
	assert.Equal(t, []int64{0, 1, 1, 0}, i64s(t, nz))
	assert.Equal(t, core.Shape{1, 0}, core.Call1("nonzero", nil, core.Scalar(3, core.F32)).Shape())

	oh := core.Call1("one_hot", nil, core.FromSlice([]int64{2, 0}, core.Shape{2}))
	assert.Equal(t, core.Shape{2, 3}, oh.Shape())
	assert.Equal(t, core.I64, oh.DType())
	assert.Equal(t, []int64{0, 0, 1, 1, 0, 0}, i64s(t, oh))
}

func TestSortTopkUnique(t *testing.T) {
	nan := math.NaN()
	x := core.FromSlice([]float64{2, nan, 1, 2, 0}, core.Shape{5})
	outs := callN(t, "sort", nil, x)
	v := f64s(t, outs[0])
	assert.Equal(t, []float64{0, 1, 2, 2}, v[:4])
	assert.True(t, math.IsNaN(v[4]), "NaN sorts last")
	assert.Equal(t, []int64{4, 2, 0, 3, 1}, i64s(t, outs[1]), "ties keep index order")
	desc := callN(t, "argsort", core.Attrs{"descending": true}, x)
	assert.Equal(t, []int64{1, 0, 3, 2, 4}, i64s(t, desc[0]))

	m := core.FromSlice([]float32{5, 1, 4, 2, 3, 9}, core.Shape{2, 3})
	top := callN(t, "topk", core.Attrs{"k": 1, "axis": 0}, m)
	assert.Equal(t, []float64{5, 3, 9}, f64s(t, top[0]))
	assert.Equal(t, []int64{0, 1, 1}, i64s(t, top[1]))
	un := callN(t, "topk", core.Attrs{"k": 2, "sorted": false, "largest": false}, m)
	assert.Equal(t, []float64{1, 4, 2, 3}, f64s(t, un[0]), "sorted=false keeps index order")

	g := gradOf(t, leaf([]float64{3, 1, 2}, 3), func(x *core.Tensor) *core.Tensor {
		return callN(t, "topk", core.Attrs{"k": 2}, x)[0]
	})
	assert.Equal(t, []float64{1, 0, 2}, g)

	ints := core.FromSlice([]int64{3, 1, 3, -2, 1, 7}, core.Shape{2, 3})
	u := callN(t, "unique", core.Attrs{"return_inverse": true, "return_counts": true}, ints)
	require.Len(t, u, 3)
	assert.Equal(t, []int64{-2, 1, 3, 7}, i64s(t, u[0]))
	assert.Equal(t, []int64{2, 1, 2, 0, 1, 3}, i64s(t, u[1]))
	assert.Equal(t, core.Shape{2, 3}, u[1].Shape())
	assert.Equal(t, []int64{1, 2, 2, 1}, i64s(t, u[2]))
	u = callN(t, "unique", core.Attrs{"sorted": false, "return_counts": true}, ints)
	require.Len(t, u, 2)
	assert.Equal(t, []int64{3, 1, -2, 7}, i64s(t, u[0]))
	assert.Equal(t, []int64{2, 2, 1, 1}, i64s(t, u[1]))
	nans := callN(t, "unique", core.Attrs{"return_counts": true}, core.FromSlice([]float64{nan, 1, nan, 1}, core.Shape{4}))
	assert.Equal(t, []int64{2, 1, 1}, i64s(t, nans[1]), "every NaN is distinct")
}

func TestStridedInputs(t *testing.T) {
	base := core.FromSlice(seq(6), core.Shape{2, 3})
	tr := core.Call1("transpose", nil, base) // [[0 3] [1 4] [2 5]]
	require.False(t, tr.IsContiguous())
	assert.Equal(t, []float64{0, 3, 1, 4, 2, 5, 9, 9}, f64s(t, core.Call1("concat", nil, tr, core.FromSlice([]float64{9, 9}, core.Shape{1, 2}))))
	assert.Equal(t, []float64{3, 0, 4, 1, 5, 2}, f64s(t, core.Call1("flip", core.Attrs{"axes": []int{1}}, tr)))
	assert.Equal(t, []float64{1, 4}, f64s(t, core.Call1("index_select", nil, tr, core.FromSlice([]int64{1}, core.Shape{1}))))
	assert.Equal(t, []float64{3, 1, 5}, f64s(t, core.Call1("gather", core.Attrs{"axis": 1}, tr, core.FromSlice([]int64{1, 0, 1}, core.Shape{3, 1}))))
	assert.Equal(t, []float64{0, 3, 1, 4}, f64s(t, core.Call1("masked_select", nil, tr, core.FromSlice([]bool{true, true, true, true, false, false}, core.Shape{3, 2}))))
	s := callN(t, "sort", core.Attrs{"axis": 0, "descending": true}, tr)
	assert.Equal(t, []float64{2, 5, 1, 4, 0, 3}, f64s(t, s[0]))
	assert.Equal(t, []float64{1, 4, 0, 3, 1, 4, 2, 5, 1, 4}, f64s(t, core.Call1("pad", core.Attrs{"pads": []int{0, 0, 1, 1}, "mode": "reflect"}, tr)))
	parts := callN(t, "chunk", core.Attrs{"chunks": 2, "axis": 1}, tr)
	assert.Equal(t, []float64{3, 4, 5}, f64s(t, parts[1]))
}

func TestEmptyTensors(t *testing.T) {
	e := core.FromSlice([]float32{}, core.Shape{0, 3})
	idx := core.FromSlice([]int64{}, core.Shape{0})
	for _, c := range []struct {
		op    string
		attrs core.Attrs
		in    []*core.Tensor
		shape core.Shape
	}{
		{"concat", nil, []*core.Tensor{e, e}, core.Shape{0, 3}},
		{"flip", nil, []*core.Tensor{e}, core.Shape{0, 3}},
		{"roll", core.Attrs{"shifts": []int{2}}, []*core.Tensor{e}, core.Shape{0, 3}},
		{"tile", core.Attrs{"reps": []int{2, 2}}, []*core.Tensor{e}, core.Shape{0, 6}},
		{"pad", core.Attrs{"pads": []int{1, 1, 1, 1}}, []*core.Tensor{e}, core.Shape{2, 5}},
		{"index_select", core.Attrs{"axis": 1}, []*core.Tensor{e, idx}, core.Shape{0, 0}},
		{"masked_select", nil, []*core.Tensor{e, core.FromSlice([]bool{true, false, true}, core.Shape{3})}, core.Shape{0}},
		{"nonzero", nil, []*core.Tensor{e}, core.Shape{0, 2}},
		{"unique", nil, []*core.Tensor{e}, core.Shape{0}},
		{"sort", core.Attrs{"axis": 0}, []*core.Tensor{e}, core.Shape{0, 3}},
		{"one_hot", core.Attrs{"num_classes": 4}, []*core.Tensor{idx}, core.Shape{0, 4}},
	} {
		outs, err := core.Call(c.op, c.in, c.attrs)
		require.NoError(t, err, c.op)
		assert.Equal(t, c.shape, outs[0].Shape(), c.op)
	}
}

func TestShapeIndexErrors(t *testing.T) {
	x := core.FromSlice(seq(6), core.Shape{2, 3})
	i := func(v ...int64) *core.Tensor { return core.FromSlice(v, core.Shape{len(v)}) }
	m := func(v ...int64) *core.Tensor { return core.FromSlice(v, core.Shape{1, len(v)}) }
	for _, c := range []struct {
		op    string
		attrs core.Attrs
		in    []*core.Tensor
		want  string
	}{
		{"concat", core.Attrs{"axis": 1}, []*core.Tensor{x, core.FromSlice(seq(3), core.Shape{3, 1})}, "dim 0 differs"},
		{"concat", core.Attrs{"axis": 2}, []*core.Tensor{x, x}, "axis 2 out of range"},
		{"stack", nil, []*core.Tensor{x, core.FromSlice(seq(3), core.Shape{3})}, "equal shapes"},
		{"split", core.Attrs{"sizes": []int{1, 1}, "axis": 1}, []*core.Tensor{x}, "add up to 2, the axis has size 3"},
		{"split", nil, []*core.Tensor{x}, "give sizes"},
		{"chunk", core.Attrs{"chunks": 0}, []*core.Tensor{x}, "at least 1"},
		{"slice", core.Attrs{"step": 0}, []*core.Tensor{x}, "step must be positive"},
		{"pad", core.Attrs{"pads": []int{3, 0}, "mode": "reflect"}, []*core.Tensor{x}, "smaller than dim 1 of size 3"},
		{"pad", core.Attrs{"pads": []int{1}}, []*core.Tensor{x}, "odd length"},
		{"pad", core.Attrs{"pads": []int{-2, -2}}, []*core.Tensor{x}, "negative size"},
		{"pad", core.Attrs{"pads": []int{1, 1}, "mode": "wrap"}, []*core.Tensor{x}, "want one of"},
		{"roll", core.Attrs{"shifts": []int{1, 2}}, []*core.Tensor{x}, "single value"},
		{"tile", core.Attrs{"reps": []int{-1}}, []*core.Tensor{x}, "negative"},
		{"flip", core.Attrs{"axes": []int{0, -2}}, []*core.Tensor{x}, "repeated"},
		{"gather", core.Attrs{"axis": 1}, []*core.Tensor{x, m(0, 3)}, "index 3 is out of bounds for axis 1 with size 3"},
		{"gather", nil, []*core.Tensor{x, m(-1)}, "index -1 is out of bounds"},
		{"gather", nil, []*core.Tensor{x, i(0)}, "ranks differ"},
		{"gather", nil, []*core.Tensor{x, core.FromSlice(seq(2), core.Shape{1, 2})}, "dtype f64"},
		{"scatter", nil, []*core.Tensor{x, m(0, 2), core.FromSlice([]float64{1, 2}, core.Shape{1, 2})}, "index 2 is out of bounds for axis 0 with size 2"},
		{"scatter", nil, []*core.Tensor{x, m(0), core.FromSlice([]float32{1}, core.Shape{1, 1})}, "src has dtype f32"},
		{"scatter_add", nil, []*core.Tensor{x, m(0, 0), core.FromSlice([]float64{1}, core.Shape{1, 1})}, "larger than src"},
		{"scatter_reduce", core.Attrs{"reduce": "prod"}, []*core.Tensor{x, m(0), m(0)}, "want one of"},
		{"index_select", nil, []*core.Tensor{x, i(5)}, "index 5 is out of bounds for axis 0 with size 2"},
		{"index_select", nil, []*core.Tensor{x, m(0)}, "must be 1-D"},
		{"index_add", nil, []*core.Tensor{x, i(0), x}, "src has shape [2 3], want [1 3]"},
		{"index_add", core.Attrs{"alpha": 0.5}, []*core.Tensor{i(1, 2), i(0), i(3)}, "alpha 0.5 must be an integer"},
		{"embedding", nil, []*core.Tensor{x, i(2)}, "index 2 is out of bounds for axis 0 with size 2"},
		{"embedding", nil, []*core.Tensor{i(1, 2), i(0)}, "weight must be 2-D"},
		{"masked_fill", core.Attrs{"value": 0}, []*core.Tensor{x, i(1, 0, 1)}, "dtype i64"},
		{"masked_select", nil, []*core.Tensor{x, core.FromSlice([]bool{true, false}, core.Shape{2})}, "cannot be broadcast"},
		{"take_along_axis", nil, []*core.Tensor{x, m(3)}, "index 3 is out of bounds for axis 1 with size 3"},
		{"take_along_axis", nil, []*core.Tensor{x, m(-4)}, "index -4 is out of bounds"},
		{"one_hot", nil, []*core.Tensor{i(1, -1)}, "class index -1 is negative"},
		{"one_hot", core.Attrs{"num_classes": 2}, []*core.Tensor{i(2)}, "class index 2 is out of range for num_classes 2"},
		{"one_hot", nil, []*core.Tensor{i()}, "cannot infer num_classes"},
		{"topk", core.Attrs{"k": 4}, []*core.Tensor{x}, "k 4 out of range for axis 1 of size 3"},
		{"sort", core.Attrs{"axis": 2}, []*core.Tensor{x}, "axis 2 out of range"},
		{"unique", core.Attrs{"return_counts": "yes"}, []*core.Tensor{x}, "want bool"},
	} {
		var err error
		require.NotPanics(t, func() { _, err = core.Call(c.op, c.in, c.attrs) }, c.op)
		if assert.Error(t, err, "%s %v", c.op, c.attrs) {
			assert.Contains(t, err.Error(), c.want, c.op)
			assert.Contains(t, err.Error(), c.op+":", "errors name the op")
		}
	}
}
