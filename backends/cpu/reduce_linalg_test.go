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

func rlValues(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	require.NoError(t, x.Err())
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

func rlInts(t *testing.T, x *core.Tensor) []int64 {
	t.Helper()
	require.NoError(t, x.Err())
	v, err := x.Int64s()
	require.NoError(t, err)
	return v
}

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
	// edges, and matrix-vector shapes.
	for _, dims := range [][3]int{{37, 300, 45}, {130, 70, 9}, {1, 513, 17}, {65, 257, 1}, {3, 5, 1030}} {
		m, k, n := dims[0], dims[1], dims[2]
		a, b := rlRandF32(rng, m, k), rlRandF32(rng, k, n)
		want := rlNaiveMatmul(rlValues(t, a), rlValues(t, b), m, k, n)
		// Store the transposes densely, then view them back: gemm then
		// reads the operands with trans flags set.
		at := rlCall(t, "transpose", nil, rlCall(t, "contiguous", nil, rlCall(t, "transpose", nil, a)))
		bt := rlCall(t, "transpose", nil, rlCall(t, "contiguous", nil, rlCall(t, "transpose", nil, b)))
		require.False(t, at.IsContiguous() && m > 1 && k > 1)
		for name, pair := range map[string][2]*core.Tensor{"nn": {a, b}, "tn": {at, b}, "nt": {a, bt}, "tt": {at, bt}} {
			got := rlValues(t, rlCall(t, "matmul", nil, pair[0], pair[1]))
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
	assert.Equal(t, []float64{4, 5, 5, 7, 10, 11, 14, 16}, rlValues(t, y))

	v := core.FromSlice([]float64{1, 2, 3}, core.Shape{3})
	m := core.FromSlice([]float64{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	assert.Equal(t, []float64{14, 32}, rlValues(t, rlCall(t, "matmul", nil, m, v)))
	dot := rlCall(t, "matmul", nil, v, v)
	assert.Equal(t, core.Shape{}, dot.Shape())
	assert.Equal(t, []float64{14}, rlValues(t, dot))

	ints := core.FromSlice([]int32{1, 2, 3, 4}, core.Shape{2, 2})
	sq := rlCall(t, "matmul", nil, ints, ints)
	assert.Equal(t, core.I32, sq.DType())
	assert.Equal(t, []int64{7, 10, 15, 22}, rlInts(t, sq))

	empty := rlCall(t, "matmul", nil, core.Zeros(core.Shape{2, 0}, core.F32), core.Zeros(core.Shape{0, 3}, core.F32))
	assert.Equal(t, []float64{0, 0, 0, 0, 0, 0}, rlValues(t, empty))
}

func TestMatmulManySmallBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := rlRandF32(rng, 40, 7, 5), rlRandF32(rng, 5, 6)
	got := rlValues(t, rlCall(t, "matmul", nil, a, b))
	av, bv := rlValues(t, a), rlValues(t, b)
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
	assert.Equal(t, []float64{1, -1, 2, 1, -1, 2}, rlValues(t, a.Grad()))
	assert.Equal(t, []float64{5, 7, 9}, rlValues(t, v.Grad()))

	x := core.FromSlice([]float64{1, 2, 3, 4}, core.Shape{2, 1, 2}).SetRequiresGrad(true)
	w := core.FromSlice([]float64{1, 0, 2, 1}, core.Shape{2, 2}).SetRequiresGrad(true)
	z := rlCall(t, "sum", nil, rlCall(t, "matmul", nil, x, w))
	require.NoError(t, z.Backward())
	assert.Equal(t, []float64{1, 3, 1, 3}, rlValues(t, x.Grad()))
	// w is shared by both batches: its gradient sums them.
	assert.Equal(t, []float64{4, 4, 6, 6}, rlValues(t, w.Grad()))
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
