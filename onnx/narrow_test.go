package onnx

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// narrowReference is testdata/narrow_types.json, ONNX's reference
// (onnx.numpy_helper and ml_dtypes) for decoding and casting the narrow
// types, written by testdata/narrow_types.py.
type narrowReference struct {
	Decode map[string][]string `json:"decode"`
	Inputs map[string]any      `json:"inputs"`
	Cast   []struct {
		To        string `json:"to"`
		Saturate  *bool  `json:"saturate"`
		RoundMode string `json:"round_mode"`
		Input     string `json:"input"`
		Y         []int  `json:"y"`
	} `json:"cast"`
}

func loadNarrowReference(t *testing.T) *narrowReference {
	data, err := os.ReadFile(filepath.Join("testdata", "narrow_types.json"))
	require.NoError(t, err)
	var ref narrowReference
	require.NoError(t, json.Unmarshal(data, &ref))
	return &ref
}

func f32bits(t *testing.T, h string) float32 {
	b, err := strconv.ParseUint(h, 16, 32)
	require.NoError(t, err)
	return math.Float32frombits(uint32(b))
}

func elemTypeNamed(t *testing.T, name string) elemType {
	v, ok := pb.TensorProto_DataType_value[name]
	require.True(t, ok, name)
	return elemType(v)
}

// sameValue is equality that also holds NaN = NaN and tells -0 from +0.
func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// Every bit pattern of every narrow float decodes to ml_dtypes' value.
func TestNarrowFloatsDecodeAsONNXDoes(t *testing.T) {
	ref := loadNarrowReference(t)
	require.Len(t, ref.Decode, 6)
	for name, want := range ref.Decode {
		f := narrowOf(elemTypeNamed(t, name)).float
		require.Len(t, f.values, len(want), name)
		for b, h := range want {
			w := float64(f32bits(t, h))
			require.True(t, sameValue(f.values[b], w), "%s pattern %#02x decodes to %v, want %v", name, b, f.values[b], w)
		}
	}
	require.Equal(t, 448.0, narrowOf(pb.TensorProto_FLOAT8E4M3FN).float.max)
	require.Equal(t, 240.0, narrowOf(pb.TensorProto_FLOAT8E4M3FNUZ).float.max)
	require.Equal(t, 57344.0, narrowOf(pb.TensorProto_FLOAT8E5M2).float.max)
	require.Equal(t, 6.0, narrowOf(pb.TensorProto_FLOAT4E2M1).float.max)
}

// castTo rounds, saturates and wraps as ONNX's reference does, on every
// input of the reference set (each float format's grid, the midpoints
// between its values and one float32 step either side of them, what lies
// past its range, the specials), run as one tensor on the CPU and, where
// there is an adapter, on WebGPU.
func TestNarrowCastMatchesONNXReference(t *testing.T) {
	ref := loadNarrowReference(t)
	devices := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devices = append(devices, webgputest.Device)
	}
	for _, dev := range devices {
		for _, c := range ref.Cast {
			checkReferenceCast(t, dev, ref, c.To, c.Input, c.Saturate == nil || *c.Saturate, c.RoundMode, c.Y)
		}
	}
}

func checkReferenceCast(t *testing.T, dev core.Device, ref *narrowReference, to, input string, saturate bool, mode string, want []int) {
	et := elemTypeNamed(t, to)
	nt := narrowOf(et)
	var x *core.Tensor
	var xs []float64
	switch in := ref.Inputs[input].([]any); in[0].(type) {
	case string:
		v := make([]float32, len(in))
		for i, h := range in {
			v[i] = f32bits(t, h.(string))
			xs = append(xs, float64(v[i]))
		}
		x = core.FromSlice(v, core.Shape{len(v)}, dev)
	default:
		v := make([]int32, len(in))
		for i, n := range in {
			v[i] = int32(n.(float64))
			xs = append(xs, float64(v[i]))
		}
		x = core.FromSlice(v, core.Shape{len(v)}, dev)
	}
	if mode == "" {
		mode = "up"
	}
	y, err := castTo(x, et, saturate, mode)
	require.NoError(t, err)
	require.Equal(t, nt.held, y.DType())
	got, err := y.Float64s()
	require.NoError(t, err, "%s: %s from %s", dev, to, input)
	for i, w := range want {
		v := float64(w)
		if nt.float != nil {
			v = nt.float.values[w]
		}
		require.True(t, sameValue(got[i], v) || (nt.float == nil && got[i] == v),
			"%s: Cast %v to %s (saturate %v, round_mode %s) gives %v, want %v", dev, xs[i], to, saturate, mode, got[i], v)
	}
}

