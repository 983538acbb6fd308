package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

func intsAttribute(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func floatsAttribute(name string, v ...float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOATS.Enum(), Floats: v}
}

// wave is a deterministic f32 tensor of the shape, values in [-2, 2].
func wave(seed float64, shape ...int) *core.Tensor {
	v := make([]float32, core.Shape(shape).Numel())
	for i := range v {
		v[i] = float32(2 * math.Sin(seed*float64(i+1)+0.3))
	}
	return core.FromSlice(v, core.Shape(shape), core.CPU)
}

func floats(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

func assertClose(t *testing.T, want, got []float64, tol float64, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		if math.Abs(want[i]-got[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d is %v, want %v", msg, i, got[i], want[i])
		}
	}
}

// A 3-D ConvTranspose (a matmul and a Col2Im) with one spatial dim of size
// one, kernel one, agrees with the registry's 2-D op on the other two,
// with groups, strides, dilations, uneven pads, output_padding and a bias,
// whichever dim is the trivial one.
func TestConvTranspose3DMatches2D(t *testing.T) {
	x2, w2, b := wave(0.7, 2, 4, 5, 6), wave(1.3, 4, 3, 3, 2), wave(2.1, 6)
	attrs2 := []*pb.AttributeProto{intAttribute("group", 2), intsAttribute("strides", 2, 3), intsAttribute("dilations", 2, 1),
		intsAttribute("pads", 1, 0, 2, 1), intsAttribute("output_padding", 1, 2)}
	want, err := runOne(t, "ConvTranspose", attrs2, 1, x2, w2, b)
	require.NoError(t, err)
	ws := want[0].Shape()
	for _, trivial := range []int{0, 1, 2} {
		insert := func(v []int64, at int, val int64) []int64 {
			return append(append(append([]int64{}, v[:at]...), val), v[at:]...)
		}
		pads := insert([]int64{1, 0}, trivial, 0)
		pads = append(pads, insert([]int64{2, 1}, trivial, 0)...)
		attrs3 := []*pb.AttributeProto{intAttribute("group", 2), intsAttribute("strides", insert([]int64{2, 3}, trivial, 1)...),
			intsAttribute("dilations", insert([]int64{2, 1}, trivial, 1)...), intsAttribute("pads", pads...),
			intsAttribute("output_padding", insert([]int64{1, 2}, trivial, 0)...)}
		xshape := []int{2, 4, 5, 6}
		wshape := []int{4, 3, 3, 2}
		x3 := x2.Reshape(append(append(append([]int{}, xshape[:2+trivial]...), 1), xshape[2+trivial:]...))
		w3 := w2.Reshape(append(append(append([]int{}, wshape[:2+trivial]...), 1), wshape[2+trivial:]...))
		got, err := runOne(t, "ConvTranspose", attrs3, 1, x3, w3, b)
		require.NoError(t, err)
		wantShape := append(append(append([]int{}, ws[:2+trivial]...), 1), ws[2+trivial:]...)
		assert.Equal(t, core.Shape(wantShape), got[0].Shape(), "trivial dim %d", trivial)
		assertClose(t, floats(t, want[0]), floats(t, got[0]), 1e-5, "ConvTranspose 3-D")
	}
}

func TestConvTransposeErrorsNameTheNode(t *testing.T) {
	x, w := wave(1, 1, 4, 2, 2, 2), wave(2, 4, 1, 2, 2, 2)
	_, err := runOne(t, "ConvTranspose", []*pb.AttributeProto{intAttribute("group", 3)}, 1, x, w)
	assert.ErrorContains(t, err, `node "n1" (ConvTranspose): group 3, input shape [1 4 2 2 2] and weight shape [4 1 2 2 2]`)
	_, err = runOne(t, "ConvTranspose", nil, 1, x, wave(2, 4, 1, 2, 2))
	assert.ErrorContains(t, err, `node "n1" (ConvTranspose): input shape [1 4 2 2 2] and weight shape [4 1 2 2]`)
}

// ScatterElements' and ScatterND's mul multiplies every update in,
// repeated and negative indices included, in the data's type.
func TestScatterMul(t *testing.T) {
	x := core.FromSlice([]int32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3}, core.CPU)
	idx := core.FromSlice([]int64{0, 0, 2, -1}, core.Shape{2, 2}, core.CPU)
	upd := core.FromSlice([]int32{2, 3, 5, 7}, core.Shape{2, 2}, core.CPU)
	out, err := runOne(t, "ScatterElements", []*pb.AttributeProto{intAttribute("axis", 1), strAttribute("reduction", "mul")}, 1, x, idx, upd)
	require.NoError(t, err)
	assert.Equal(t, core.I32, out[0].DType())
	assert.Equal(t, []float64{6, 2, 3, 4, 5, 210}, floats(t, out[0]))

	nd := core.FromSlice([]int64{1, 1, 0}, core.Shape{3, 1}, core.CPU)
	rows := core.FromSlice([]float32{2, 2, 2, 0.5, 0.5, 0.5, -1, 1, 0}, core.Shape{3, 3}, core.CPU)
	out, err = runOne(t, "ScatterND", []*pb.AttributeProto{strAttribute("reduction", "mul")}, 1, x.Cast(core.F32), nd, rows)
	require.NoError(t, err)
	assert.Equal(t, []float64{-1, 2, 0, 4, 5, 6}, floats(t, out[0]))

	_, err = runOne(t, "ScatterElements", []*pb.AttributeProto{strAttribute("reduction", "mul")}, 1, x, idx, upd.Reshape([]int{4}))
	assert.ErrorContains(t, err, `node "n1" (ScatterElements): indices shape [2 2], updates shape [4] and data shape [2 3]`)
	_, err = runOne(t, "ScatterElements", []*pb.AttributeProto{strAttribute("reduction", "prod")}, 1, x, idx, upd)
	assert.ErrorContains(t, err, `node "n1" (ScatterElements): reduction "prod" is not supported (none, add, mul, max, min)`)
}

