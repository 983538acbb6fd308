package onnx

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// recurrentCase is one model of testdata/recurrent_cases.json (written by
// recurrent_cases.py from ONNX Runtime's outputs), the model inline.
type recurrentCase = referenceCase[jsonTensor]

type jsonTensor struct {
	DType string    `json:"dtype"`
	Dims  []int     `json:"dims"`
	Data  []float64 `json:"data"`
}

func (j jsonTensor) tensor(dev core.Device) *core.Tensor {
	d := map[string]core.DType{"f32": core.F32, "i32": core.I32, "i64": core.I64, "bool": core.Bool}[j.DType]
	return core.FromFloat64s(d, core.Shape(j.Dims), j.Data, dev)
}

// The edge cases the node tests leave out (sequence_lens shorter than
// the sequence in both directions, clip, input_forget, activations with
// alpha and beta, batchwise layout, every GridSample mode and padding in
// 4-D and 5-D, a Loop ending on its condition or never starting, Scan's
// axes and directions) match ONNX Runtime on the CPU and on WebGPU.
func TestRecurrentCases(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "recurrent_cases.json"))
	require.NoError(t, err)
	var file struct {
		Cases []recurrentCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	require.NotEmpty(t, file.Cases)
	run := func(t *testing.T, dev core.Device) {
		for _, tc := range file.Cases {
			model, err := base64.StdEncoding.DecodeString(tc.Model)
			require.NoError(t, err)
			m, err := LoadBytes(model, WithDevice(dev))
			require.NoError(t, err, tc.Name)
			ins := map[string]*core.Tensor{}
			for name, v := range tc.Inputs {
				ins[name] = v.tensor(dev)
			}
			got, err := m.Run(ins)
			require.NoError(t, err, tc.Name)
			for name, want := range tc.Outputs {
				msg := compare(got[name], want.tensor(core.CPU), false)
				assert.Empty(t, msg, "%s (%s, %s): output %s", tc.Name, tc.Note, tc.Source, name)
			}
		}
	}
	t.Run("cpu", func(t *testing.T) { run(t, core.CPU) })
	t.Run("webgpu", func(t *testing.T) {
		webgputest.Need(t)
		run(t, webgputest.Device)
	})
}

// loopModel is x -> Loop(M, cond, x) whose body halves x and scans its
// sum, continuing while the sum exceeds 1; M or cond is left out by
// passing "".
func loopModel(m, cond string) *pb.ModelProto {
	bodyIn := []*pb.ValueInfoProto{vi("i", pb.TensorProto_INT64), vi("cond_in", pb.TensorProto_BOOL), vi("x_in", pb.TensorProto_FLOAT, 3)}
	bodyOut := []*pb.ValueInfoProto{vi("cond_out", pb.TensorProto_BOOL), vi("x_out", pb.TensorProto_FLOAT, 3), vi("s_scan", pb.TensorProto_FLOAT)}
	body := &pb.GraphProto{Name: proto.String("body"), Input: bodyIn, Output: bodyOut,
		Initializer: []*pb.TensorProto{f32Tensor("half", nil, []float32{0.5}), f32Tensor("one", nil, []float32{1})},
		Node: []*pb.NodeProto{
			nodeProto("Mul", "halve", []string{"x_in", "half"}, []string{"x_out"}),
			nodeProto("ReduceSum", "sum", []string{"x_out"}, []string{"s"}, intAttr("keepdims", 0)),
			nodeProto("Greater", "more", []string{"s", "one"}, []string{"cond_out"}),
			nodeProto("Identity", "scan", []string{"s"}, []string{"s_scan"}),
		}}
	inputs := []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 3)}
	var inits []*pb.TensorProto
	if m != "" {
		inits = append(inits, &pb.TensorProto{Name: proto.String(m), DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: []int64{6}})
	}
	if cond != "" {
		inits = append(inits, &pb.TensorProto{Name: proto.String(cond), DataType: proto.Int32(int32(pb.TensorProto_BOOL)), Int32Data: []int32{1}})
	}
	loop := nodeProto("Loop", "loop", []string{m, cond, "x"}, []string{"x_final", "sums"},
		&pb.AttributeProto{Name: proto.String("body"), Type: pb.AttributeProto_GRAPH.Enum(), G: body})
	return modelProto([]*pb.NodeProto{loop}, inputs,
		[]*pb.ValueInfoProto{vi("x_final", pb.TensorProto_FLOAT, 3), vi("sums", pb.TensorProto_FLOAT)}, inits...)
}

