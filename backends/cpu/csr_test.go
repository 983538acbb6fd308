package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// randomCSR is a rows x cols pattern with about deg entries per row, some
// rows empty, columns repeated and unsorted, and f32 values.
func randomCSR(rng *rand.Rand, rows, cols, deg int) (indptr, indices, values *core.Tensor) {
	ptr := []int64{0}
	var idx []int64
	var val []float32
	for range rows {
		for range rng.IntN(2 * deg) {
			idx = append(idx, rng.Int64N(int64(cols)))
			val = append(val, float32(rng.NormFloat64()))
		}
		ptr = append(ptr, int64(len(idx)))
	}
	return core.FromSlice(ptr, core.Shape{len(ptr)}), core.FromSlice(idx, core.Shape{len(idx)}), core.FromSlice(val, core.Shape{len(val)})
}

func randomF32(rng *rand.Rand, shape ...int) *core.Tensor {
	v := make([]float32, core.Shape(shape).Numel())
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return core.FromSlice(v, core.Shape(shape))
}

type spmmFuser interface {
	SpmmBias(indptr, indices, values, dense, bias *core.Tensor) (*core.Tensor, bool, error)
	SpmmLinear(indptr, indices, values, x, w, bias, root, wRoot *core.Tensor) (*core.Tensor, bool, error)
}

func cpuFuser(t *testing.T) spmmFuser {
	b, err := core.BackendFor(core.CPU)
	require.NoError(t, err)
	f, ok := b.(spmmFuser)
	require.True(t, ok, "the CPU backend has SpmmBias and SpmmLinear")
	return f
}

