package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// Focused tests of the reductions, matmul and einsum: hand-computed values,
// the layouts and sizes the reference samples are too small to reach (the
// packed GEMM path, transposed views), gradients, and error cases.

func rlRandF32(rng *rand.Rand, shape ...int) *core.Tensor {
	s := core.Shape(shape)
	v := make([]float32, s.Numel())
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return core.FromSlice(v, s)
}

// naiveMatmul multiplies row-major m x k and k x n matrices in float64.
func rlNaiveMatmul(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				s += a[i*k+p] * b[p*n+j]
			}
			c[i*n+j] = s
		}
	}
	return c
}

func rlCall(t *testing.T, op string, a core.Attrs, in ...*core.Tensor) *core.Tensor {
	t.Helper()
	out := core.Call1(op, a, in...)
	require.NoError(t, out.Err(), op)
	return out
}

func TestMatmulPackedPathAndTransposedViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Sizes that cross the block sizes (KC=256, MC=64, NC=1024) with ragged
	// edges, matrix-vector shapes, and small outputs over a long k (split
	// into pieces of 4096, the last one ragged).
	for _, dims := range [][3]int{{37, 300, 45}, {130, 70, 9}, {1, 513, 17}, {65, 257, 1}, {3, 5, 1030}, {10, 8237, 6}, {70, 12289, 9}} {
		m, k, n := dims[0], dims[1], dims[2]
		a, b := rlRandF32(rng, m, k), rlRandF32(rng, k, n)
		want := rlNaiveMatmul(f64s(t, a), f64s(t, b), m, k, n)
		// Store the transposes densely, then view them back: gemm then
		// reads the operands with trans flags set.
		at := rlCall(t, "transpose", nil, rlCall(t, "contiguous", nil, rlCall(t, "transpose", nil, a)))
		bt := rlCall(t, "transpose", nil, rlCall(t, "contiguous", nil, rlCall(t, "transpose", nil, b)))
		require.False(t, at.IsContiguous() && m > 1 && k > 1)
		for name, pair := range map[string][2]*core.Tensor{"nn": {a, b}, "tn": {at, b}, "nt": {a, bt}, "tt": {at, bt}} {
			got := f64s(t, rlCall(t, "matmul", nil, pair[0], pair[1]))
			require.Len(t, got, m*n)
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-4*math.Sqrt(float64(k)), "%v %s at %d", dims, name, i)
			}
		}
	}
}

func TestMatmulBatchedBroadcastAndVectors(t *testing.T) {
	a := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 1, 1, 3})                // batch [2 1] of 1x3
	b := core.FromSlice([]float32{1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, 1}, core.Shape{2, 3, 2}) // batch [2] of 3x2
	y := rlCall(t, "matmul", nil, a, b)
	assert.Equal(t, core.Shape{2, 2, 1, 2}, y.Shape())
	assert.Equal(t, []float64{4, 5, 5, 7, 10, 11, 14, 16}, f64s(t, y))

	v := core.FromSlice([]float64{1, 2, 3}, core.Shape{3})
	m := core.FromSlice([]float64{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	assert.Equal(t, []float64{14, 32}, f64s(t, rlCall(t, "matmul", nil, m, v)))
	dot := rlCall(t, "matmul", nil, v, v)
	assert.Equal(t, core.Shape{}, dot.Shape())
	assert.Equal(t, []float64{14}, f64s(t, dot))

	ints := core.FromSlice([]int32{1, 2, 3, 4}, core.Shape{2, 2})
	sq := rlCall(t, "matmul", nil, ints, ints)
	assert.Equal(t, core.I32, sq.DType())
	assert.Equal(t, []int64{7, 10, 15, 22}, i64s(t, sq))

	empty := rlCall(t, "matmul", nil, core.Zeros(core.Shape{2, 0}, core.F32), core.Zeros(core.Shape{0, 3}, core.F32))
	assert.Equal(t, []float64{0, 0, 0, 0, 0, 0}, f64s(t, empty))
}

func TestMatmulManySmallBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := rlRandF32(rng, 40, 7, 5), rlRandF32(rng, 5, 6)
	got := f64s(t, rlCall(t, "matmul", nil, a, b))
	av, bv := f64s(t, a), f64s(t, b)
	for i := 0; i < 40; i++ {
		want := rlNaiveMatmul(av[i*35:(i+1)*35], bv, 7, 5, 6)
		assert.InDeltaSlice(t, want, got[i*42:(i+1)*42], 1e-5)
	}
}

