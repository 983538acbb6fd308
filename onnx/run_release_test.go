package onnx

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// A run releases intermediates at their last use (run_release.go) but
// never a storage a live value, an initializer or an input still uses:
// views of an input, of an initializer and of an intermediate, an output
// that is a view of a dying value, and an initializer passed through
// Identity, over two runs (a released initializer would fail the second).
func TestRunReleasesOnlyWhatNothingUses(t *testing.T) {
	shape := func(name string, dims ...int64) *pb.TensorProto { return i64Tensor(name, dims...) }
	mp := modelProto([]*pb.NodeProto{
		nodeProto("Reshape", "view_of_input", []string{"x", "s32"}, []string{"xv"}),
		nodeProto("Relu", "relu", []string{"xv"}, []string{"r"}),
		nodeProto("Reshape", "view_of_r", []string{"r", "s6"}, []string{"rv"}),
		nodeProto("Neg", "neg", []string{"rv"}, []string{"n"}),
		nodeProto("Reshape", "out_view", []string{"n", "s23"}, []string{"y"}),
		nodeProto("Identity", "same_init", []string{"w"}, []string{"wi"}),
		nodeProto("Reshape", "view_of_init", []string{"wi", "s6"}, []string{"wv"}),
		nodeProto("Mul", "square", []string{"wv", "wv"}, []string{"sq"}),
		nodeProto("Reshape", "back", []string{"sq", "s23"}, []string{"sq2"}),
		nodeProto("Add", "sum", []string{"x", "sq2"}, []string{"z"}),
	},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2, 3)},
		[]*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT, 2, 3), vi("z", pb.TensorProto_FLOAT, 2, 3)},
		f32Tensor("w", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}),
		shape("s32", 3, 2), shape("s6", 6), shape("s23", 2, 3))
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	xs := []float32{-1, 2, -3, 4, -5, 6}
	for run := range 2 {
		x := core.FromSlice(xs, core.Shape{2, 3}, core.CPU)
		out, err := m.Run(map[string]*core.Tensor{"x": x})
		require.NoError(t, err, "run %d", run)
		y, err := out["y"].Float32s()
		require.NoError(t, err, "run %d", run)
		require.Equal(t, []float32{0, -2, 0, -4, 0, -6}, y, "run %d", run)
		z, err := out["z"].Float32s()
		require.NoError(t, err, "run %d", run)
		require.Equal(t, []float32{0, 6, 6, 20, 20, 42}, z, "run %d", run)
		got, err := x.Float32s()
		require.NoError(t, err, "the caller's input survives run %d", run)
		require.Equal(t, xs, got)
	}
}
