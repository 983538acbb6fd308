package cpu_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The reading and calling helpers the op tests share (shape and index,
// reductions and linear algebra, nn, convolution and pooling): a tensor
// that carries an error fails the test where it is read, not later as
// wrong values.

// f64s returns x's elements as float64, failing t if x carries an error.
func f64s(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	require.NoError(t, x.Err())
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// i64s returns x's elements as int64, failing t if x carries an error.
func i64s(t *testing.T, x *core.Tensor) []int64 {
	t.Helper()
	require.NoError(t, x.Err())
	v, err := x.Int64s()
	require.NoError(t, err)
	return v
}

// callN runs op and returns all its outputs, failing t on an error.
func callN(t *testing.T, name string, a core.Attrs, in ...*core.Tensor) []*core.Tensor {
	t.Helper()
	outs, err := core.Call(name, in, a)
	require.NoError(t, err)
	return outs
}