func TestMatmulGradients(t *testing.T) {
	a := core.FromSlice([]float64{1, 2, 3, 4, 5, 6}, core.Shape{2, 3}).SetRequiresGrad(true)
	v := core.FromSlice([]float64{1, -1, 2}, core.Shape{3}).SetRequiresGrad(true)
	y := rlCall(t, "sum", nil, rlCall(t, "matmul", nil, a, v))
	require.NoError(t, y.Backward())
	// d/da sum(a v) = 1 vᵀ; d/dv = column sums of a.
	assert.Equal(t, []float64{1, -1, 2, 1, -1, 2}, f64s(t, a.Grad()))
	assert.Equal(t, []float64{5, 7, 9}, f64s(t, v.Grad()))

	x := core.FromSlice([]float64{1, 2, 3, 4}, core.Shape{2, 1, 2}).SetRequiresGrad(true)
	w := core.FromSlice([]float64{1, 0, 2, 1}, core.Shape{2, 2}).SetRequiresGrad(true)
	z := rlCall(t, "sum", nil, rlCall(t, "matmul", nil, x, w))
	require.NoError(t, z.Backward())
	assert.Equal(t, []float64{1, 3, 1, 3}, f64s(t, x.Grad()))
	// w is shared by both batches: its gradient sums them.
	assert.Equal(t, []float64{4, 4, 6, 6}, f64s(t, w.Grad()))
}

func TestMatmulErrors(t *testing.T) {
	a := core.Zeros(core.Shape{2, 3}, core.F32)
	for name, tc := range map[string][2]*core.Tensor{
		"inner":   {a, core.Zeros(core.Shape{4, 2}, core.F32)},
		"scalar":  {core.Scalar(1, core.F32), a},
		"batch":   {core.Zeros(core.Shape{2, 2, 3}, core.F32), core.Zeros(core.Shape{3, 3, 2}, core.F32)},
		"bool":    {core.Zeros(core.Shape{2, 3}, core.Bool), core.Zeros(core.Shape{3, 2}, core.Bool)},
		"vec_vec": {core.Zeros(core.Shape{3}, core.F32), core.Zeros(core.Shape{4}, core.F32)},
	} {
		out := core.Call1("matmul", nil, tc[0], tc[1])
		assert.Error(t, out.Err(), name)
	}
	err := core.Call1("matmul", nil, a, core.Zeros(core.Shape{4, 2}, core.F32)).Err()
	assert.ErrorContains(t, err, "matmul: inner dims differ: [2 3] x [4 2]")
	assert.Error(t, core.Call1("outer", nil, a, a).Err())
}

func rlF64(vals []float64, shape ...int) *core.Tensor {
	return core.FromSlice(vals, core.Shape(shape))
}

