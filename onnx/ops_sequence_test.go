package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// ONNX 1.23's node tests have no ConcatFromSequence or SequenceErase
// case and test no malformed use; these do.

// seqVI declares a sequence of tensors of elem; optional wraps it (or a
// tensor declaration) in an optional.
func seqVI(name string, elem pb.TensorProto_DataType) *pb.ValueInfoProto {
	t := vi(name, elem).GetType()
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_SequenceType{
		SequenceType: &pb.TypeProto_Sequence{ElemType: t}}}}
}

func optionalVI(inner *pb.ValueInfoProto) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: inner.Name, Type: &pb.TypeProto{Value: &pb.TypeProto_OptionalType{
		OptionalType: &pb.TypeProto_Optional{ElemType: inner.GetType()}}}}
}

// splitConcatModel splits x [2,3] into its 3 columns and puts them back
// together in every way the sequence operators allow.
func splitConcatModel() *pb.ModelProto {
	return modelProto([]*pb.NodeProto{
		nodeProto("SplitToSequence", "split", []string{"x"}, []string{"cols"}, intAttr("axis", 1)),
		nodeProto("ConcatFromSequence", "concat", []string{"cols"}, []string{"same"}, intAttr("axis", -1)),
		nodeProto("ConcatFromSequence", "stack", []string{"cols"}, []string{"stacked"}, intAttr("axis", 0), intAttr("new_axis", 1)),
		nodeProto("SequenceErase", "erase", []string{"cols"}, []string{"first_two"}),
		nodeProto("SequenceLength", "len", []string{"first_two"}, []string{"n"}),
		nodeProto("SequenceAt", "at", []string{"cols", "minus_one"}, []string{"last"}),
		nodeProto("SequenceInsert", "insert", []string{"first_two", "last", "zero"}, []string{"rotated"}),
		nodeProto("ConcatFromSequence", "concat_rotated", []string{"rotated"}, []string{"rot"}, intAttr("axis", 1)),
	}, []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2, 3)},
		[]*pb.ValueInfoProto{vi("same", pb.TensorProto_FLOAT), vi("stacked", pb.TensorProto_FLOAT), vi("n", pb.TensorProto_INT64),
			vi("last", pb.TensorProto_FLOAT), vi("rot", pb.TensorProto_FLOAT)},
		i64Scalar("minus_one", -1), i64Scalar("zero", 0))
}

func i64Scalar(name string, v int64) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: []int64{v}}
}

func TestSequenceOperatorsSplitAndConcatenate(t *testing.T) {
	devices := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devices = append(devices, webgputest.Device)
	}
	for _, dev := range devices {
		m, err := LoadBytes(marshal(splitConcatModel()), WithDevice(dev))
		require.NoError(t, err)
		x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3}, dev)
		out, err := m.Run(map[string]*core.Tensor{"x": x})
		require.NoError(t, err, dev)
		for name, want := range map[string]struct {
			shape core.Shape
			vals  []float64
		}{
			"same":    {core.Shape{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
			"stacked": {core.Shape{3, 2, 1}, []float64{1, 4, 2, 5, 3, 6}},
			"n":       {core.Shape{}, []float64{2}},
			"last":    {core.Shape{2, 1}, []float64{3, 6}},
			"rot":     {core.Shape{2, 3}, []float64{3, 1, 2, 6, 4, 5}},
		} {
			got := out[name]
			assert.Equal(t, want.shape, got.Shape(), "%s on %s", name, dev)
			v, err := got.Float64s()
			require.NoError(t, err)
			assert.Equal(t, want.vals, v, "%s on %s", name, dev)
		}
	}
}