// Upsample before opset 9 takes its scales as an attribute; linear mode
// reads y/scale and clamps at the edge, as onnxruntime does.
func TestUpsample(t *testing.T) {
	upsampleModel := func(opset int64, attrs ...*pb.AttributeProto) *pb.ModelProto {
		inputs := []string{"X"}
		if opset >= 9 {
			inputs = append(inputs, "scales")
		}
		m := modelProto([]*pb.NodeProto{nodeProto("Upsample", "up", inputs, []string{"Y"}, attrs...)},
			[]*pb.ValueInfoProto{vi("X", pb.TensorProto_FLOAT, 1, 1, 2, 2)}, []*pb.ValueInfoProto{vi("Y", pb.TensorProto_FLOAT)},
			f32Tensor("scales", []int64{4}, []float32{1, 1, 2, 2}))
		m.OpsetImport[0].Version = proto.Int64(opset)
		return m
	}
	x := core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{1, 1, 2, 2}, core.CPU)
	linear := []float64{1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4}
	for _, opset := range []int64{7, 9} {
		attrs := []*pb.AttributeProto{strAttribute("mode", "linear")}
		if opset < 9 {
			attrs = append(attrs, floatsAttribute("scales", 1, 1, 2, 2))
		}
		m, err := loadCPU(t, upsampleModel(opset, attrs...))
		require.NoError(t, err)
		out, err := m.Call([]*core.Tensor{x})
		require.NoError(t, err)
		assert.Equal(t, core.Shape{1, 1, 4, 4}, out[0].Shape())
		assert.Equal(t, linear, floats(t, out[0]), "opset %d", opset)
	}
	cases := []struct {
		opset int64
		attrs []*pb.AttributeProto
		want  string
	}{
		{9, []*pb.AttributeProto{strAttribute("mode", "cubic")}, `node "up" (Upsample): mode "cubic" is not one of nearest, linear`},
		{7, nil, `node "up" (Upsample): attribute "scales" is required before opset 9`},
		{9, []*pb.AttributeProto{floatsAttribute("scales", 1, 1, 2, 2)}, `node "up" (Upsample): attribute "scales" is an input from opset 9`},
		{7, []*pb.AttributeProto{floatsAttribute("scales", 1, 1, 0.5, 2)}, `node "up" (Upsample): scales [1 1 0.5 2]: each must be at least 1`},
		{7, []*pb.AttributeProto{floatsAttribute("scales", 1, 2, 2)}, `node "up" (Upsample): scales [1 2 2] give 3 values for rank 4`},
	}
	for _, tc := range cases {
		m, err := loadCPU(t, upsampleModel(tc.opset, tc.attrs...))
		if err == nil {
			_, err = m.Call([]*core.Tensor{x})
		}
		assert.ErrorContains(t, err, tc.want)
	}
}