func TestReductionValues(t *testing.T) {
	x := rlF64([]float64{1, -2, 3, 4, 0, -6}, 2, 3)
	ax1 := core.Attrs{"axes": []int{1}}
	for _, tc := range []struct {
		op    string
		attrs core.Attrs
		want  []float64
	}{
		{"prod", ax1, []float64{-6, 0}},
		{"prod", nil, []float64{0}},
		{"max", ax1, []float64{3, 4}},
		{"min", core.Attrs{"axes": []int{0}}, []float64{1, -2, -6}},
		{"var", ax1, []float64{114.0 / 18, 456.0 / 18}},
		{"var", core.Attrs{"axes": []int{1}, "correction": 0}, []float64{114.0 / 27, 456.0 / 27}},
		{"std", ax1, []float64{math.Sqrt(114.0 / 18), math.Sqrt(456.0 / 18)}},
		{"logsumexp", ax1, []float64{math.Log(math.E + math.Exp(-2) + math.Exp(3)), math.Log(math.Exp(4) + 1 + math.Exp(-6))}},
		{"norm", ax1, []float64{math.Sqrt(14), math.Sqrt(52)}},
		{"norm", core.Attrs{"axes": []int{1}, "ord": 1}, []float64{6, 10}},
		{"norm", core.Attrs{"ord": math.Inf(1)}, []float64{6}},
		{"norm", core.Attrs{"ord": math.Inf(-1)}, []float64{0}},
		{"norm", core.Attrs{"ord": 0}, []float64{5}},
		{"norm", core.Attrs{"axes": []int{0}, "ord": 3}, []float64{math.Cbrt(65), 2, math.Cbrt(243)}},
		{"cumsum", core.Attrs{"axis": 1}, []float64{1, -1, 2, 4, 4, -2}},
		{"cumprod", core.Attrs{"axis": -1}, []float64{1, -2, -6, 4, 0, 0}},
	} {
		got := f64s(t, rlCall(t, tc.op, tc.attrs, x))
		assert.InDeltaSlice(t, tc.want, got, 1e-12, "%s %v", tc.op, tc.attrs)
	}
	assert.Equal(t, []int64{2, 0}, i64s(t, rlCall(t, "argmax", core.Attrs{"axis": 1}, x)))
	assert.Equal(t, []int64{5}, i64s(t, rlCall(t, "argmin", nil, x)))
	keep := rlCall(t, "argmax", core.Attrs{"keepdim": true}, x)
	assert.Equal(t, core.Shape{1, 1}, keep.Shape())
	assert.Equal(t, []int64{3}, i64s(t, keep))
	assert.Equal(t, []int64{0, 1}, i64s(t, rlCall(t, "any", core.Attrs{"axes": []int{0}, "keepdim": true}, rlF64([]float64{0, 2, 0, 0}, 2, 2))))
	assert.Equal(t, []int64{0, 1}, i64s(t, rlCall(t, "all", core.Attrs{"axes": []int{1}}, rlF64([]float64{0, 2, math.NaN(), -1}, 2, 2))))
	// Empty reductions give the identities.
	empty := core.Zeros(core.Shape{2, 0}, core.F32)
	assert.Equal(t, []int64{1, 1}, i64s(t, rlCall(t, "all", core.Attrs{"axes": []int{1}}, empty)))
	assert.Equal(t, []int64{0, 0}, i64s(t, rlCall(t, "any", core.Attrs{"axes": []int{1}}, empty)))
	assert.Equal(t, []float64{1, 1}, f64s(t, rlCall(t, "prod", core.Attrs{"axes": []int{1}}, empty)))
	assert.Equal(t, []float64{math.Inf(-1), math.Inf(-1)}, f64s(t, rlCall(t, "logsumexp", core.Attrs{"axes": []int{1}}, empty)))
}

