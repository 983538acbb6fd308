package core_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// collected reports whether the GC frees what the cleanup was set on
// within a few collections.
func collected(freed chan struct{}) bool {
	for range 20 {
		runtime.GC()
		select {
		case <-freed:
			return true
		case <-time.After(5 * time.Millisecond): // cleanups run on their own goroutine
		}
	}
	return false
}

func values(t *testing.T, x *core.Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	require.NoError(t, err)
	return v
}

// A tensor's shape and strides live in its own allocation (newHeader), so a
// detached view that shared them would keep the original tensor, its
// autograd graph and storage, alive. Detach must copy them.
func TestDetachDoesNotKeepTheOriginal(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3}).SetRequiresGrad(true)
	y := core.Call1("mul", nil, x, x)
	require.NoError(t, y.Err())
	freed := make(chan struct{})
	runtime.AddCleanup(y, func(c chan struct{}) { close(c) }, freed)
	d := y.Detach()
	y = nil
	assert.True(t, collected(freed), "the detached tensor keeps the original alive")
	assert.Equal(t, []float32{1, 4, 9, 16, 25, 36}, values(t, d))
	assert.Equal(t, core.Shape{2, 3}, d.Shape())
	assert.Equal(t, []int{3, 1}, d.Strides())
}

// Every rank gets a header with its dims: the inline sizes (ranks up to 2
// and up to 4) and the separate dims above; op outputs through the shared
// inference rules computed in the kernel call (InferBroadcast up to rank
// four, InferSame, InferBroadcastBool) and views.
func TestHeadersOfEveryRank(t *testing.T) {
	row := core.FromSlice([]float32{10, 20}, core.Shape{2})
	for rank := 1; rank <= 6; rank++ {
		shape := make(core.Shape, rank)
		for i := range shape {
			shape[i] = 2
		}
		x := core.Call1("arange", core.Attrs{"stop": shape.Numel(), "dtype": core.F32}).Reshape(shape)
		require.NoError(t, x.Err(), "rank %d", rank)
		assert.Equal(t, shape, x.Shape(), "rank %d", rank)
		assert.Equal(t, core.ContiguousStrides(shape), x.Strides(), "rank %d", rank)

		y := core.Call1("neg", nil, x.Add(row))
		gt := core.Call1("gt", nil, x, core.FromSlice([]float32{0.5, 2.5}, core.Shape{2}))
		require.NoError(t, y.Err(), "rank %d", rank)
		require.NoError(t, gt.Err(), "rank %d", rank)
		assert.Equal(t, shape, y.Shape(), "rank %d", rank)
		assert.Equal(t, shape, gt.Shape(), "rank %d", rank)
		assert.Equal(t, core.Bool, gt.DType(), "rank %d", rank)
		got, flags := values(t, y), values(t, gt.Cast(core.F32))
		for i, v := range values(t, x) {
			add, bound := float32(10), float32(0.5)
			if i%2 == 1 {
				add, bound = 20, 2.5
			}
			assert.Equal(t, -(v + add), got[i], "rank %d element %d", rank, i)
			assert.Equal(t, v > bound, flags[i] == 1, "rank %d element %d", rank, i)
		}
		if rank >= 2 {
			tr := core.Call1("transpose", core.Attrs{"dim0": 0, "dim1": rank - 1}, x)
			require.NoError(t, tr.Err())
			st, want := tr.Strides(), core.ContiguousStrides(shape)
			assert.Equal(t, want[rank-1], st[0], "rank %d", rank)
			assert.Equal(t, want[0], st[rank-1], "rank %d", rank)
		}
	}
	s := core.Call1("neg", nil, core.FromSlice([]float32{3}, core.Shape{})) // rank 0
	require.NoError(t, s.Err())
	assert.Equal(t, core.Shape{}, s.Shape())
	assert.Equal(t, []float32{-3}, values(t, s))
}

// A broadcast that fails says so, whether it is inferred in place (rank up
// to four) or not.
func TestBroadcastErrorsOfEveryRank(t *testing.T) {
	for _, shape := range []core.Shape{{3}, {2, 3}, {1, 2, 1, 2, 3}} {
		x := core.Zeros(shape, core.F32)
		y := core.Zeros(core.Shape{4}, core.F32)
		for _, op := range []string{"add", "lt"} {
			err := core.Call1(op, nil, x, y).Err()
			require.Error(t, err, "%v %s [4]", shape, op)
			assert.Contains(t, err.Error(), "broadcast", "%v %s [4]", shape, op)
		}
	}
}

// A real value stored in a complex dtype is v + 0i. PutF64 and PutI64 used
// to hand complex dtypes to each other until the stack overflowed (a fatal
// error no recover catches): FromFloat64s and Scalar of c64 crashed the
// process.
func TestRealValuesInComplexDTypes(t *testing.T) {
	for _, d := range []core.DType{core.C64, core.C128} {
		x := core.FromFloat64s(d, core.Shape{3}, []float64{1.5, -2, 0.25})
		require.NoError(t, x.Err(), "%v", d)
		assert.Equal(t, d, x.DType())
		re, err := core.Call1("real", nil, x).Float64s()
		require.NoError(t, err)
		im, err := core.Call1("imag", nil, x).Float64s()
		require.NoError(t, err)
		assert.Equal(t, []float64{1.5, -2, 0.25}, re, "%v", d)
		assert.Equal(t, []float64{0, 0, 0}, im, "%v", d)
		s, err := core.Call1("real", nil, core.Scalar(3, d)).Float64s()
		require.NoError(t, err)
		assert.Equal(t, []float64{3}, s, "%v", d)
	}
}
