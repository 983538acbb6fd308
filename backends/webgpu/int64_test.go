package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// Issue 26, item 8: the GPU holds i64 in i32 (uploads past it are refused),
// and i64 results past it wrapped silently. An elementwise op or cast whose
// i64 result leaves i32 now fails naming the op; results inside it are
// the CPU's exactly.
func TestI64ResultsAreExactOrRefused(t *testing.T) {
	needGPU(t)
	i64 := func(vals ...float64) *core.Tensor { return core.FromFloat64s(core.I64, core.Shape{len(vals)}, vals) }
	big, small := i64(1<<30, -(1<<30), 3), i64(-(1<<30)-1, -5, 7)
	minI32 := i64(-2147483648, 4)
	cases := []struct {
		op     string
		attrs  core.Attrs
		in     []*core.Tensor
		refuse bool
	}{
		{"add", nil, []*core.Tensor{big, big}, true},
		{"add", nil, []*core.Tensor{big, small}, false},
		{"sub", nil, []*core.Tensor{small, big}, true},
		{"sub", nil, []*core.Tensor{big, big}, false},
		{"mul", nil, []*core.Tensor{big, i64(2, 2, 2)}, true},
		{"mul", nil, []*core.Tensor{i64(1<<15, -(1 << 16), 3), i64(1<<15, 1<<15, -7)}, false},
		{"pow", nil, []*core.Tensor{i64(2, 3, -2), i64(31, 19, 31)}, true},
		{"pow", nil, []*core.Tensor{i64(2, 3, -2), i64(30, 19, 31)}, false},
		{"floor_divide", nil, []*core.Tensor{minI32, i64(-1, 2)}, true},
		{"floor_divide", nil, []*core.Tensor{minI32, i64(1, -3)}, false},
		{"neg", nil, []*core.Tensor{minI32}, true},
		{"abs", nil, []*core.Tensor{minI32}, true},
		{"neg", nil, []*core.Tensor{small}, false},
		{"square", nil, []*core.Tensor{i64(46341)}, true},
		{"clamp", core.Attrs{"min": float64(1 << 40)}, []*core.Tensor{small}, true},
		{"clamp", core.Attrs{"min": -3, "max": float64(1 << 40)}, []*core.Tensor{small}, false},
		{"square", nil, []*core.Tensor{i64(46340, -7)}, false},
		{"cast", core.Attrs{"dtype": core.I64}, []*core.Tensor{core.FromFloat64s(core.F32, core.Shape{2}, []float64{3e9, 1})}, true},
		{"cast", core.Attrs{"dtype": core.I64}, []*core.Tensor{core.FromFloat64s(core.F32, core.Shape{2}, []float64{-2147483648, 2.5})}, false},
		{"cast", core.Attrs{"dtype": core.I64}, []*core.Tensor{core.FromFloat64s(core.U32, core.Shape{2}, []float64{1 << 31, 1})}, true},
	}
	for _, c := range cases {
		gin := make([]*core.Tensor, len(c.in))
		for i, t := range c.in {
			gin[i] = t.To(gpu)
		}
		got, err := core.Call1(c.op, c.attrs, gin...).Int64s()
		if c.refuse {
			require.ErrorContains(t, err, c.op+": a result does not fit the 32-bit integers WebGPU holds i64 in", "%s %v", c.op, c.in)
			continue
		}
		require.NoError(t, err, "%s %v", c.op, c.in)
		want, err := core.Call1(c.op, c.attrs, c.in...).Int64s()
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s %v", c.op, c.in)
	}
}

// Issue 26, item 10: one rule for integer division on every backend:
// x // 0, x % 0 and 0 ** -n (1 / 0^n, which gave 0) fail the same way as
// on the CPU; other negative powers truncate as PyTorch's do.
func TestIntegerDivisionByZeroIsAnErrorOnTheGPU(t *testing.T) {
	needGPU(t)
	i32 := func(shape core.Shape, vals ...float64) *core.Tensor { return core.FromFloat64s(core.I32, shape, vals) }
	for _, c := range []struct {
		op   string
		a, b *core.Tensor
	}{
		{"floor_divide", i32(core.Shape{3}, 1, 2, 3), i32(core.Shape{3}, 1, 0, 2)},
		{"remainder", i32(core.Shape{3}, 1, 2, 3), i32(core.Shape{1}, 0)},
		{"pow", i32(core.Shape{2, 1}, 2, 0), i32(core.Shape{2}, 3, -1)},
	} {
		_, cpuErr := core.Call1(c.op, nil, c.a, c.b).Int64s()
		_, gpuErr := core.Call1(c.op, nil, c.a.To(gpu), c.b.To(gpu)).Int64s()
		require.Error(t, cpuErr, c.op)
		require.ErrorContains(t, gpuErr, c.op+": integer division by zero", c.op)
		assert.Equal(t, cpuErr.Error(), gpuErr.Error(), "the same error on both backends")
	}
	a, b := i32(core.Shape{4}, 2, -1, -1, 1), i32(core.Shape{4}, -1, -3, -4, -7)
	got, err := core.Call1("pow", nil, a.To(gpu), b.To(gpu)).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{0, -1, 1, 1}, got)
}

