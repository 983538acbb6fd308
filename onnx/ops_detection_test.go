package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

func strAttribute(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// Without max_output_boxes_per_class nothing is selected: a [0, 3] result.
func TestNonMaxSuppressionSelectsNothingByDefault(t *testing.T) {
	boxes := core.FromSlice([]float32{0, 0, 1, 1}, core.Shape{1, 1, 4}, core.CPU)
	scores := core.FromSlice([]float32{0.9}, core.Shape{1, 1, 1}, core.CPU)
	out, err := runOne(t, "NonMaxSuppression", nil, 1, boxes, scores)
	require.NoError(t, err)
	assert.Equal(t, core.Shape{0, 3}, out[0].Shape())
	assert.Equal(t, core.I64, out[0].DType())
}

func TestDetectionAndVisionErrorsNameTheNode(t *testing.T) {
	f := func(shape core.Shape) *core.Tensor { return core.Zeros(shape, core.F32, core.CPU) }
	i64 := func(v ...int64) *core.Tensor { return core.FromSlice(v, core.Shape{len(v)}, core.CPU) }
	cases := []struct {
		name  string
		op    string
		attrs []*pb.AttributeProto
		ins   []*core.Tensor
		want  string
	}{
		{"nms shapes", "NonMaxSuppression", nil, []*core.Tensor{f(core.Shape{1, 2, 4}), f(core.Shape{1, 1, 3})},
			`node "n1" (NonMaxSuppression): boxes have shape [1 2 4] and scores [1 1 3]`},
		{"nms box format", "NonMaxSuppression", []*pb.AttributeProto{intAttribute("center_point_box", 2)},
			[]*core.Tensor{f(core.Shape{1, 1, 4}), f(core.Shape{1, 1, 1})}, `center_point_box 2 is not 0 or 1`},
		{"roi mode", "RoiAlign", []*pb.AttributeProto{strAttribute("mode", "min")},
			[]*core.Tensor{f(core.Shape{1, 1, 4, 4}), f(core.Shape{1, 4}), i64(0)}, `node "n1" (RoiAlign): mode "min" is not avg or max`},
		{"roi batch index", "RoiAlign", nil,
			[]*core.Tensor{f(core.Shape{1, 1, 4, 4}), f(core.Shape{1, 4}), i64(1)}, `node "n1" (RoiAlign): batch_indices[0] is 1, outside [0, 1)`},
		{"affine theta", "AffineGrid", nil, []*core.Tensor{f(core.Shape{1, 3, 3}), i64(1, 1, 2, 2)},
			`node "n1" (AffineGrid): theta has shape [1 3 3] and size is [1 1 2 2]`},
		{"col2im blocks", "Col2Im", nil, []*core.Tensor{f(core.Shape{1, 4, 5}), i64(3, 3), i64(2, 2)},
			`node "n1" (Col2Im): input has shape [1 4 5]: want dim 1 a multiple of 4 (the block's size) and dim 2 4`},
		{"unpool output_shape", "MaxUnpool", []*pb.AttributeProto{{Name: proto.String("kernel_shape"), Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{2, 2}}},
			[]*core.Tensor{f(core.Shape{1, 1, 2, 2}), core.Zeros(core.Shape{1, 1, 2, 2}, core.I64, core.CPU), i64(1, 1, 2, 2)},
			`node "n1" (MaxUnpool): output_shape [1 1 2 2] is smaller than the unpooled shape [1 1 3 3]`},
	}
	for _, tc := range cases {
		_, err := runOne(t, tc.op, tc.attrs, 1, tc.ins...)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}

// RoiAlign's regions may ask for different sample grids (sampling_ratio
// 0): a small region averages fewer samples than a large one.
func TestRoiAlignMixesSampleGrids(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, core.Shape{1, 1, 4, 4}, core.CPU)
	rois := core.FromSlice([]float32{0, 0, 4, 4, 1, 1, 2, 2}, core.Shape{2, 4}, core.CPU)
	batch := core.FromSlice([]int64{0, 0}, core.Shape{2}, core.CPU)
	out, err := runOne(t, "RoiAlign", nil, 1, x, rois, batch)
	require.NoError(t, err)
	got, err := out[0].Float64s()
	require.NoError(t, err)
	// The whole map averages to 8.5; the unit square at (1, 1) in
	// half-pixel coordinates is centred on the pixel holding 6.
	assert.InDeltaSlice(t, []float64{8.5, 6}, got, 1e-5)
}