func TestSequenceErrorsNameTheNodeAndValues(t *testing.T) {
	x := []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2, 3)}
	y := []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)}
	split := nodeProto("SplitToSequence", "split", []string{"x"}, []string{"cols"}, intAttr("axis", 1))
	cases := []struct {
		name  string
		nodes []*pb.NodeProto
		want  string
	}{
		{"position out of range", []*pb.NodeProto{split, nodeProto("SequenceAt", "at", []string{"cols", "five"}, []string{"y"})},
			`node "at" (SequenceAt): position 5 is out of range for a sequence of 3 tensors (valid: -3 to 2)`},
		{"position in an empty sequence", []*pb.NodeProto{nodeProto("SequenceEmpty", "empty", nil, []string{"none"}),
			nodeProto("SequenceAt", "at", []string{"none", "five"}, []string{"y"})},
			`node "at" (SequenceAt): position 5 names no tensor: the sequence "none" is empty`},
		{"a sequence for a position", []*pb.NodeProto{split, nodeProto("SequenceAt", "at", []string{"cols", "cols"}, []string{"y"})},
			`node "at" (SequenceAt): input 1 ("cols") is a sequence of 3 f32 tensors, want a tensor`},
		{"insert of another type", []*pb.NodeProto{split, nodeProto("SequenceInsert", "ins", []string{"cols", "five"}, []string{"s"}),
			nodeProto("ConcatFromSequence", "cat", []string{"s"}, []string{"y"}, intAttr("axis", 0))},
			`node "ins" (SequenceInsert): input 1 ("five") is INT64, the sequence holds FLOAT`},
		{"concatenating nothing", []*pb.NodeProto{nodeProto("SequenceEmpty", "empty", nil, []string{"none"}),
			nodeProto("ConcatFromSequence", "cat", []string{"none"}, []string{"y"}, intAttr("axis", 0))},
			`node "cat" (ConcatFromSequence): the sequence "none" is empty: there is nothing to concatenate`},
		{"erasing from nothing", []*pb.NodeProto{nodeProto("SequenceEmpty", "empty", nil, []string{"none"}),
			nodeProto("SequenceErase", "erase", []string{"none"}, []string{"s"}),
			nodeProto("SequenceAt", "at", []string{"s", "five"}, []string{"y"})},
			`node "erase" (SequenceErase): the sequence "none" is empty: there is no tensor to erase`},
		{"shapes that do not concatenate", []*pb.NodeProto{split, nodeProto("SequenceInsert", "ins", []string{"cols", "x"}, []string{"s"}),
			nodeProto("ConcatFromSequence", "cat", []string{"s"}, []string{"y"}, intAttr("axis", 0))},
			`node "cat" (ConcatFromSequence): tensor 3 of the sequence has shape [2 3] and tensor 0 [2 1]: they do not concatenate along axis 0`},
		{"mixed types", []*pb.NodeProto{nodeProto("SequenceConstruct", "make", []string{"x", "five"}, []string{"s"}),
			nodeProto("ConcatFromSequence", "cat", []string{"s"}, []string{"y"}, intAttr("axis", 0))},
			`node "make" (SequenceConstruct): input 1 ("five") is INT64, input 0 ("x") is FLOAT: a sequence's tensors share one element type`},
		{"split lengths", []*pb.NodeProto{nodeProto("SplitToSequence", "split", []string{"x", "lengths"}, []string{"s"}, intAttr("axis", 1)),
			nodeProto("SequenceAt", "at", []string{"s", "five"}, []string{"y"})},
			`node "split" (SplitToSequence): split (input 1): the lengths [1 1] add up to 2, not 3 (axis 1 of shape [2 3])`},
		{"a sequence where a tensor goes", []*pb.NodeProto{split, nodeProto("Relu", "relu", []string{"cols"}, []string{"y"})},
			`node "relu" (Relu): input 0 ("cols") is a sequence of 3 f32 tensors; Relu takes tensors`},
		{"a tensor where a sequence goes", []*pb.NodeProto{nodeProto("SequenceAt", "at", []string{"x", "five"}, []string{"y"})},
			`node "at" (SequenceAt): input 0 ("x") is a f32 tensor of shape [2 3], want a sequence of tensors`},
		{"an empty optional", []*pb.NodeProto{
			nodeProto("Optional", "none", nil, []string{"o"}, &pb.AttributeProto{Name: proto.String("type"),
				Type: pb.AttributeProto_TYPE_PROTO.Enum(), Tp: vi("t", pb.TensorProto_FLOAT).GetType()}),
			nodeProto("OptionalGetElement", "get", []string{"o"}, []string{"y"})},
			`node "get" (OptionalGetElement): input 0 ("o") is an empty optional (None): there is no element to get`},
	}
	lengths := &pb.TensorProto{Name: proto.String("lengths"), Dims: []int64{2}, DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: []int64{1, 1}}
	in := map[string]*core.Tensor{"x": core.FromSlice(make([]float32, 6), core.Shape{2, 3}, core.CPU)}
	for _, tc := range cases {
		m, err := loadCPU(t, modelProto(tc.nodes, x, y, i64Scalar("five", 5), lengths))
		require.NoError(t, err, tc.name)
		_, err = m.Run(in)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}