// With a trip count and no cond input, ONNX's specification ignores the
// body's condition ("for (int i=0; i < trip_count; ++i) { cond = ...; //
// ignored }"): all 6 iterations run, though the sum drops below 1 after
// 4. (ONNX Runtime 1.31 stops after 4; the importer follows the text.)
func TestLoopTripCountIgnoresCondition(t *testing.T) {
	m, err := loadCPU(t, loopModel("M", ""))
	require.NoError(t, err)
	out, err := m.Run(map[string]*core.Tensor{"x": core.FromSlice([]float32{3, 5, 2}, core.Shape{3}, core.CPU)})
	require.NoError(t, err)
	x, _ := out["x_final"].Float64s()
	assert.Equal(t, []float64{3.0 / 64, 5.0 / 64, 2.0 / 64}, x)
	sums, _ := out["sums"].Float64s()
	assert.Equal(t, []float64{5, 2.5, 1.25, 0.625, 0.3125, 0.15625}, sums)
	// With both, the condition ends it after 4.
	m, err = loadCPU(t, loopModel("M", "cond"))
	require.NoError(t, err)
	out, err = m.Run(map[string]*core.Tensor{"x": core.FromSlice([]float32{3, 5, 2}, core.Shape{3}, core.CPU)})
	require.NoError(t, err)
	assert.Equal(t, core.Shape{4}, out["sums"].Shape())
}

// A recurrent layer's gradient flows through the unrolled steps: the
// LSTM is ordinary tensor ops, so autograd differentiates it.
func TestLSTMIsDifferentiable(t *testing.T) {
	lstm := nodeProto("LSTM", "lstm", []string{"X", "W", "R"}, []string{"", "Y_h"}, intAttr("hidden_size", 2))
	mp := modelProto([]*pb.NodeProto{lstm},
		[]*pb.ValueInfoProto{vi("X", pb.TensorProto_FLOAT, 3, 1, 2)}, []*pb.ValueInfoProto{vi("Y_h", pb.TensorProto_FLOAT)},
		f32Tensor("W", []int64{1, 8, 2}, []float32{0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 0.1, -0.2, 0.3, 0.4, 0.5, -0.6, 0.7}),
		f32Tensor("R", []int64{1, 8, 2}, []float32{0.2, 0.1, -0.1, 0.3, 0.2, -0.4, 0.5, 0.1, -0.3, 0.2, 0.1, 0.1, -0.2, 0.3, 0.4, -0.1}))
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{3, 1, 2}, core.CPU).SetRequiresGrad(true)
	out, err := m.Call([]*core.Tensor{x})
	require.NoError(t, err)
	require.NoError(t, out[0].Sum().Backward())
	g, err := x.Grad().Float64s()
	require.NoError(t, err)
	nonzero := 0
	for _, v := range g {
		require.False(t, math.IsNaN(v))
		if v != 0 {
			nonzero++
		}
	}
	assert.Equal(t, len(g), nonzero, "every step's input reaches the final state: %v", g)
}