func TestReductionsPropagateNaNAndInfinities(t *testing.T) {
	x := rlF64([]float64{1, math.NaN(), 3, math.NaN(), 5, 7}, 2, 3)
	assert.True(t, math.IsNaN(f64s(t, rlCall(t, "max", nil, x))[0]))
	mins := f64s(t, rlCall(t, "min", core.Attrs{"axes": []int{0}}, x))
	assert.True(t, math.IsNaN(mins[0]) && math.IsNaN(mins[1]))
	assert.Equal(t, 3.0, mins[2])
	// The first NaN is the arg-extreme either way.
	assert.Equal(t, []int64{1, 0}, i64s(t, rlCall(t, "argmax", core.Attrs{"axis": 1}, x)))
	assert.Equal(t, []int64{1}, i64s(t, rlCall(t, "argmin", nil, x)))
	inf := rlF64([]float64{math.Inf(-1), math.Inf(-1), 1, math.Inf(1)}, 2, 2)
	assert.Equal(t, []float64{math.Inf(-1), math.Inf(1)}, f64s(t, rlCall(t, "logsumexp", core.Attrs{"axes": []int{1}}, inf)))
	big := rlF64([]float64{1000, 1000}, 2)
	assert.InDelta(t, 1000+math.Ln2, f64s(t, rlCall(t, "logsumexp", nil, big))[0], 1e-12)
}

func TestIntegerReductionsAreExact(t *testing.T) {
	big := core.FromSlice([]int64{1<<62 + 1, 1<<62 + 3, 1<<62 + 2}, core.Shape{3})
	assert.Equal(t, []int64{1<<62 + 3}, i64s(t, rlCall(t, "max", nil, big)))
	assert.Equal(t, []int64{1}, i64s(t, rlCall(t, "argmax", nil, big)))
	assert.Equal(t, []int64{0}, i64s(t, rlCall(t, "argmin", nil, big)))
	small := core.FromSlice([]int32{100000, 100000, -3}, core.Shape{3})
	p := rlCall(t, "prod", nil, small)
	assert.Equal(t, core.I64, p.DType())
	assert.Equal(t, []int64{-30000000000}, i64s(t, p))
	c := rlCall(t, "cumsum", core.Attrs{"axis": 0}, core.FromSlice([]bool{true, false, true}, core.Shape{3}))
	assert.Equal(t, core.I64, c.DType())
	assert.Equal(t, []int64{1, 1, 2}, i64s(t, c))
	u := rlCall(t, "max", nil, core.FromSlice([]uint8{3, 250, 7}, core.Shape{3}))
	assert.Equal(t, core.U8, u.DType())
	assert.Equal(t, []int64{250}, i64s(t, u))
}

// rlGrad returns the gradient of sum(op(x)) at x.
func rlGrad(t *testing.T, op string, attrs core.Attrs, x *core.Tensor) []float64 {
	t.Helper()
	x = x.Detach().SetRequiresGrad(true)
	require.NoError(t, rlCall(t, "sum", nil, rlCall(t, op, attrs, x)).Backward())
	return f64s(t, x.Grad())
}

func TestReductionGradients(t *testing.T) {
	ax1 := core.Attrs{"axes": []int{1}}
	// Products with one and with two zeros: no division by zero.
	zeros := rlF64([]float64{2, 0, 3, 0, 5, 0}, 2, 3)
	assert.Equal(t, []float64{0, 6, 0, 0, 0, 0}, rlGrad(t, "prod", ax1, zeros))
	// Ties share the gradient of max evenly.
	ties := rlF64([]float64{1, 3, 3, 2}, 4)
	assert.Equal(t, []float64{0, 0.5, 0.5, 0}, rlGrad(t, "max", nil, ties))
	assert.Equal(t, []float64{1, 0, 0, 0}, rlGrad(t, "min", nil, ties))
	// The 2-norm has gradient 0 at 0, like PyTorch's.
	assert.InDeltaSlice(t, []float64{0, 0, 0.6, 0.8}, rlGrad(t, "norm", ax1, rlF64([]float64{0, 0, 3, 4}, 2, 2)), 1e-15)
	assert.Equal(t, []float64{1, -1, 0}, rlGrad(t, "norm", core.Attrs{"ord": 1}, rlF64([]float64{2, -1, 0}, 3)))
	assert.Equal(t, []float64{0, -0.5, 0.5}, rlGrad(t, "norm", core.Attrs{"ord": math.Inf(1)}, rlF64([]float64{1, -4, 4}, 3)))
	// d/dx_i sum_j cumsum_j = number of later-or-equal positions.
	assert.Equal(t, []float64{3, 2, 1}, rlGrad(t, "cumsum", core.Attrs{"axis": 0}, rlF64([]float64{5, -1, 2}, 3)))
	// cumprod [2, 0, 3]: outputs 2, 0, 0; d/dx1 = 2 + 2*3.
	assert.Equal(t, []float64{1, 8, 0}, rlGrad(t, "cumprod", core.Attrs{"axis": 0}, rlF64([]float64{2, 0, 3}, 3)))
	// var of [1, 3] (correction 1) = (x0-x1)^2 / 2.
	assert.Equal(t, []float64{-2, 2}, rlGrad(t, "var", nil, rlF64([]float64{1, 3}, 2)))
	softmax := rlGrad(t, "logsumexp", nil, rlF64([]float64{0, math.Log(3)}, 2))
	assert.InDeltaSlice(t, []float64{0.25, 0.75}, softmax, 1e-12)
}