// Where ONNX's written rules and its reference part, the importer follows
// the rules (narrow_types.py leaves these inputs out of the reference set).
func TestNarrowCastFollowsTheSpecificationWhereTheReferenceDiffers(t *testing.T) {
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1) // Go's -0.0 is +0
	cases := []struct {
		to       elemType
		saturate bool
		mode     string
		x, want  []float64
	}{
		// float4.md: NaN -> +6 whatever its sign, +-Inf -> +-6.
		{pb.TensorProto_FLOAT4E2M1, false, "up", []float64{nan, -nan, inf, -inf, negZero}, []float64{6, 6, 6, -6, negZero}},
		// Cast's E8M0 table: Inf saturates to 2^127, or is NaN.
		{pb.TensorProto_FLOAT8E8M0, true, "up", []float64{inf, 0, 1e-40}, []float64{math.Ldexp(1, 127), math.Ldexp(1, -127), math.Ldexp(1, -127)}},
		{pb.TensorProto_FLOAT8E8M0, false, "nearest", []float64{inf, 0, 1e-40, 3}, []float64{nan, nan, nan, 4}},
		{pb.TensorProto_FLOAT8E8M0, false, "up", []float64{0, 1e-40}, []float64{nan, math.Ldexp(1, -127)}},
		// The FNUZ types have no -0; E4M3FN and E5M2 keep it.
		{pb.TensorProto_FLOAT8E4M3FNUZ, true, "up", []float64{negZero, -1e-9}, []float64{0, 0}},
		{pb.TensorProto_FLOAT8E5M2, false, "up", []float64{negZero, -1e-9, -inf, 70000}, []float64{negZero, negZero, -inf, inf}},
	}
	for _, c := range cases {
		v := make([]float32, len(c.x))
		for i, x := range c.x {
			v[i] = float32(x)
		}
		y, err := castTo(core.FromSlice(v, core.Shape{len(v)}), c.to, c.saturate, c.mode)
		require.NoError(t, err)
		got, err := y.Float64s()
		require.NoError(t, err)
		for i := range got {
			require.True(t, sameValue(got[i], c.want[i]), "Cast %v to %s (saturate %v, %s) gives %v, want %v",
				c.x[i], typeName(c.to), c.saturate, c.mode, got[i], c.want[i])
		}
	}
	_, err := castTo(core.FromSlice([]float32{1}, core.Shape{1}), pb.TensorProto_FLOAT8E8M0, true, "sideways")
	require.ErrorContains(t, err, `round_mode "sideways"`)
}

// Integers going to uint16 wrap at 2^16 and floats saturate; f64 and wide
// integers round once, from the exact value.
func TestNarrowCastFromWideTypes(t *testing.T) {
	y, err := castTo(core.FromSlice([]int64{-1, 65536, 70000, 5}, core.Shape{4}), pb.TensorProto_UINT16, true, "up")
	require.NoError(t, err)
	got, _ := y.Int64s()
	require.Equal(t, []int64{65535, 0, 4464, 5}, got)
	y, err = castTo(core.FromSlice([]float32{-3, 70000.5, 12.9}, core.Shape{3}), pb.TensorProto_UINT16, true, "up")
	require.NoError(t, err)
	got, _ = y.Int64s()
	require.Equal(t, []int64{0, 65535, 12}, got)
	// 2^24+1 is not an f32: through f32 it would round down to 2^24 first.
	y, err = castTo(core.FromSlice([]int32{1<<24 + 1}, core.Shape{1}), pb.TensorProto_FLOAT8E8M0, true, "up")
	require.NoError(t, err)
	f, _ := y.Float64s()
	require.Equal(t, []float64{1 << 25}, f)
	// Midway between E4M3FN's 1.0 and 1.125 after f64 -> f32 rounding, but
	// above it in f64.
	y, err = castTo(core.FromSlice([]float64{1.0625 + 1e-12}, core.Shape{1}), pb.TensorProto_FLOAT8E4M3FN, true, "up")
	require.NoError(t, err)
	f, _ = y.Float64s()
	require.Equal(t, []float64{1.125}, f)
}