// Running sums and products of integers are i64 too: exact while every
// element fits i32, refused when one does not.
func TestI64ScansAreExactOrRefused(t *testing.T) {
	needGPU(t)
	i32 := func(vals ...float64) *core.Tensor { return core.FromFloat64s(core.I32, core.Shape{len(vals)}, vals) }
	for _, c := range []struct {
		op     string
		x      *core.Tensor
		refuse bool
	}{
		{"cumsum", i32(1<<30, 1<<30, -(1 << 30)), true},
		{"cumsum", i32(1<<30, -(1 << 30), -(1 << 30), -(1 << 30), 5), false},
		{"cumsum", core.FromFloat64s(core.U8, core.Shape{3}, []float64{255, 255, 3}), false},
		{"cumprod", i32(1<<16, 1<<15, 0), true},
		{"cumprod", i32(1<<16, -(1 << 15), 0, 1<<20), false},
	} {
		attrs := core.Attrs{"axis": 0}
		got, err := core.Call1(c.op, attrs, c.x.To(gpu)).Int64s()
		if c.refuse {
			require.ErrorContains(t, err, c.op+": a result does not fit the 32-bit integers WebGPU holds i64 in", "%s %v", c.op, c.x)
			continue
		}
		require.NoError(t, err)
		want, err := core.Call1(c.op, attrs, c.x).Int64s()
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s %v", c.op, c.x)
	}
}

// Integer products into i64 (matmul, outer, einsum) sum exact 64-bit
// products and are refused past i32; the matmul kernels accumulated in
// i32 and wrapped.
func TestI64ProductsAreExactOrRefused(t *testing.T) {
	needGPU(t)
	a := core.FromFloat64s(core.I64, core.Shape{2, 3, 4}, []float64{
		1 << 15, -(1 << 15), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		-1, 2, -3, 4, 5, -6, 7, -8, 9, 10, -11, 12})
	b := core.FromFloat64s(core.I64, core.Shape{4, 2}, []float64{1 << 15, 1, 1 << 15, -2, 3, 4, 5, 6})
	run := func(f func(a, b *core.Tensor) *core.Tensor) {
		want, err := f(a, b).Int64s()
		require.NoError(t, err)
		got, err := f(a.To(gpu), b.To(gpu)).Int64s()
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	run(func(a, b *core.Tensor) *core.Tensor { return a.Matmul(b) })
	run(func(a, b *core.Tensor) *core.Tensor {
		return core.Call1("einsum", core.Attrs{"equation": "bij,jk->bk"}, a, b)
	})
	big := core.FromFloat64s(core.I64, core.Shape{1, 2}, []float64{1 << 16, 1 << 16}, gpu)
	col := core.FromFloat64s(core.I64, core.Shape{2, 1}, []float64{1 << 15, 1 << 15}, gpu)
	_, err := big.Matmul(col).Int64s()
	require.ErrorContains(t, err, "matmul: a result does not fit the 32-bit integers WebGPU holds i64 in")
	v, err := core.FromFloat64s(core.I64, core.Shape{1, 2}, []float64{1 << 16, -(1 << 16)}, gpu).Matmul(col).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, v, "each product passes i32, their sum does not")
}

// Scatter sums into i64 (scatter_add, scatter_reduce, index_add) fail when
// they pass i32 instead of wrapping; within it they are the CPU's.
func TestI64ScatterSumsAreExactOrRefused(t *testing.T) {
	needGPU(t)
	x := core.FromFloat64s(core.I64, core.Shape{3}, []float64{1, 2, 3})
	idx := core.FromFloat64s(core.I64, core.Shape{4}, []float64{0, 0, 2, 1})
	for _, c := range []struct {
		src    []float64
		refuse bool
	}{
		{[]float64{1 << 30, 1 << 30, 5, -7}, true},
		{[]float64{1 << 29, 1 << 29, 1 << 30, -7}, false},
	} {
		src := core.FromFloat64s(core.I64, core.Shape{4}, c.src)
		for name, run := range map[string]func(x, idx, src *core.Tensor) *core.Tensor{
			"scatter_add": func(x, idx, src *core.Tensor) *core.Tensor {
				return core.Call1("scatter_add", core.Attrs{"axis": 0}, x, idx, src)
			},
			"scatter_reduce": func(x, idx, src *core.Tensor) *core.Tensor {
				return core.Call1("scatter_reduce", core.Attrs{"axis": 0, "reduce": "sum"}, x, idx, src)
			},
			"index_add": func(x, idx, src *core.Tensor) *core.Tensor {
				return core.Call1("index_add", core.Attrs{"axis": 0}, x, idx, src)
			},
		} {
			got, err := run(x.To(gpu), idx.To(gpu), src.To(gpu)).Int64s()
			if c.refuse {
				require.ErrorContains(t, err, "passes the 32-bit integers WebGPU holds i64 in", name)
				continue
			}
			require.NoError(t, err, name)
			want, err := run(x, idx, src).Int64s()
			require.NoError(t, err)
			assert.Equal(t, want, got, name)
		}
	}
}