// sequenceIOModel takes and gives a sequence: y is the sequence s with x
// appended, h whether the optional o holds a value.
func sequenceIOModel() *pb.ModelProto {
	return modelProto([]*pb.NodeProto{
		nodeProto("SequenceInsert", "ins", []string{"s", "x"}, []string{"y"}),
		nodeProto("OptionalHasElement", "has", []string{"o"}, []string{"h"}),
	}, []*pb.ValueInfoProto{seqVI("s", pb.TensorProto_FLOAT), vi("x", pb.TensorProto_FLOAT, 2), optionalVI(vi("o", pb.TensorProto_FLOAT))},
		[]*pb.ValueInfoProto{seqVI("y", pb.TensorProto_FLOAT), vi("h", pb.TensorProto_BOOL)})
}

func TestSequenceInputsAndOutputsGoThroughRunValues(t *testing.T) {
	m, err := loadCPU(t, sequenceIOModel())
	require.NoError(t, err)
	assert.Equal(t, []Kind{KindSequence, KindTensor, KindOptionalTensor}, []Kind{m.Inputs[0].Kind, m.Inputs[1].Kind, m.Inputs[2].Kind})

	x := core.FromSlice([]float32{1, 2}, core.Shape{2}, core.CPU)
	_, err = m.Run(map[string]*core.Tensor{"x": x})
	assert.ErrorContains(t, err, `input "s" is a sequence of tensors, which Run, Call and onnx.run do not carry: use Model.RunValues (onnx.run_values through the C ABI's wt_call)`)

	out, err := m.RunValues(map[string]Value{"s": &Sequence{Tensors: []*core.Tensor{x}}, "x": x, "o": &Optional{}})
	require.NoError(t, err)
	y, ok := out["y"].(*Sequence)
	require.True(t, ok, "y is %s", describe(out["y"]))
	assert.Equal(t, core.F32, y.DType)
	assert.Len(t, y.Tensors, 2)
	h, err := out["h"].(*core.Tensor).Item()
	require.NoError(t, err)
	assert.Equal(t, 0.0, h)

	_, err = m.RunValues(map[string]Value{"s": x, "x": x, "o": &Optional{}})
	assert.ErrorContains(t, err, `input "s": the model declares a sequence of tensors, got a f32 tensor of shape [2]`)
	i64 := core.FromSlice([]int64{1, 2}, core.Shape{2}, core.CPU)
	_, err = m.RunValues(map[string]Value{"s": &Sequence{Tensors: []*core.Tensor{x, i64}}, "x": x, "o": &Optional{}})
	assert.ErrorContains(t, err, `input "s": tensor 1 of the sequence is i64, the sequence holds f32`)
	_, err = m.RunValues(map[string]Value{"s": &Sequence{}, "x": x, "o": &Optional{Value: &Sequence{}}})
	assert.ErrorContains(t, err, `input "o": the model declares an optional tensor, got an optional holding a sequence of 0`)
}

func TestLoadRefusesMapsAndNestedSequences(t *testing.T) {
	y := []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)}
	nested := seqVI("s", pb.TensorProto_FLOAT)
	nested.Type = &pb.TypeProto{Value: &pb.TypeProto_SequenceType{SequenceType: &pb.TypeProto_Sequence{ElemType: nested.GetType()}}}
	_, err := loadCPU(t, modelProto(nil, []*pb.ValueInfoProto{nested}, y, f32Tensor("y", []int64{1}, []float32{1})))
	assert.ErrorContains(t, err, `graph input "s": a sequence of sequence is not supported (only sequences of tensors)`)
	mapped := &pb.ValueInfoProto{Name: proto.String("m"), Type: &pb.TypeProto{Value: &pb.TypeProto_MapType{MapType: &pb.TypeProto_Map{}}}}
	_, err = loadCPU(t, modelProto(nil, []*pb.ValueInfoProto{mapped}, y, f32Tensor("y", []int64{1}, []float32{1})))
	assert.ErrorContains(t, err, `graph input "m": map values are not supported`)
}
