package onnx

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// reassembled is what parseModel decoded with the raw data it split out put
// back, for comparing with proto.Unmarshal's decoding of the same bytes.
func reassembled(t *testing.T, data []byte) (*pb.ModelProto, error) {
	t.Helper()
	mp, src, err := parseModel(data, false)
	if err != nil {
		return nil, err
	}
	for tp, raw := range src.raws {
		tp.RawData = append([]byte{}, raw...)
	}
	return mp, nil
}

// splitCases are models whose initializers' raw data is in every form
// splitRawData meets: raw, typed, empty, given twice, beside a Constant
// node's tensor (not an initializer: left to proto.Unmarshal) and a graph
// field given twice (which protobuf merges: the split declines).
func splitCases() map[string][]byte {
	mlp := marshal(mlpModel())
	twice := marshal(mlpModel())
	// A second raw_data for w, appended to its TensorProto: protobuf keeps
	// the last. The model's fields are rebuilt around the longer tensor.
	m := mlpModel()
	wt, err := proto.Marshal(m.Graph.Initializer[0])
	if err != nil {
		panic(err)
	}
	wt = protowire.AppendTag(wt, tensorRawDataField, protowire.BytesType)
	wt = protowire.AppendBytes(wt, marshalF32(1, 2, 3, 4, 5, 6))
	rest := proto.Clone(m).(*pb.ModelProto)
	rest.Graph.Initializer = rest.Graph.Initializer[1:]
	g, err := proto.Marshal(rest.Graph)
	if err != nil {
		panic(err)
	}
	g = protowire.AppendTag(g, graphInitializerField, protowire.BytesType)
	g = protowire.AppendBytes(g, wt)
	rest.Graph = nil
	twiceRaw := marshal(rest)
	twiceRaw = protowire.AppendTag(twiceRaw, modelGraphField, protowire.BytesType)
	twiceRaw = protowire.AppendBytes(twiceRaw, g)

	empty := mlpModel()
	empty.Graph.Initializer = append(empty.Graph.Initializer, &pb.TensorProto{Name: proto.String("none"),
		Dims: []int64{0}, DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), RawData: []byte{}})
	withConst := mlpModel()
	withConst.Graph.Node = append(withConst.Graph.Node, nodeProto("Constant", "c", nil, []string{"k"},
		&pb.AttributeProto{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(),
			T: f32Tensor("", []int64{2}, []float32{7, 8})}))
	return map[string][]byte{
		"mlp":             mlp,
		"graph twice":     append(twice, marshal(&pb.ModelProto{Graph: &pb.GraphProto{Initializer: []*pb.TensorProto{f32Tensor("v", []int64{1}, []float32{9})}}})...),
		"raw_data twice":  twiceRaw,
		"empty raw_data":  marshal(empty),
		"constant tensor": marshal(withConst),
		"no graph":        marshal(&pb.ModelProto{IrVersion: proto.Int64(9)}),
	}
}

func marshalF32(vals ...float32) []byte { return f32Tensor("", nil, vals).RawData }

func TestSplitRawDataDecodesAsUnmarshal(t *testing.T) {
	for name, data := range splitCases() {
		t.Run(name, func(t *testing.T) {
			want := &pb.ModelProto{}
			require.NoError(t, proto.Unmarshal(data, want))
			got, err := reassembled(t, data)
			require.NoError(t, err)
			assert.True(t, proto.Equal(want, got), "parseModel decoded\n%v\nproto.Unmarshal\n%v", got, want)
		})
	}
	_, raws, ok := splitRawData(splitCases()["mlp"])
	require.True(t, ok)
	assert.Len(t, raws, 5, "one entry per initializer")
	assert.Equal(t, marshalF32(1, -1, 0.5, 2, -0.25, 1), raws[0])
	assert.Nil(t, raws[2], "a typed initializer has no raw data")
	_, _, ok = splitRawData(splitCases()["graph twice"])
	assert.False(t, ok, "a graph given twice is merged by protobuf, not split")
}

