package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkOpAddSmall is wt_op("add") on two 8-element f32 tensors plus
// wt_tensor_free of the result: the Go half of an SDK's per-op overhead
// (docs/perf.md has the whole of it, measured from Python).
func BenchmarkOpAddSmall(b *testing.B) {
	x := mustTensor(b, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 8)
	y := mustTensor(b, []float32{8, 7, 6, 5, 4, 3, 2, 1}, 8)
	b.ReportAllocs()
	b.ResetTimer()
	require.Equal(b, int32(statusOK), opLoop("add", []int64{x, y}, b.N), lastError())
}