// Unsupported or malformed attributes and inputs are errors naming the
// node, the operator and the value, never a panic.
func TestRecurrentErrorsNameTheNode(t *testing.T) {
	f := func(name string, vals ...float32) *pb.AttributeProto {
		return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOATS.Enum(), Floats: vals}
	}
	strs := func(name string, vals ...string) *pb.AttributeProto {
		a := &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRINGS.Enum()}
		for _, v := range vals {
			a.Strings = append(a.Strings, []byte(v))
		}
		return a
	}
	str := func(name, v string) *pb.AttributeProto {
		return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
	}
	rnnModel := func(op string, gates int, attrs ...*pb.AttributeProto) *pb.ModelProto {
		n := nodeProto(op, "r1", []string{"X", "W", "R", "", "lens"}, []string{"Y"}, attrs...)
		return modelProto([]*pb.NodeProto{n},
			[]*pb.ValueInfoProto{vi("X", pb.TensorProto_FLOAT, "T", 1, 1)}, []*pb.ValueInfoProto{vi("Y", pb.TensorProto_FLOAT)},
			f32Tensor("W", []int64{1, int64(gates), 1}, make([]float32, gates)),
			f32Tensor("R", []int64{1, int64(gates), 1}, make([]float32, gates)),
			&pb.TensorProto{Name: proto.String("lens"), Dims: []int64{1}, DataType: proto.Int32(int32(pb.TensorProto_INT32)), Int32Data: []int32{2}})
	}
	gsModel := func(attrs ...*pb.AttributeProto) *pb.ModelProto {
		n := nodeProto("GridSample", "g1", []string{"X", "grid"}, []string{"Y"}, attrs...)
		return modelProto([]*pb.NodeProto{n},
			[]*pb.ValueInfoProto{vi("X", pb.TensorProto_FLOAT)}, []*pb.ValueInfoProto{vi("Y", pb.TensorProto_FLOAT)},
			f32Tensor("grid", []int64{1, 1, 1, 2}, []float32{0, 0}))
	}
	x1 := core.FromSlice([]float32{1, 2}, core.Shape{2, 1, 1}, core.CPU)
	x4 := core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{1, 1, 2, 2}, core.CPU)
	cases := []struct {
		name  string
		model *pb.ModelProto
		input *core.Tensor
		want  string
	}{
		{"direction", rnnModel("LSTM", 4, str("direction", "sideways")), x1,
			`node "r1" (LSTM): direction "sideways" is not one of forward, reverse, bidirectional`},
		{"activation", rnnModel("GRU", 3, strs("activations", "Sigmoid", "Swish")), x1,
			`node "r1" (GRU): activation "Swish" is not one of`},
		{"activation count", rnnModel("RNN", 1, strs("activations", "Tanh", "Relu")), x1,
			`node "r1" (RNN): activations [Tanh Relu]: want 1 names (1 per direction)`},
		{"activation_alpha type", rnnModel("RNN", 1, intAttr("activation_alpha", 1)), x1,
			`node "r1" (RNN): attribute "activation_alpha" is a INT, want FLOATS`},
		{"layout", rnnModel("RNN", 1, intAttr("layout", 2)), x1, `node "r1" (RNN): layout 2 is not 0 or 1`},
		{"hidden_size", rnnModel("LSTM", 4, intAttr("hidden_size", 3)), x1,
			`node "r1" (LSTM): hidden_size 3 does not match R's shape [1 4 1]`},
		{"clip", rnnModel("LSTM", 4, &pb.AttributeProto{Name: proto.String("clip"), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(-1)}), x1,
			`node "r1" (LSTM): clip -1 is not a positive threshold`},
		{"W shape", rnnModel("GRU", 4), x1, `node "r1" (GRU): W has shape [1 4 1], want [1, 3, 1] (directions, 3 gates x hidden_size, input_size)`},
		{"sequence_lens", rnnModel("RNN", 1), core.FromSlice([]float32{1}, core.Shape{1, 1, 1}, core.CPU),
			`node "r1" (RNN): sequence_lens[0] is 2, outside [0, 1]`},
		{"alpha list unused", rnnModel("RNN", 1, f("activation_alpha", 1, 2)), x1, ""},
		{"grid mode", gsModel(str("mode", "area")), x4,
			`node "g1" (GridSample): mode "area" is not one of linear (bilinear), nearest, cubic (bicubic)`},
		{"grid padding", gsModel(str("padding_mode", "wrap")), x4,
			`node "g1" (GridSample): padding_mode "wrap" is not one of zeros, border, reflection`},
		{"grid rank", gsModel(), core.FromSlice([]float32{1, 2}, core.Shape{1, 1, 2}, core.CPU),
			`node "g1" (GridSample): X has shape [1 1 2] and grid [1 1 1 2]`},
	}
	for _, tc := range cases {
		m, err := loadCPU(t, tc.model)
		require.NoError(t, err, tc.name)
		_, err = m.Call([]*core.Tensor{tc.input})
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
			continue
		}
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}

