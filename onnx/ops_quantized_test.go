package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// runOne loads a model of one node (named "n1") whose inputs are graph
// inputs named after their positions (in0, in1, ...; "" for an absent
// one) and runs it on the CPU, returning its outputs or the error.
func runOne(t *testing.T, op string, attrs []*pb.AttributeProto, nout int, ins ...*core.Tensor) ([]*core.Tensor, error) {
	t.Helper()
	var names []string
	var inputs []*pb.ValueInfoProto
	var given []*core.Tensor
	for i, x := range ins {
		if x == nil {
			names = append(names, "")
			continue
		}
		name := "in" + string(rune('0'+i))
		names = append(names, name)
		inputs = append(inputs, vi(name, pb.TensorProto_DataType(naturalType(x.DType()))))
		given = append(given, x)
	}
	var outs []string
	var outInfo []*pb.ValueInfoProto
	for i := range nout {
		name := "out" + string(rune('0'+i))
		outs = append(outs, name)
		outInfo = append(outInfo, &pb.ValueInfoProto{Name: proto.String(name)})
	}
	m, err := loadCPU(t, modelProto([]*pb.NodeProto{nodeProto(op, "n1", names, outs, attrs...)}, inputs, outInfo))
	if err != nil {
		return nil, err
	}
	return m.Call(given)
}

func intAttribute(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// ConvInteger stays exact past the 2^24 where a single f32 convolution of
// 8-bit values would start rounding: 4608 taps of 255 * 255.
func TestConvIntegerIsExactForManyTaps(t *testing.T) {
	const ch = 512
	x := core.Full(core.Shape{1, ch, 3, 3}, 255, core.U8, core.CPU)
	w := core.Full(core.Shape{1, ch, 3, 3}, 255, core.U8, core.CPU)
	alternate := call("remainder", nil, call("arange", core.Attrs{"stop": float64(ch * 9), "dtype": core.I32}), core.Scalar(2, core.I32, core.CPU))
	w = call("sub", nil, w.Cast(core.I32), alternate.Reshape([]int{1, ch, 3, 3})).Cast(core.U8)
	out, err := runOne(t, "ConvInteger", nil, 1, x, w)
	require.NoError(t, err)
	got, err := out[0].Float64s()
	require.NoError(t, err)
	// Half the weights are 254: 255 * (2304*255 + 2304*254).
	assert.Equal(t, []float64{255 * (2304*255 + 2304*254)}, got)
	assert.Equal(t, core.I32, out[0].DType())
}

func TestQuantizedErrorsNameTheNode(t *testing.T) {
	f := core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{2, 2}, core.CPU)
	u := core.FromSlice([]uint8{1, 2, 3, 4}, core.Shape{2, 2}, core.CPU)
	s := core.Scalar(0.5, core.F32, core.CPU)
	_, err := runOne(t, "MatMulInteger", nil, 1, f, u)
	assert.ErrorContains(t, err, `node "n1" (MatMulInteger): A (input 0) is f32, want uint8 or int8`)
	_, err = runOne(t, "QLinearMatMul", nil, 1, u, s, nil, f, s, nil, s, nil)
	assert.ErrorContains(t, err, `node "n1" (QLinearMatMul): b (input 3) is f32, want uint8 or int8`)
	x := core.FromSlice([]uint8{1, 2, 3, 4}, core.Shape{1, 1, 2, 2}, core.CPU)
	_, err = runOne(t, "ConvInteger", []*pb.AttributeProto{intAttribute("group", 0)}, 1, x, x)
	assert.ErrorContains(t, err, `node "n1" (ConvInteger)`)
	_, err = runOne(t, "ConvInteger", nil, 1, x, x, u)
	assert.ErrorContains(t, err, `node "n1" (ConvInteger): x_zero_point has shape [2 2], want a single value (per-tensor)`)
	_, err = runOne(t, "QLinearConv", nil, 1, x, s, nil, x, s, nil, s, nil, core.FromSlice([]float32{1}, core.Shape{1}, core.CPU))
	assert.ErrorContains(t, err, `node "n1" (QLinearConv): B (input 8) is f32, want int32`)
}

// A per-row a_zero_point (one per row of a) and per-column b_zero_point.
func TestMatMulIntegerPerRowZeroPoints(t *testing.T) {
	a := core.FromSlice([]uint8{10, 11, 20, 22}, core.Shape{2, 2}, core.CPU)
	b := core.FromSlice([]uint8{1, 2, 3, 4}, core.Shape{2, 2}, core.CPU)
	za := core.FromSlice([]uint8{10, 20}, core.Shape{2}, core.CPU)
	zb := core.FromSlice([]uint8{1, 0}, core.Shape{2}, core.CPU)
	out, err := runOne(t, "MatMulInteger", nil, 1, a, b, za, zb)
	require.NoError(t, err)
	got, _ := out[0].Float64s()
	// (a - za) = [[0 1] [0 2]], (b - zb) = [[0 2] [2 4]].
	assert.Equal(t, []float64{2, 4, 4, 8}, got)
}