// SpmmBias adds the bias in spmm's store loop: the same values, bit for
// bit, as spmm followed by add.
func TestSpmmBiasEqualsSpmmThenAdd(t *testing.T) {
	f := cpuFuser(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range [][3]int{{1, 1, 1}, {7, 5, 2}, {300, 200, 6}, {2000, 1500, 4}} {
		ptr, idx, vals := randomCSR(rng, size[0], size[1], size[2])
		for _, n := range []int{1, 3, 64} {
			dense, bias := randomF32(rng, size[1], n), randomF32(rng, n)
			got, ok, err := f.SpmmBias(ptr, idx, vals, dense, bias)
			require.NoError(t, err)
			require.True(t, ok)
			want := core.Call1("add", nil, core.Call1("spmm", nil, ptr, idx, vals, dense), bias)
			assert.Equal(t, want.Shape(), got.Shape())
			wv, _ := want.Float32s()
			gv, _ := got.Float32s()
			assert.Equal(t, wv, gv, "%v x %d", size, n)
		}
	}
	// Not f32, or shapes it does not take: not fused (ok false), no error;
	// the caller's plain op calls report what is wrong.
	ptr, idx, vals := randomCSR(rng, 4, 3, 2)
	dense := randomF32(rng, 3, 2)
	_, ok, err := f.SpmmBias(ptr, idx, core.Call1("cast", core.Attrs{"dtype": core.F64}, vals), dense, randomF32(rng, 2))
	assert.False(t, ok)
	assert.NoError(t, err)
	_, ok, _ = f.SpmmBias(ptr, idx, vals, dense, randomF32(rng, 3))
	assert.False(t, ok)
	// A bad structure is an error, as spmm's.
	_, _, err = f.SpmmBias(ptr, idx, vals, randomF32(rng, 1, 2), randomF32(rng, 2))
	assert.ErrorContains(t, err, "is outside [0, 1)")
}

// SpmmLinear aggregates blocks of rows and maps each through the linear
// map while in cache, then adds the bias and the root term: the values of
// spmm, matmul with wᵀ and the adds, up to the products' rounding.
func TestSpmmLinearEqualsItsOps(t *testing.T) {
	f := cpuFuser(t)
	rng := rand.New(rand.NewPCG(9, 10))
	tr := func(w *core.Tensor) *core.Tensor { return core.Call1("transpose", nil, w) }
	for _, size := range [][3]int{{1, 1, 1}, {7, 5, 2}, {257, 300, 6}, {1000, 800, 4}} {
		ptr, idx, vals := randomCSR(rng, size[0], size[1], size[2])
		for _, io := range [][2]int{{3, 5}, {64, 64}, {16, 2}} {
			x, w, bias := randomF32(rng, size[1], io[0]), randomF32(rng, io[1], io[0]), randomF32(rng, io[1])
			root, wRoot := randomF32(rng, size[0], 7), randomF32(rng, io[1], 7)
			for _, terms := range [][3]*core.Tensor{{bias, root, wRoot}, {nil, nil, nil}, {bias, nil, nil}, {nil, root, wRoot}} {
				got, ok, err := f.SpmmLinear(ptr, idx, vals, x, w, terms[0], terms[1], terms[2])
				require.NoError(t, err)
				require.True(t, ok)
				want := core.Call1("matmul", nil, core.Call1("spmm", nil, ptr, idx, vals, x), tr(w))
				if terms[0] != nil {
					want = core.Call1("add", nil, want, terms[0])
				}
				if terms[1] != nil {
					want = core.Call1("add", nil, want, core.Call1("matmul", nil, terms[1], tr(terms[2])))
				}
				require.Equal(t, want.Shape(), got.Shape())
				wv, _ := want.Float64s()
				gv, _ := got.Float64s()
				for i := range wv {
					require.InDelta(t, wv[i], gv[i], 1e-5*(1+math.Abs(wv[i])), "%v %v at %d", size, io, i)
				}
			}
		}
	}
	ptr, idx, vals := randomCSR(rng, 4, 3, 2)
	x := randomF32(rng, 3, 2)
	_, ok, err := f.SpmmLinear(ptr, idx, vals, x, randomF32(rng, 5, 3), nil, nil, nil)
	assert.False(t, ok, "w [5, 3] does not take 2 features")
	assert.NoError(t, err)
	_, ok, _ = f.SpmmLinear(ptr, idx, vals, x, randomF32(rng, 5, 2), nil, randomF32(rng, 3, 2), randomF32(rng, 5, 2))
	assert.False(t, ok, "a root term of 3 rows for 4")
	_, ok, _ = f.SpmmLinear(ptr, idx, vals, x, randomF32(rng, 5, 2), nil, randomF32(rng, 4, 2), nil)
	assert.False(t, ok, "a root term without its weight")
}

// The products remember a checked structure and its grouping by column
// per (indptr, indices): calls on the same tensors, and on fresh copies of
// them, agree, and a structure that failed its check is checked again.
func TestCSRProductsReuseTheirStructure(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ptr, idx, vals := randomCSR(rng, 500, 400, 5)
	grad := randomF32(rng, 500, 8)
	first := core.Call1("_spmm_transposed", core.Attrs{"cols": 400}, ptr, idx, vals, grad)
	again := core.Call1("_spmm_transposed", core.Attrs{"cols": 400}, ptr, idx, vals, grad)
	fresh := core.Call1("_spmm_transposed", core.Attrs{"cols": 400}, copyI64(t, ptr), copyI64(t, idx), vals, grad)
	for _, x := range []*core.Tensor{first, again, fresh} {
		require.NoError(t, x.Err())
	}
	a, _ := first.Float32s()
	b, _ := again.Float32s()
	c, _ := fresh.Float32s()
	assert.Equal(t, a, b)
	assert.Equal(t, a, c)

	bad := core.FromSlice([]int64{0, 1}, core.Shape{2})
	col := core.FromSlice([]int64{5}, core.Shape{1})
	one := core.FromSlice([]float32{1}, core.Shape{1})
	for range 2 {
		out := core.Call1("spmm", nil, bad, col, one, randomF32(rng, 3, 2))
		assert.ErrorContains(t, out.Err(), "indices[0] = 5 is outside [0, 3)")
	}
	assert.NoError(t, core.Call1("spmm", nil, bad, col, one, randomF32(rng, 6, 2)).Err())
}

func copyI64(t *testing.T, x *core.Tensor) *core.Tensor {
	v, err := x.Int64s()
	require.NoError(t, err)
	return core.FromSlice(v, x.Shape())
}
