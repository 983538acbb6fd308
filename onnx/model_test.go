package onnx

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

func loadCPU(t *testing.T, m *pb.ModelProto, opts ...Option) (*Model, error) {
	t.Helper()
	return LoadBytes(marshal(m), append([]Option{WithDevice(core.CPU)}, opts...)...)
}

// mlpReference is mlpModel computed by hand.
func mlpReference(x []float32, batch int) []float32 {
	w := []float32{1, -1, 0.5, 2, -0.25, 1}
	b := []float32{0.1, -0.2}
	out := make([]float32, 0, 2*batch)
	for i := range batch {
		for j := range 2 {
			s := b[j]
			for k := range 3 {
				s += x[3*i+k] * w[2*k+j]
			}
			out = append(out, max(s, 0))
		}
	}
	return out
}

func TestRunBindsSymbolicDims(t *testing.T) {
	m, err := loadCPU(t, mlpModel())
	require.NoError(t, err)
	assert.Equal(t, []Dim{{Size: -1, Param: "batch"}, {Size: 3}}, m.Inputs[0].Dims)
	for _, batch := range []int{1, 4} {
		x := make([]float32, 3*batch)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		out, err := m.Run(map[string]*core.Tensor{"x": core.FromSlice(x, core.Shape{batch, 3}, core.CPU)})
		require.NoError(t, err)
		got, err := out["y"].Float32s()
		require.NoError(t, err)
		assert.InDeltaSlice(t, mlpReference(x, batch), got, 1e-6, "batch %d", batch)
	}
	_, err = m.Run(map[string]*core.Tensor{"x": core.FromSlice(make([]float32, 8), core.Shape{2, 4}, core.CPU)})
	assert.ErrorContains(t, err, `input "x": shape [2 4]: dim 1 is 4, the model declares 3`)
	_, err = m.Run(map[string]*core.Tensor{"z": core.FromSlice(make([]float32, 3), core.Shape{1, 3}, core.CPU)})
	assert.ErrorContains(t, err, `the model has no input "z"`)
}

func TestSymbolicDimsMustAgree(t *testing.T) {
	mp := modelProto([]*pb.NodeProto{nodeProto("Add", "sum", []string{"a", "b"}, []string{"c"})},
		[]*pb.ValueInfoProto{vi("a", pb.TensorProto_FLOAT, "n"), vi("b", pb.TensorProto_FLOAT, "n")},
		[]*pb.ValueInfoProto{vi("c", pb.TensorProto_FLOAT, "n")})
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	a := core.FromSlice([]float32{1, 2}, core.Shape{2}, core.CPU)
	b := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}, core.CPU)
	_, err = m.Run(map[string]*core.Tensor{"a": a, "b": b})
	assert.ErrorContains(t, err, `input "b": dim 0 (n) is 3, but input "a" set n to 2`)
}

// TestCompileMatchesEager captures the model with ir.Trace (through
// Compile) and checks the graph computes what the eager run does, on the
// CPU and, where there is an adapter, on WebGPU with fusion.
func TestCompileMatchesEager(t *testing.T) {
	devices := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devices = append(devices, webgputest.Device)
	}
	x := []float32{1, -2, 3, 0.5, 0.25, -1, 2, 2, 2, -3, 1, 0}
	for _, dev := range devices {
		m, err := LoadBytes(marshal(mlpModel()), WithDevice(dev))
		require.NoError(t, err)
		in := core.FromSlice(x, core.Shape{4, 3}, dev)
		g, err := m.Compile(in)
		require.NoError(t, err, "%s", dev)
		outs, err := g.Run(in)
		require.NoError(t, err, "%s", dev)
		got, err := outs[0].Float32s()
		require.NoError(t, err)
		assert.InDeltaSlice(t, mlpReference(x, 4), got, 1e-5, "%s", dev)
		assert.NotContains(t, g.String(), "gather", "%s: the shape arithmetic should be dead code in the graph", dev)
		t.Logf("%s: compiled graph matches the eager run", dev)
	}
}