// TestSplitRawDataRefusesWhatUnmarshalRefuses cuts a model at every length
// and flips its bytes one at a time: parseModel fails exactly when
// proto.Unmarshal does, and otherwise decodes the same message.
func TestSplitRawDataRefusesWhatUnmarshalRefuses(t *testing.T) {
	data := splitCases()["mlp"]
	check := func(b []byte) {
		want := &pb.ModelProto{}
		wantErr := proto.Unmarshal(b, want)
		got, err := reassembled(t, b)
		if wantErr != nil {
			require.Error(t, err, "bytes %x", b)
			assert.ErrorContains(t, err, "parsing ModelProto")
			return
		}
		require.NoError(t, err, "bytes %x", b)
		require.True(t, proto.Equal(want, got), "bytes %x", b)
	}
	for n := range len(data) {
		check(data[:n])
	}
	for i := range data {
		b := append([]byte{}, data...)
		b[i] ^= 0xa5
		check(b)
	}
}

// FuzzParseModel holds parseModel to proto.Unmarshal on arbitrary bytes:
// the same refusals, and otherwise the same message once the split raw
// data is put back. FuzzLoad covers what the importer does next.
func FuzzParseModel(f *testing.F) {
	for _, data := range splitCases() {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := &pb.ModelProto{}
		wantErr := proto.Unmarshal(data, want)
		got, err := reassembled(t, data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("parseModel: %v; proto.Unmarshal: %v", err, wantErr)
		}
		if err == nil && !proto.Equal(want, got) {
			t.Fatalf("parseModel decoded\n%v\nproto.Unmarshal\n%v", got, want)
		}
	})
}

// TestLoadBytesKeepsNoCallerBytes overwrites the buffer a model was
// loaded from: its weights were copied out of it (the C ABI's callers, a
// JavaScript Uint8Array among them, own their buffers).
func TestLoadBytesKeepsNoCallerBytes(t *testing.T) {
	data := marshal(mlpModel())
	m, err := LoadBytes(data, WithDevice(core.CPU))
	require.NoError(t, err)
	for i := range data {
		data[i] = 0xff
	}
	x := []float32{1, 2, 3, -4, 0.5, 6}
	out, err := m.Run(map[string]*core.Tensor{"x": core.FromSlice(x, core.Shape{2, 3}, core.CPU)})
	require.NoError(t, err)
	got, err := out["y"].Float32s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, mlpReference(x, 2), got, 1e-6)
}

// TestLoadAdoptsTheFilesWeights checks that Load, which owns the buffer it
// read the file into, makes an aligned initializer's storage a slice of it.
func TestLoadAdoptsTheFilesWeights(t *testing.T) {
	data := marshal(mlpModel())
	for _, owned := range []bool{true, false} {
		mp, src, err := parseModel(data, owned)
		require.NoError(t, err)
		w, err := decodeTensor(mp.Graph.Initializer[0], core.CPU, src)
		require.NoError(t, err)
		raw := src.raws[mp.Graph.Initializer[0]]
		host := w.Storage().(core.HostStorage).Host()
		at := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) } // not pointers: testify compares what they point at
		if owned && at(raw)%4 == 0 {
			assert.Equal(t, at(raw), at(host), "an aligned weight is adopted")
		} else {
			assert.NotEqual(t, at(raw), at(host), "owned %v: the weight is copied", owned)
		}
		assert.Equal(t, raw, host[:len(raw)])
	}
	path := filepath.Join(t.TempDir(), "mlp.onnx")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	m, err := Load(path, WithDevice(core.CPU))
	require.NoError(t, err)
	x := []float32{1, 2, 3}
	out, err := m.Run(map[string]*core.Tensor{"x": core.FromSlice(x, core.Shape{1, 3}, core.CPU)})
	require.NoError(t, err)
	got, err := out["y"].Float32s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, mlpReference(x, 1), got, 1e-6)
}