func TestReductionErrors(t *testing.T) {
	x := core.Zeros(core.Shape{2, 3}, core.F32)
	empty := core.Zeros(core.Shape{0, 3}, core.F32)
	for _, tc := range []struct {
		op    string
		attrs core.Attrs
		in    *core.Tensor
		msg   string
	}{
		{"prod", core.Attrs{"axes": []int{2}}, x, "axis 2 out of range"},
		{"max", core.Attrs{"axes": []int{0, -2}}, x, "repeated"},
		{"max", core.Attrs{"axes": []int{0}}, empty, "size 0"},
		{"argmax", nil, empty, "empty"},
		{"argmin", core.Attrs{"axis": 0}, empty, "size 0"},
		{"argmax", core.Attrs{"axis": -3}, x, "out of range"},
		{"var", nil, core.Zeros(core.Shape{3}, core.I32), "dtype"},
		{"norm", core.Attrs{"ord": -1}, x, "ord -1"},
		{"norm", core.Attrs{"ord": math.Inf(1)}, empty, "size 0"},
		{"cumsum", nil, x, "axis"},
		{"cumprod", core.Attrs{"axis": 5}, x, "out of range"},
		{"any", core.Attrs{"axes": []int{3}}, x, "out of range"},
		{"logsumexp", nil, core.Zeros(core.Shape{2}, core.Bool), "dtype"},
	} {
		err := core.Call1(tc.op, tc.attrs, tc.in).Err()
		if assert.Error(t, err, "%s %v", tc.op, tc.attrs) {
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), tc.op+": ")
		}
	}
}

func TestEinsumValues(t *testing.T) {
	m := rlF64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
	assert.Equal(t, []float64{15}, f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "ii"}, m)))
	assert.Equal(t, []float64{1, 5, 9}, f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "ii->i"}, m)))
	assert.Equal(t, []float64{1, 4, 7, 2, 5, 8, 3, 6, 9}, f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "ij->ji"}, m)))
	assert.Equal(t, []float64{12, 15, 18}, f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "ij->j"}, m)))
	v := rlF64([]float64{1, 0, -1}, 3)
	assert.Equal(t, []float64{-2, -2, -2}, f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "ij,j->i"}, m, v)))
	// Implicit output: ASCII order puts upper case first.
	o := rlCall(t, "einsum", core.Attrs{"equation": "a,B"}, rlF64([]float64{1, 2}, 2), v)
	assert.Equal(t, core.Shape{3, 2}, o.Shape())
	assert.Equal(t, []float64{1, 2, 0, 0, -1, -2}, f64s(t, o))
	// Ellipsis dims broadcast and lead an implicit output; size-1 dims broadcast.
	e := rlCall(t, "einsum", core.Attrs{"equation": "...i,i"}, core.Ones(core.Shape{2, 1, 3}, core.F64), v)
	assert.Equal(t, core.Shape{2, 1}, e.Shape())
	b := rlCall(t, "einsum", core.Attrs{"equation": "ij,ij->ij"}, rlF64([]float64{1, 2}, 2, 1), rlF64([]float64{1, 2, 3, 4}, 2, 2))
	assert.Equal(t, []float64{1, 2, 6, 8}, f64s(t, b))
	// Ellipsis dims missing from an explicit output are summed.
	assert.Equal(t, []float64{12, 15, 18}, f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "...j->j"}, m)))
}

func TestEinsumMatchesMatmulOnLargeBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a, b := rlRandF32(rng, 3, 70, 90), rlRandF32(rng, 3, 50, 90)
	got := f64s(t, rlCall(t, "einsum", core.Attrs{"equation": "bqd,bkd->bqk"}, a, b))
	want := f64s(t, rlCall(t, "matmul", nil, a, rlCall(t, "transpose", nil, b)))
	assert.InDeltaSlice(t, want, got, 1e-4)
	ints := rlCall(t, "einsum", core.Attrs{"equation": "ij,jk"}, core.FromSlice([]int64{1, 2, 3, 4}, core.Shape{2, 2}), core.FromSlice([]int64{1 << 40, 1, 0, 1}, core.Shape{2, 2}))
	assert.Equal(t, []int64{1 << 40, 3, 3 << 40, 7}, i64s(t, ints))
}

func TestEinsumGradients(t *testing.T) {
	trace := rlGrad(t, "einsum", core.Attrs{"equation": "ii"}, rlF64([]float64{1, 2, 3, 4}, 2, 2))
	assert.Equal(t, []float64{1, 0, 0, 1}, trace)
	// A label only one operand has is summed: its gradient is broadcast.
	a := rlF64([]float64{1, 2, 3, 4}, 2, 2).SetRequiresGrad(true)
	k := rlF64([]float64{1, 2, 3}, 3).SetRequiresGrad(true)
	y := rlCall(t, "sum", nil, rlCall(t, "einsum", core.Attrs{"equation": "ij,k->i"}, a, k))
	require.NoError(t, y.Backward())
	assert.Equal(t, []float64{6, 6, 6, 6}, f64s(t, a.Grad()))
	assert.Equal(t, []float64{10, 10, 10}, f64s(t, k.Grad()))
	// A broadcast size-1 dim gets the sum over the dim it stretched along.
	s := rlF64([]float64{1, 2}, 2, 1).SetRequiresGrad(true)
	w := rlF64([]float64{1, 2, 3, 4}, 2, 2)
	z := rlCall(t, "sum", nil, rlCall(t, "einsum", core.Attrs{"equation": "ij,ij->ij"}, s, w))
	require.NoError(t, z.Backward())
	assert.Equal(t, []float64{3, 7}, f64s(t, s.Grad()))
}

func TestEinsumErrors(t *testing.T) {
	m := core.Zeros(core.Shape{2, 3}, core.F32)
	sq := core.Zeros(core.Shape{3, 3}, core.F32)
	for eq, ins := range map[string][]*core.Tensor{
		"ij,jk->ik":       {m},
		"ij->ik":          {m},
		"ijk":             {m},
		"ii":              {m},
		"ij,ij->ij":       {m, sq},
		"ij->ii":          {m},
		"i$j":             {m},
		"...i...j":        {m},
		"ij,jk,kl,lm,mn":  {m, sq, sq, sq, sq},
		"ij,jk->ik->k":    {m, sq},
		"i...j->...ij...": {m},
	} {
		err := core.Call1("einsum", core.Attrs{"equation": eq}, ins...).Err()
		if assert.Error(t, err, eq) {
			assert.Contains(t, err.Error(), "einsum: ", eq)
		}
	}
	assert.Error(t, core.Call1("einsum", nil, m).Err(), "equation is required")
}