func TestLoadErrorsNameTheNode(t *testing.T) {
	x := []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2)}
	y := []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT, 2)}
	cases := []struct {
		name  string
		model *pb.ModelProto
		want  string
	}{
		{"unknown operator", modelProto([]*pb.NodeProto{nodeProto("Frobnicate", "f1", []string{"x"}, []string{"y"})}, x, y),
			`node "f1" (Frobnicate): operator Frobnicate is not supported`},
		{"unknown attribute", modelProto([]*pb.NodeProto{nodeProto("Relu", "r1", []string{"x"}, []string{"y"}, intAttr("speed", 3))}, x, y),
			`node "r1" (Relu): attribute "speed" is not supported`},
		{"missing input", modelProto([]*pb.NodeProto{nodeProto("Add", "a1", []string{"x", "ghost"}, []string{"y"})}, x, y),
			`node "a1" (Add): input "ghost" is not a graph input, an initializer or any node's output`},
		{"cycle", modelProto([]*pb.NodeProto{
			nodeProto("Add", "p", []string{"x", "q_out"}, []string{"p_out"}),
			nodeProto("Relu", "q", []string{"p_out"}, []string{"q_out"}),
			nodeProto("Relu", "out", []string{"p_out"}, []string{"y"})}, x, y),
			`the graph has a cycle through node "p" (Add)`},
		{"output defined twice", modelProto([]*pb.NodeProto{
			nodeProto("Relu", "r1", []string{"x"}, []string{"y"}),
			nodeProto("Relu", "r2", []string{"x"}, []string{"y"})}, x, y),
			`node "r2" (Relu): output "y" is also produced by node 0 (Relu)`},
		{"huge dims", modelProto(nil, nil, y, &pb.TensorProto{Name: proto.String("y"), Dims: []int64{1 << 40, 1 << 40},
			DataType: proto.Int32(int32(pb.TensorProto_FLOAT))}),
			`initializer "y": dims [1099511627776 1099511627776]: more than 2147483648 elements`},
		{"short raw data", modelProto(nil, nil, y, &pb.TensorProto{Name: proto.String("y"), Dims: []int64{4},
			DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), RawData: []byte{1, 2, 3}}),
			`initializer "y": raw_data has 3 bytes, shape [4] of f32 needs 16`},
		{"complex tensor", modelProto(nil, []*pb.ValueInfoProto{vi("s", pb.TensorProto_COMPLEX64, 1)}, y),
			`graph input "s": element type COMPLEX64 is not supported`},
		{"optional string tensor", modelProto(nil, []*pb.ValueInfoProto{optionalVI(vi("s", pb.TensorProto_STRING, 1))}, y),
			`graph input "s": an optional tensor of strings is not supported`},
		{"old opset", func() *pb.ModelProto {
			m := modelProto([]*pb.NodeProto{nodeProto("Softmax", "sm", []string{"x"}, []string{"y"})}, x, y)
			m.OpsetImport[0].Version = proto.Int64(11)
			return m
		}(), `node "sm" (Softmax): Softmax before opset 13 (the model imports opset 11) is not supported`},
		{"no graph", &pb.ModelProto{}, "the model has no graph"},
	}
	for _, tc := range cases {
		_, err := loadCPU(t, tc.model)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err := LoadBytes([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, WithDevice(core.CPU))
	assert.ErrorContains(t, err, "parsing ModelProto")
}

func TestRunErrorsNameTheNode(t *testing.T) {
	mp := modelProto([]*pb.NodeProto{nodeProto("Conv", "c1", []string{"x", "w"}, []string{"y"})},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 1, 1, 2, 2, 2)}, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)},
		f32Tensor("w", []int64{1, 1, 1, 1, 1}, []float32{1}))
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	_, err = m.Call([]*core.Tensor{core.FromSlice(make([]float32, 8), core.Shape{1, 1, 2, 2, 2}, core.CPU)})
	assert.ErrorContains(t, err, `node "c1" (Conv): input shape [1 1 2 2 2]: only 1-D and 2-D spatial inputs are supported`)
}

// externalModel adds x to an initializer whose bytes live in a file.
func externalModel(location string) *pb.ModelProto {
	w := &pb.TensorProto{Name: proto.String("w"), Dims: []int64{2}, DataType: proto.Int32(int32(pb.TensorProto_FLOAT)),
		DataLocation: pb.TensorProto_EXTERNAL.Enum(), ExternalData: []*pb.StringStringEntryProto{
			{Key: proto.String("location"), Value: proto.String(location)},
			{Key: proto.String("offset"), Value: proto.String("4")},
			{Key: proto.String("length"), Value: proto.String("8")}}}
	return modelProto([]*pb.NodeProto{nodeProto("Add", "add", []string{"x", "w"}, []string{"y"})},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2)}, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT, 2)}, w)
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	data := f32Tensor("", nil, []float32{99, 1.5, -2}).GetRawData() // 4 bytes of padding, then the tensor
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "model", "weights"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model", "weights", "w.bin"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "outside.bin"), data, 0o644))
	path := filepath.Join(dir, "model", "model.onnx")
	require.NoError(t, os.WriteFile(path, marshal(externalModel("weights/w.bin")), 0o644))

	m, err := Load(path, WithDevice(core.CPU))
	require.NoError(t, err)
	out, err := m.Call([]*core.Tensor{core.FromSlice([]float32{1, 1}, core.Shape{2}, core.CPU)})
	require.NoError(t, err)
	got, err := out[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{2.5, -1}, got)

	for _, loc := range []string{"../outside.bin", filepath.Join(dir, "outside.bin"), "weights/missing.bin"} {
		require.NoError(t, os.WriteFile(path, marshal(externalModel(loc)), 0o644))
		_, err := Load(path, WithDevice(core.CPU))
		assert.ErrorContains(t, err, `initializer "w": external data`, loc)
	}
	_, err = LoadBytes(marshal(externalModel("weights/w.bin")), WithDevice(core.CPU))
	assert.ErrorContains(t, err, "loaded from bytes without a directory")
	if err := os.Symlink(filepath.Join(dir, "outside.bin"), filepath.Join(dir, "model", "link.bin")); err == nil {
		require.NoError(t, os.WriteFile(path, marshal(externalModel("link.bin")), 0o644))
		_, err := Load(path, WithDevice(core.CPU))
		assert.ErrorContains(t, err, "external data", "a symbolic link out of the model's directory")
	}
}

// TestInitializerWithoutCopy checks that aligned raw data becomes the CPU
// tensor's storage itself.
func TestInitializerWithoutCopy(t *testing.T) {
	tp := f32Tensor("w", []int64{4}, []float32{1, 2, 3, 4})
	w, err := decodeTensor(tp, core.CPU, nil)
	require.NoError(t, err)
	host := w.Storage().(core.HostStorage).Host()
	// Addresses, not pointers: testify would compare what they point at.
	assert.Equal(t, uintptr(unsafe.Pointer(unsafe.SliceData(tp.RawData))), uintptr(unsafe.Pointer(unsafe.SliceData(host))))
}
