package onnx

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// FuzzLoad feeds arbitrary bytes to LoadBytes: malformed, truncated or
// hostile models (huge dims, cycles, missing inputs, bad external data)
// must give an error, never a panic, a hang or a huge allocation. The
// seeds are valid models and a few broken ones, so mutations explore
// both the protobuf decoder and the importer's checks.
func FuzzLoad(f *testing.F) {
	mlp := marshal(mlpModel())
	f.Add(mlp)
	f.Add(mlp[:len(mlp)/2])
	f.Add(marshal(externalModel("w.bin")))
	f.Add(marshal(externalModel("../../etc/passwd")))
	f.Add(marshal(modelProto([]*pb.NodeProto{
		nodeProto("Add", "p", []string{"x", "q_out"}, []string{"p_out"}),
		nodeProto("Relu", "q", []string{"p_out"}, []string{"q_out"})},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2)}, []*pb.ValueInfoProto{vi("q_out", pb.TensorProto_FLOAT, 2)})))
	f.Add(marshal(modelProto(nil, nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)},
		&pb.TensorProto{Name: proto.String("y"), Dims: []int64{1 << 30, 1 << 30, 1 << 30}, DataType: proto.Int32(1)})))
	// Within the element cap but with no data: refused before any memory
	// is sized by the dims (it once allocated 4 GiB first).
	f.Add(marshal(modelProto(nil, nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)},
		&pb.TensorProto{Name: proto.String("y"), Dims: []int64{1 << 15, 1 << 15}, DataType: proto.Int32(1)})))
	f.Add(marshal(modelProto([]*pb.NodeProto{nodeProto("Constant", "c", nil, []string{"y"},
		&pb.AttributeProto{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(),
			T: &pb.TensorProto{Dims: []int64{3}, DataType: proto.Int32(7), Int64Data: []int64{1, 2}}})},
		nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_INT64, 3)})))
	// Narrow types: a packed INT4 initializer one byte short of its dims,
	// and a FLOAT8 input cast to UINT4 (decoding and the type plumbing).
	f.Add(marshal(modelProto(nil, nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_INT4)},
		&pb.TensorProto{Name: proto.String("y"), Dims: []int64{5}, DataType: proto.Int32(int32(pb.TensorProto_INT4)), RawData: []byte{0x8F, 0x71}})))
	f.Add(marshal(modelProto([]*pb.NodeProto{nodeProto("Cast", "c", []string{"x"}, []string{"y"}, intAttr("to", int64(pb.TensorProto_UINT4)))},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT8E5M2, 2)}, []*pb.ValueInfoProto{vi("y", pb.TensorProto_UINT4, 2)})))
	// Control flow with bodies that take inputs (Loop, Scan) and a
	// recurrent layer.
	f.Add(marshal(loopModel("M", "cond")))
	f.Add(marshal(loopModel("", "")))
	f.Add(marshal(modelProto([]*pb.NodeProto{nodeProto("LSTM", "l", []string{"x", "w", "r"}, []string{"y"}, intAttr("hidden_size", 1))},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2, 1, 1)}, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)},
		f32Tensor("w", []int64{1, 4, 1}, make([]float32, 4)), f32Tensor("r", []int64{1, 4, 1}, make([]float32, 4)))))
	// Sequences and optionals: the operators, and graph inputs and outputs
	// of those types.
	f.Add(marshal(splitConcatModel()))
	f.Add(marshal(sequenceIOModel()))
	// String tensors: the string operators, LabelEncoder, control flow
	// carrying strings, and STRING initializers whose string_data does not
	// match their dims or that hold raw data.
	f.Add(marshal(withMLDomain(textModel())))
	f.Add(marshal(loopStringsModel()))
	f.Add(marshal(modelProto(nil, nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_STRING)}, stringTensor("y", []int64{1 << 20, 1 << 20}, "a"))))
	raw := stringTensor("y", []int64{1})
	raw.RawData = []byte("a")
	f.Add(marshal(modelProto(nil, nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_STRING)}, raw)))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := LoadBytes(data, WithDevice(core.CPU), WithDir(dir))
		if err == nil && m == nil {
			t.Fatal("LoadBytes returned neither a model nor an error")
		}
		// Adopted, the weights move within the bytes (alignInPlace): the
		// same verdict, on a copy that is the model's.
		adopted, aerr := LoadBytes(append([]byte{}, data...), WithDevice(core.CPU), WithDir(dir), AdoptBytes())
		if (err == nil) != (aerr == nil) || (aerr == nil && adopted == nil) {
			t.Fatalf("LoadBytes: %v; with AdoptBytes: %v", err, aerr)
		}
	})
}