// A TensorProto of each narrow type decodes from raw_data and from the
// typed field, packed 4- and 2-bit storage included; uint64 above 2^63-1
// is refused naming the element.
func TestNarrowTensorProtos(t *testing.T) {
	dec := func(tp *pb.TensorProto) ([]float64, error) {
		x, err := decodeTensor(tp, core.CPU, nil)
		if err != nil {
			return nil, err
		}
		return x.Float64s()
	}
	tensor := func(et elemType, dims []int64) *pb.TensorProto {
		return &pb.TensorProto{DataType: proto.Int32(int32(et)), Dims: dims}
	}
	tp := tensor(pb.TensorProto_INT4, []int64{3})
	tp.RawData = []byte{0x9F, 0x07} // -1, -7, 7
	v, err := dec(tp)
	require.NoError(t, err)
	require.Equal(t, []float64{-1, -7, 7}, v)
	tp = tensor(pb.TensorProto_UINT2, []int64{5})
	tp.Int32Data = []int32{0b11100100, 0b10}
	v, err = dec(tp)
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1, 2, 3, 2}, v)
	tp = tensor(pb.TensorProto_FLOAT8E4M3FN, []int64{2})
	tp.Int32Data = []int32{0x7E, 0xB8}
	v, err = dec(tp)
	require.NoError(t, err)
	require.Equal(t, []float64{448, -1}, v)
	tp = tensor(pb.TensorProto_UINT16, []int64{2})
	tp.RawData = []byte{0xFF, 0xFF, 0x01, 0x00}
	v, err = dec(tp)
	require.NoError(t, err)
	require.Equal(t, []float64{65535, 1}, v)
	tp = tensor(pb.TensorProto_UINT4, []int64{3})
	tp.RawData = []byte{0x21}
	_, err = dec(tp)
	require.ErrorContains(t, err, "raw_data has 1 bytes, shape [3] of UINT4 needs 2")
	tp = tensor(pb.TensorProto_UINT64, []int64{2})
	tp.Uint64Data = []uint64{7, 1 << 63}
	_, err = dec(tp)
	require.ErrorContains(t, err, "element 1 of a UINT64 tensor is 9223372036854775808, above 2^63-1")
}

// Values a caller passes for an input of a narrow type must be of it.
func TestCheckHeld(t *testing.T) {
	require.NoError(t, checkHeld(core.FromSlice([]float32{448, -0.001953125, float32(math.NaN())}, core.Shape{3}), pb.TensorProto_FLOAT8E4M3FN))
	require.ErrorContains(t, checkHeld(core.FromSlice([]float32{0.3}, core.Shape{1}), pb.TensorProto_FLOAT8E4M3FN),
		"element 0 is 0.30000001192092896, which FLOAT8E4M3FN (held as f32) cannot hold")
	require.ErrorContains(t, checkHeld(core.FromSlice([]int8{-9}, core.Shape{1}), pb.TensorProto_INT4), "element 0 is -9")
	require.ErrorContains(t, checkHeld(core.FromSlice([]int64{-1}, core.Shape{1}), pb.TensorProto_UINT64), "above 2^63-1")
	require.ErrorContains(t, checkHeld(core.FromSlice([]int16{1}, core.Shape{1}), pb.TensorProto_UINT16), "dtype i16, the model declares UINT16 (held as i32)")
}

func narrowModel(t *testing.T, dev core.Device, nodes []*pb.NodeProto, in, out []*pb.ValueInfoProto, inits ...*pb.TensorProto) *Model {
	m, err := LoadBytes(marshal(modelProto(nodes, in, out, inits...)), WithDevice(dev))
	require.NoError(t, err)
	return m
}