// Loop and Scan refuse what they cannot run, naming the node.
func TestLoopErrorsNameTheNode(t *testing.T) {
	x := core.FromSlice([]float32{3, 5, 2}, core.Shape{3}, core.CPU)
	m, err := loadCPU(t, loopModel("", ""))
	require.NoError(t, err)
	_, err = m.Call([]*core.Tensor{x})
	assert.ErrorContains(t, err, `node "loop" (Loop): neither a trip count M nor a condition is given`)

	// A body with the wrong number of inputs.
	mp := loopModel("M", "")
	mp.Graph.Node[0].Attribute[0].G.Input = mp.Graph.Node[0].Attribute[0].G.Input[1:]
	m, err = loadCPU(t, mp)
	require.NoError(t, err)
	_, err = m.Call([]*core.Tensor{x})
	assert.ErrorContains(t, err, `node "loop" (Loop): the body takes 2 inputs, want 3`)

	// An If branch with inputs is refused at load.
	body := loopModel("M", "").Graph.Node[0].Attribute[0].G
	ifNode := nodeProto("If", "if1", []string{"c"}, []string{"x_out"},
		&pb.AttributeProto{Name: proto.String("then_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: body},
		&pb.AttributeProto{Name: proto.String("else_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: body})
	_, err = loadCPU(t, modelProto([]*pb.NodeProto{ifNode}, []*pb.ValueInfoProto{vi("c", pb.TensorProto_BOOL)},
		[]*pb.ValueInfoProto{vi("x_out", pb.TensorProto_FLOAT)}))
	assert.ErrorContains(t, err, `node "if1" (If): attribute "then_branch": a branch takes no inputs, this one has 3`)

	// Scan: num_scan_inputs out of range, and opset 8's attribute in
	// opset 9's form.
	sbody := &pb.GraphProto{Name: proto.String("sb"),
		Input:  []*pb.ValueInfoProto{vi("a", pb.TensorProto_FLOAT), vi("r", pb.TensorProto_FLOAT)},
		Output: []*pb.ValueInfoProto{vi("a2", pb.TensorProto_FLOAT)},
		Node:   []*pb.NodeProto{nodeProto("Add", "add", []string{"a", "r"}, []string{"a2"})}}
	scan := func(attrs ...*pb.AttributeProto) *pb.ModelProto {
		attrs = append(attrs, &pb.AttributeProto{Name: proto.String("body"), Type: pb.AttributeProto_GRAPH.Enum(), G: sbody})
		n := nodeProto("Scan", "s1", []string{"acc", "x"}, []string{"acc_out"}, attrs...)
		return modelProto([]*pb.NodeProto{n}, []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 3)},
			[]*pb.ValueInfoProto{vi("acc_out", pb.TensorProto_FLOAT)}, f32Tensor("acc", nil, []float32{0}))
	}
	for _, tc := range []struct {
		model *pb.ModelProto
		want  string
	}{
		{scan(intAttr("num_scan_inputs", 3)), `node "s1" (Scan): num_scan_inputs 3: want 1 to 2`},
		{scan(), `node "s1" (Scan): attribute "num_scan_inputs" is required`},
		{scan(intAttr("num_scan_inputs", 1), &pb.AttributeProto{Name: proto.String("directions"), Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{0}}),
			`node "s1" (Scan): attribute "directions" is opset 8's`},
		{scan(intAttr("num_scan_inputs", 1), &pb.AttributeProto{Name: proto.String("scan_input_directions"), Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{2}}),
			`node "s1" (Scan): scan_input_directions[0] is 2, want 0 (forward) or 1 (reverse)`},
		{scan(intAttr("num_scan_inputs", 1), &pb.AttributeProto{Name: proto.String("scan_input_axes"), Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{1}}),
			`node "s1" (Scan): axis 1 is out of range for rank 1`},
	} {
		m, err := loadCPU(t, tc.model)
		require.NoError(t, err, tc.want)
		out, err := m.Call([]*core.Tensor{x})
		assert.ErrorContains(t, err, tc.want)
		assert.Nil(t, out)
	}
	// The well-formed scan sums x.
	m, err = loadCPU(t, scan(intAttr("num_scan_inputs", 1)))
	require.NoError(t, err)
	out, err := m.Call([]*core.Tensor{x})
	require.NoError(t, err)
	v, _ := out[0].Float64s()
	assert.Equal(t, []float64{10}, v)
}

// Recurrent layers, GridSample and Scan trace like any model: what is read
// on the host (sequence_lens, the step count) is specialised into the
// graph, and the compiled graph (unrolled steps, gathers) gives ONNX
// Runtime's outputs on the CPU and WebGPU.
func TestRecurrentCasesCompile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "recurrent_cases.json"))
	require.NoError(t, err)
	var file struct {
		Cases []recurrentCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	devices := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devices = append(devices, webgputest.Device)
	}
	for _, dev := range devices {
		for _, tc := range file.Cases {
			if tc.Name != "lstm_bidirectional_seq_lens" && tc.Name != "gru_reverse_linear_before_reset" &&
				tc.Name != "gridsample_cubic_reflection_align0" && tc.Name != "scan_axes_directions" {
				continue
			}
			model, err := base64.StdEncoding.DecodeString(tc.Model)
			require.NoError(t, err)
			m, err := LoadBytes(model, WithDevice(dev))
			require.NoError(t, err, tc.Name)
			ins := make([]*core.Tensor, len(m.Inputs))
			for i, in := range m.Inputs {
				ins[i] = tc.Inputs[in.Name].tensor(dev)
			}
			g, err := m.Compile(ins...)
			require.NoError(t, err, "%s on %s", tc.Name, dev)
			outs, err := g.Run(ins...)
			require.NoError(t, err, "%s on %s", tc.Name, dev)
			for i, o := range m.Outputs {
				msg := compare(outs[i], tc.Outputs[o.Name].tensor(core.CPU), false)
				assert.Empty(t, msg, "%s on %s: output %s", tc.Name, dev, o.Name)
			}
		}
	}
}
