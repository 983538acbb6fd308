package onnx

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/proto"

	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Helpers that write small ModelProtos for the tests and the fuzzer's
// seeds (ONNX's own node tests are read from files instead).

// referenceCase is one model of a testdata cases file that a test-only
// script wrote from a reference implementation, with its inputs and the
// outputs the reference gave, as values of the file's JSON form V.
type referenceCase[V any] struct {
	Name    string       `json:"name"`
	Note    string       `json:"note"`
	Source  string       `json:"source"`
	Model   string       `json:"model"` // base64 of the model, where it is inline
	File    string       `json:"file"`  // the model's file, where it is not
	Inputs  map[string]V `json:"inputs"`
	Outputs map[string]V `json:"outputs"`
}

// valueInfo declares a tensor; each dim is an int (fixed) or a string
// (symbolic).
func vi(name string, elem pb.TensorProto_DataType, dims ...any) *pb.ValueInfoProto {
	shape := &pb.TensorShapeProto{}
	for _, d := range dims {
		dim := &pb.TensorShapeProto_Dimension{}
		switch v := d.(type) {
		case int:
			dim.Value = &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}
		case string:
			dim.Value = &pb.TensorShapeProto_Dimension_DimParam{DimParam: v}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: shape}}}}
}

func nodeProto(op, name string, inputs, outputs []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: inputs, Output: outputs, Attribute: attrs}
}

// f32Tensor is an initializer with raw little-endian data.
func f32Tensor(name string, dims []int64, vals []float32) *pb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), RawData: raw}
}

func i64Tensor(name string, vals ...int64) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(vals))},
		DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: vals}
}

func modelProto(nodes []*pb.NodeProto, inputs, outputs []*pb.ValueInfoProto, inits ...*pb.TensorProto) *pb.ModelProto {
	return &pb.ModelProto{
		IrVersion:   proto.Int64(9),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(21)}},
		Graph: &pb.GraphProto{Name: proto.String("test"), Node: nodes, Input: inputs, Output: outputs,
			Initializer: inits},
	}
}

func marshal(m *pb.ModelProto) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// mlpModel is y = relu(x @ w + b) reshaped to [batch*2], with the
// reshape's shape computed from the input by Shape, Gather and Concat (the
// shape arithmetic exporters write for dynamic batch sizes).
func mlpModel() *pb.ModelProto {
	nodes := []*pb.NodeProto{
		nodeProto("MatMul", "mm", []string{"x", "w"}, []string{"h"}),
		nodeProto("Add", "bias", []string{"h", "b"}, []string{"hb"}),
		nodeProto("Relu", "act", []string{"hb"}, []string{"r"}),
		nodeProto("Shape", "shape", []string{"x"}, []string{"s"}),
		nodeProto("Gather", "batch", []string{"s", "zero"}, []string{"n"}, intAttr("axis", 0)),
		nodeProto("Mul", "double", []string{"n", "two"}, []string{"n2"}),
		nodeProto("Unsqueeze", "as1d", []string{"n2", "axes0"}, []string{"n2v"}),
		nodeProto("Reshape", "flat", []string{"r", "n2v"}, []string{"y"}),
	}
	inits := []*pb.TensorProto{
		f32Tensor("w", []int64{3, 2}, []float32{1, -1, 0.5, 2, -0.25, 1}),
		f32Tensor("b", []int64{2}, []float32{0.1, -0.2}),
		{Name: proto.String("zero"), DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: []int64{0}},
		{Name: proto.String("two"), DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: []int64{2}},
		i64Tensor("axes0", 0),
	}
	return modelProto(nodes, []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, "batch", 3)},
		[]*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT, "batch2")}, inits...)
}