// Arithmetic on a narrow integer type wraps in that type, not in the
// dtype that holds it; values of a declared uint64 output above 2^63-1
// are refused rather than returned as negative i64s.
func TestNarrowArithmeticWraps(t *testing.T) {
	u16 := pb.TensorProto_UINT16
	m := narrowModel(t, core.CPU, []*pb.NodeProto{
		nodeProto("Sub", "sub", []string{"x", "y"}, []string{"d"}),
		nodeProto("Mul", "mul", []string{"d", "y"}, []string{"z"}),
	}, []*pb.ValueInfoProto{vi("x", u16, 3), vi("y", u16, 3)}, []*pb.ValueInfoProto{vi("z", u16, 3)})
	require.Equal(t, "UINT16", m.Inputs[0].Narrow)
	require.Equal(t, core.I32, m.Outputs[0].DType)
	outs, err := m.Run(map[string]*core.Tensor{
		"x": core.FromSlice([]int32{3, 65535, 7}, core.Shape{3}),
		"y": core.FromSlice([]int32{5, 2, 40000}, core.Shape{3}),
	})
	require.NoError(t, err)
	z, _ := outs["z"].Int64s()
	// (3-5) mod 2^16 = 65534, times 5; (65535-2)*2; (7-40000)*40000, all mod 2^16.
	require.Equal(t, []int64{65534 * 5 % 65536, 65533 * 2 % 65536, (7 - 40000 + 65536) * 40000 % 65536}, z)
	_, err = m.Run(map[string]*core.Tensor{
		"x": core.FromSlice([]int32{3, 65536, 7}, core.Shape{3}),
		"y": core.FromSlice([]int32{5, 2, 1}, core.Shape{3}),
	})
	require.ErrorContains(t, err, `input "x": element 1 is 65536, which UINT16 (held as i32) cannot hold`)

	u64 := pb.TensorProto_UINT64
	m = narrowModel(t, core.CPU, []*pb.NodeProto{nodeProto("Sub", "sub", []string{"x", "y"}, []string{"z"})},
		[]*pb.ValueInfoProto{vi("x", u64, 2), vi("y", u64, 2)}, []*pb.ValueInfoProto{vi("z", u64, 2)})
	_, err = m.Run(map[string]*core.Tensor{
		"x": core.FromSlice([]int64{5, 0}, core.Shape{2}),
		"y": core.FromSlice([]int64{2, 1}, core.Shape{2}),
	})
	require.ErrorContains(t, err, `output "z": element 1 is 18446744073709551615 as i64, a UINT64 above 2^63-1`)
}

// A float8 value cast in the graph, moved through shape operators and
// returned is its grid value; a packed INT4 initializer dequantizes; the
// model traces into a graph that rounds new inputs the same way (the
// rounding is registry ops, not host arithmetic), on the CPU and WebGPU.
func TestNarrowFloatsThroughAModel(t *testing.T) {
	devices := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devices = append(devices, webgputest.Device)
	}
	e4m3 := pb.TensorProto_FLOAT8E4M3FN
	w := &pb.TensorProto{Name: proto.String("w"), Dims: []int64{4}, DataType: proto.Int32(int32(pb.TensorProto_INT4)),
		RawData: []byte{0x8F, 0x71}} // -1, -8, 1, 7
	scale := f32Tensor("s", nil, []float32{0.5})
	for _, dev := range devices {
		m := narrowModel(t, dev, []*pb.NodeProto{
			nodeProto("Cast", "to8", []string{"x"}, []string{"q"}, intAttr("to", int64(e4m3))),
			nodeProto("Reshape", "flat", []string{"q", "shape"}, []string{"y"}),
			nodeProto("DequantizeLinear", "dq", []string{"w", "s"}, []string{"v"}),
		}, []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2, 2)},
			[]*pb.ValueInfoProto{vi("y", e4m3, 4), vi("v", pb.TensorProto_FLOAT, 4)},
			w, scale, i64Tensor("shape", 4))
		require.Equal(t, "FLOAT8E4M3FN", m.Outputs[0].Narrow)
		x := core.FromSlice([]float32{0.4789, 1000, -0.0625 * 1.03, 17}, core.Shape{2, 2}, dev)
		outs, err := m.Run(map[string]*core.Tensor{"x": x})
		require.NoError(t, err, "%s", dev)
		y, _ := outs["y"].Float64s()
		require.Equal(t, []float64{0.46875, 448, -0.0625, 16}, y, "%s", dev)
		v, _ := outs["v"].Float64s()
		require.Equal(t, []float64{-0.5, -4, 0.5, 3.5}, v, "%s", dev)

		g, err := m.Compile(x)
		require.NoError(t, err, "%s", dev)
		again, err := g.Run(core.FromSlice([]float32{0.2, -300, 465, 1e-3}, core.Shape{2, 2}, dev))
		require.NoError(t, err, "%s", dev)
		y, _ = again[0].Float64s()
		require.Equal(t, []float64{0.203125, -288, 448, 0.001953125}, y, "%s", dev)
	}
}
