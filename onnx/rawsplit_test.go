package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for tp, span := range src.raws {
		tp.RawData = append([]byte{}, span.b...)
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
// read the file into (as AdoptBytes hands one over), makes the weights'
// storage slices of it, each moved to its elements' alignment, with the
// values the copying path gives; and that LoadBytes without it copies.
func TestLoadAdoptsTheFilesWeights(t *testing.T) {
	// Names of every length mod 8 shift the raw data to every offset; the
	// dtypes need alignments of 2, 4 and 8.
	var inits []*pb.TensorProto
	for i := range 16 {
		name := "w" + strings.Repeat("x", i)
		vals := make([]float32, 3+i)
		for j := range vals {
			vals[j] = float32(i*10+j) - 0.5
		}
		tp := f32Tensor(name, []int64{int64(len(vals))}, vals)
		switch i % 4 {
		case 1: // the same bytes as i64 or f64 (half as many)
			if len(vals)%2 == 1 {
				tp.RawData, tp.Dims = tp.RawData[4:], []int64{int64(len(vals) / 2)}
			} else {
				tp.Dims = []int64{int64(len(vals) / 2)}
			}
			tp.DataType = proto.Int32(int32(pb.TensorProto_INT64))
		case 2:
			tp.DataType, tp.Dims = proto.Int32(int32(pb.TensorProto_FLOAT16)), []int64{int64(2 * len(vals))}
		case 3:
			tp.DataType, tp.Dims = proto.Int32(int32(pb.TensorProto_UINT8)), []int64{int64(4 * len(vals))}
		}
		inits = append(inits, tp)
	}
	data := marshal(modelProto([]*pb.NodeProto{nodeProto("Identity", "out", []string{"w"}, []string{"y"})},
		nil, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT, 3)}, inits...))
	want, err := LoadBytes(data, WithDevice(core.CPU))
	require.NoError(t, err)
	adopted, copied := 0, 0
	for _, adopt := range []bool{true, false} {
		buf := append([]byte{}, data...)
		opts := []Option{WithDevice(core.CPU)}
		if adopt {
			opts = append(opts, AdoptBytes())
		}
		m, err := LoadBytes(buf, opts...)
		require.NoError(t, err)
		lo, hi := addr(buf), addr(buf)+uintptr(len(buf))
		for _, tp := range inits {
			name := tp.GetName()
			got, err := m.consts[name].Bytes()
			require.NoError(t, err)
			ref, err := want.consts[name].Bytes()
			require.NoError(t, err)
			require.Equal(t, ref, got, "%s (adopt %v)", name, adopt)
			host := m.consts[name].Storage().(core.HostStorage).Host()
			inBuf := addr(host) >= lo && addr(host) < hi
			if !adopt {
				require.False(t, inBuf, "%s: LoadBytes without AdoptBytes keeps the caller's bytes", name)
				continue
			}
			require.Zero(t, addr(host)%uintptr(m.consts[name].DType().Size()), "%s is misaligned", name)
			if inBuf {
				adopted++
			} else {
				copied++
			}
		}
	}
	// Each raw data has its tag, length and the tensor's name and dims
	// below it: room to move by up to 7 bytes.
	assert.Equal(t, len(inits), adopted, "adopted (the rest copied: %d)", copied)

	path := filepath.Join(t.TempDir(), "mlp.onnx")
	require.NoError(t, os.WriteFile(path, marshal(mlpModel()), 0o600))
	m, err := Load(path, WithDevice(core.CPU))
	require.NoError(t, err)
	x := []float32{1, 2, 3}
	out, err := m.Run(map[string]*core.Tensor{"x": core.FromSlice(x, core.Shape{1, 3}, core.CPU)})
	require.NoError(t, err)
	got, err := out["y"].Float32s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, mlpReference(x, 1), got, 1e-6)
}
