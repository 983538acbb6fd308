package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// ONNX's node tests cover the string operators one at a time and no
// movement operator on strings, no Cast to or from STRING (ONNX 1.23
// dropped those cases) and no malformed use; these do.

func strAttr(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func stringsAttr(name string, vs ...string) *pb.AttributeProto {
	a := &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRINGS.Enum()}
	for _, v := range vs {
		a.Strings = append(a.Strings, []byte(v))
	}
	return a
}

func stringTensor(name string, dims []int64, vs ...string) *pb.TensorProto {
	tp := &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(pb.TensorProto_STRING))}
	for _, v := range vs {
		tp.StringData = append(tp.StringData, []byte(v))
	}
	return tp
}

// textModel is the kind of pre-processing a text model starts with:
// words [2, 3] are lowercased, reshaped, transposed, gathered, joined
// with a suffix, compared, matched, looked up, counted and cast both
// ways.
func textModel() *pb.ModelProto {
	return modelProto([]*pb.NodeProto{
		nodeProto("Reshape", "flat", []string{"words", "six"}, []string{"flat"}),
		nodeProto("StringNormalizer", "lower", []string{"flat"}, []string{"lowered"}, strAttr("case_change_action", "LOWER")),
		nodeProto("Reshape", "grid", []string{"lowered", "two_three"}, []string{"grid"}),
		nodeProto("Transpose", "cols", []string{"grid"}, []string{"cols"}),
		nodeProto("Gather", "pick", []string{"cols", "idx"}, []string{"picked"}, intAttr("axis", 0)),
		nodeProto("Constant", "bang", nil, []string{"bang"}, strAttr("value_string", "!")),
		nodeProto("StringConcat", "join", []string{"picked", "bang"}, []string{"joined"}),
		nodeProto("Equal", "is_cat", []string{"lowered", "cat"}, []string{"is_cat"}),
		nodeProto("RegexFullMatch", "has_digit", []string{"lowered"}, []string{"has_digit"}, strAttr("pattern", `[a-z]*\d+[a-z]*`)),
		nodeProto("Where", "cats", []string{"is_cat", "lowered", "dog"}, []string{"swapped"}),
		nodeProto("Shape", "shape", []string{"grid"}, []string{"shape"}),
		nodeProto("Cast", "to_str", []string{"nums"}, []string{"num_strs"}, intAttr("to", int64(pb.TensorProto_STRING))),
		nodeProto("Cast", "to_f32", []string{"num_strs"}, []string{"back"}, intAttr("to", int64(pb.TensorProto_FLOAT))),
		{OpType: proto.String("LabelEncoder"), Domain: proto.String(mlDomain), Name: proto.String("ids"), Input: []string{"lowered"},
			Output: []string{"ids"}, Attribute: []*pb.AttributeProto{stringsAttr("keys_strings", "cat", "dog"),
				{Name: proto.String("values_int64s"), Type: pb.AttributeProto_INTS.Enum(), Ints: []int64{7, 8}}}},
	}, []*pb.ValueInfoProto{vi("words", pb.TensorProto_STRING, 2, 3), vi("nums", pb.TensorProto_FLOAT, 3)},
		[]*pb.ValueInfoProto{vi("joined", pb.TensorProto_STRING), vi("is_cat", pb.TensorProto_BOOL), vi("has_digit", pb.TensorProto_BOOL),
			vi("swapped", pb.TensorProto_STRING), vi("shape", pb.TensorProto_INT64), vi("num_strs", pb.TensorProto_STRING),
			vi("back", pb.TensorProto_FLOAT), vi("ids", pb.TensorProto_INT64)},
		i64Tensor("six", 6), i64Tensor("two_three", 2, 3), i64Tensor("idx", 2, 0),
		stringTensor("cat", nil, "cat"), stringTensor("dog", nil, "dog"))
}

func withMLDomain(m *pb.ModelProto) *pb.ModelProto {
	m.OpsetImport = append(m.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String(mlDomain), Version: proto.Int64(4)})
	return m
}

func TestStringPreprocessingRunsOnEveryDevice(t *testing.T) {
	devices := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devices = append(devices, webgputest.Device)
	}
	for _, dev := range devices {
		m, err := LoadBytes(marshal(withMLDomain(textModel())), WithDevice(dev))
		require.NoError(t, err)
		assert.Equal(t, KindStrings, m.Inputs[0].Kind)
		words, err := NewStrings(core.Shape{2, 3}, []string{"Cat", "DOG", "b1rd", "cat", "Fish", "x42"})
		require.NoError(t, err)
		nums := core.FromSlice([]float32{0.5, 1e7, float32(math.Inf(-1))}, core.Shape{3}, core.CPU)
		out, err := m.RunValues(map[string]Value{"words": words, "nums": nums})
		require.NoError(t, err, dev)

		// grid [[cat dog b1rd] [cat fish x42]], its columns [[cat cat] [dog fish] [b1rd x42]]
		assert.Equal(t, &Strings{Shape: core.Shape{2, 2}, Data: []string{"b1rd!", "x42!", "cat!", "cat!"}}, out["joined"])
		assert.Equal(t, &Strings{Shape: core.Shape{6}, Data: []string{"cat", "dog", "dog", "cat", "dog", "dog"}}, out["swapped"])
		assert.Equal(t, &Strings{Shape: core.Shape{3}, Data: []string{"0.5", "1e+07", "-INF"}}, out["num_strs"])
		for name, want := range map[string][]float64{
			"is_cat": {1, 0, 0, 1, 0, 0}, "has_digit": {0, 0, 1, 0, 0, 1}, "shape": {2, 3},
			"back": {0.5, 1e7, math.Inf(-1)}, "ids": {7, 8, -1, 7, -1, -1},
		} {
			got := out[name].(*core.Tensor)
			assert.Equal(t, dev, got.Device(), name)
			v, err := got.Float64s()
			require.NoError(t, err)
			assert.Equal(t, want, v, name)
		}

		_, err = m.Run(map[string]*core.Tensor{"nums": nums})
		assert.ErrorContains(t, err, `input "words" is a string tensor, which Run, Call and the C ABI (so every SDK) do not carry yet: use Model.RunValues`)
		_, err = m.Call([]*core.Tensor{nums, nums})
		assert.ErrorContains(t, err, "use Model.RunValues")
	}
}

// stringModel is one node over a string input x [n] and, where the node
// takes a second input, y.
func stringModel(node *pb.NodeProto, y *pb.ValueInfoProto, inits ...*pb.TensorProto) *pb.ModelProto {
	inputs := []*pb.ValueInfoProto{vi("x", pb.TensorProto_STRING, "n")}
	if y != nil {
		inputs = append(inputs, y)
	}
	return modelProto([]*pb.NodeProto{node}, inputs, []*pb.ValueInfoProto{{Name: proto.String("z")}}, inits...)
}

func runStrings(t *testing.T, m *pb.ModelProto, inputs map[string]Value) (Value, error) {
	t.Helper()
	model, err := loadCPU(t, m)
	require.NoError(t, err)
	out, err := model.RunValues(inputs)
	if err != nil {
		return nil, err
	}
	return out["z"], nil
}

func TestStringErrorsNameTheNodeAndValues(t *testing.T) {
	x, err := NewStrings(core.Shape{3}, []string{"1.5", "abc", "7"})
	require.NoError(t, err)
	f := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}, core.CPU)

	_, err = runStrings(t, stringModel(nodeProto("Add", "add", []string{"x", "y"}, []string{"z"}), vi("y", pb.TensorProto_FLOAT, 3)),
		map[string]Value{"x": x, "y": f})
	assert.ErrorContains(t, err, `node "add" (Add): input 0 ("x") is a string tensor of shape [3]; Add does not take string tensors (these operators do: Cast, CastLike, Compress, Concat, Equal,`)

	_, err = runStrings(t, stringModel(nodeProto("Cast", "num", []string{"x"}, []string{"z"}, intAttr("to", int64(pb.TensorProto_FLOAT))), nil),
		map[string]Value{"x": x})
	assert.ErrorContains(t, err, `node "num" (Cast): element 1 ("abc") of input 0 ("x") is not a number, so it cannot be cast to FLOAT`)

	_, err = runStrings(t, stringModel(nodeProto("Concat", "cat", []string{"x", "y"}, []string{"z"}, intAttr("axis", 0)), vi("y", pb.TensorProto_FLOAT, 3)),
		map[string]Value{"x": x, "y": f})
	assert.ErrorContains(t, err, `node "cat" (Concat): input 0 ("x") is a string tensor of shape [3] and input 1 ("y") is a f32 tensor of shape [3]: Concat's values must all be strings or all numbers`)

	_, err = runStrings(t, stringModel(nodeProto("Equal", "eq", []string{"x", "y"}, []string{"z"}), vi("y", pb.TensorProto_FLOAT, 3)),
		map[string]Value{"x": x, "y": f})
	assert.ErrorContains(t, err, `node "eq" (Equal): input 1 ("y") is a f32 tensor of shape [3], want a string tensor`)

	_, err = runStrings(t, stringModel(nodeProto("Gather", "g", []string{"y", "x"}, []string{"z"}), vi("y", pb.TensorProto_FLOAT, 3)),
		map[string]Value{"x": x, "y": f})
	assert.ErrorContains(t, err, `node "g" (Gather): input 1 ("x") is a string tensor of shape [3]: Gather takes numbers there`)

	_, err = runStrings(t, stringModel(nodeProto("Reshape", "r", []string{"x", "bad"}, []string{"z"}), nil, i64Tensor("bad", 2)),
		map[string]Value{"x": x})
	assert.ErrorContains(t, err, `node "r" (Reshape)`)

	_, err = runStrings(t, stringModel(nodeProto("StringConcat", "sc", []string{"x", "y"}, []string{"z"}), vi("y", pb.TensorProto_STRING, 2)),
		map[string]Value{"x": x, "y": &Strings{Shape: core.Shape{2}, Data: []string{"a", "b"}}})
	assert.ErrorContains(t, err, `node "sc" (StringConcat): inputs "x" [3] and "y" [2]`)

	_, err = loadCPU(t, stringModel(nodeProto("RegexFullMatch", "re", []string{"x"}, []string{"z"}, strAttr("pattern", `(a`)), nil))
	assert.ErrorContains(t, err, `node "re" (RegexFullMatch): attribute "pattern" "(a" is not a valid RE2 expression`)
	_, err = loadCPU(t, stringModel(nodeProto("RegexFullMatch", "re", []string{"x"}, []string{"z"}, strAttr("pattern", `(?<=a)b`)), nil))
	assert.ErrorContains(t, err, "is not a valid RE2 expression", "lookbehind is not RE2")

	model, err := loadCPU(t, stringModel(nodeProto("Identity", "id", []string{"x"}, []string{"z"}), nil))
	require.NoError(t, err)
	_, err = model.RunValues(map[string]Value{"x": f})
	assert.ErrorContains(t, err, `input "x": the model declares a string tensor, got a f32 tensor of shape [3]`)
	_, err = model.RunValues(map[string]Value{"x": &Strings{Shape: core.Shape{3}, Data: []string{"a"}}})
	assert.ErrorContains(t, err, `input "x": string tensor of shape [3] holds 1 strings, want 3`)
	_, err = model.RunValues(map[string]Value{"x": &Strings{Shape: core.Shape{2, 2}, Data: []string{"a", "b", "c", "d"}}})
	assert.ErrorContains(t, err, `input "x": shape [2 2] has rank 2, the model declares rank 1`)

	_, err = loadCPU(t, modelProto(nil, []*pb.ValueInfoProto{seqVI("s", pb.TensorProto_STRING)}, []*pb.ValueInfoProto{seqVI("s", pb.TensorProto_STRING)}))
	assert.ErrorContains(t, err, `graph input "s": a sequence of tensors of strings is not supported`)
}

func TestCastWritesAndReadsNumbersAsONNXDoes(t *testing.T) {
	// NumPy's str, ONNX's reference (numpy 2.4), for each case.
	for _, c := range []struct {
		f    float64
		dt   core.DType
		want string
	}{
		{0.1, core.F32, "0.1"}, {1, core.F32, "1.0"}, {100, core.F32, "100.0"}, {123456, core.F32, "123456.0"},
		{1e6, core.F32, "1e+06"}, {1234567, core.F32, "1.234567e+06"}, {123456789, core.F32, "1.2345679e+08"},
		{1e-5, core.F32, "1e-05"}, {0.00012, core.F32, "0.00012"}, {1e-4, core.F32, "1e-04"}, {0.47892547, core.F32, "0.47892547"},
		{math.Copysign(0, -1), core.F32, "-0.0"}, {0, core.F64, "0.0"},
		{1e15, core.F64, "1000000000000000.0"}, {1e16, core.F64, "1e+16"}, {1234567, core.F64, "1234567.0"}, {1e-4, core.F64, "0.0001"},
		{0.1, core.F16, "0.1"}, {1000, core.F16, "1e+03"}, {1234.5, core.F16, "1.234e+03"}, {65504, core.F16, "6.55e+04"},
		{0.47892547, core.F16, "0.479"}, {0.1, core.BF16, "0.1"},
		{math.NaN(), core.F32, "NaN"}, {math.Inf(1), core.F64, "INF"}, {math.Inf(-1), core.F16, "-INF"},
	} {
		x := core.FromFloat64s(c.dt, core.Shape{1}, []float64{c.f}, core.CPU)
		got, err := formatNumbers(x, naturalType(c.dt))
		require.NoError(t, err)
		assert.Equal(t, c.want, got[0], "%v as %s", c.f, c.dt)
	}
	got, err := formatNumbers(core.FromSlice([]bool{true, false}, core.Shape{2}, core.CPU), pb.TensorProto_BOOL)
	require.NoError(t, err)
	assert.Equal(t, []string{"True", "False"}, got)
	got, err = formatNumbers(core.FromSlice([]int64{-5, 7}, core.Shape{2}, core.CPU), pb.TensorProto_INT64)
	require.NoError(t, err)
	assert.Equal(t, []string{"-5", "7"}, got)

	words := []string{"0.47892547", "INF", "+INF", "-inf", "NaN", "1E8", " 7 ", "100.5", "-0"}
	x := &Strings{Shape: core.Shape{len(words)}, Data: words}
	for to, want := range map[pb.TensorProto_DataType][]float64{
		pb.TensorProto_FLOAT:  {float64(float32(0.47892547)), math.Inf(1), math.Inf(1), math.Inf(-1), math.NaN(), 1e8, 7, 100.5, 0},
		pb.TensorProto_DOUBLE: {0.47892547, math.Inf(1), math.Inf(1), math.Inf(-1), math.NaN(), 1e8, 7, 100.5, 0},
	} {
		got, err := runStrings(t, stringModel(nodeProto("Cast", "c", []string{"x"}, []string{"z"}, intAttr("to", int64(to))), nil),
			map[string]Value{"x": x})
		require.NoError(t, err)
		v, err := got.(*core.Tensor).Float64s()
		require.NoError(t, err)
		for i := range want {
			if math.IsNaN(want[i]) {
				assert.True(t, math.IsNaN(v[i]), "%s %q", to, words[i])
			} else {
				assert.Equal(t, want[i], v[i], "%s %q", to, words[i])
			}
		}
	}
	ints := &Strings{Shape: core.Shape{4}, Data: []string{"100.5", "-7", "300", "9007199254740993"}}
	got8, err := runStrings(t, stringModel(nodeProto("Cast", "c", []string{"x"}, []string{"z"}, intAttr("to", int64(pb.TensorProto_INT64))), nil),
		map[string]Value{"x": ints})
	require.NoError(t, err)
	v, err := got8.(*core.Tensor).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{100, -7, 300, 9007199254740993}, v, "integers are read exactly, a fraction dropped")

	like, err := runStrings(t, stringModel(nodeProto("CastLike", "c", []string{"y", "x"}, []string{"z"}), vi("y", pb.TensorProto_INT8, 2)),
		map[string]Value{"x": x, "y": core.FromSlice([]int8{-3, 4}, core.Shape{2}, core.CPU)})
	require.NoError(t, err)
	assert.Equal(t, &Strings{Shape: core.Shape{2}, Data: []string{"-3", "4"}}, like)
}

// loopStringsModel appends "!" to a string three times in a Loop and
// picks it or a constant with If.
func loopStringsModel() *pb.ModelProto {
	body := &pb.GraphProto{Name: proto.String("body"),
		Input:  []*pb.ValueInfoProto{vi("i", pb.TensorProto_INT64), vi("c_in", pb.TensorProto_BOOL), vi("s_in", pb.TensorProto_STRING)},
		Output: []*pb.ValueInfoProto{vi("c_out", pb.TensorProto_BOOL), vi("s_out", pb.TensorProto_STRING)},
		Node: []*pb.NodeProto{
			nodeProto("Identity", "keep", []string{"c_in"}, []string{"c_out"}),
			nodeProto("StringConcat", "bang", []string{"s_in", "bang"}, []string{"s_out"}),
		}, Initializer: []*pb.TensorProto{stringTensor("bang", nil, "!")}}
	then := &pb.GraphProto{Name: proto.String("then"), Output: []*pb.ValueInfoProto{vi("t", pb.TensorProto_STRING)},
		Node: []*pb.NodeProto{nodeProto("Identity", "t", []string{"looped"}, []string{"t"})}}
	els := &pb.GraphProto{Name: proto.String("else"), Output: []*pb.ValueInfoProto{vi("e", pb.TensorProto_STRING)},
		Node: []*pb.NodeProto{nodeProto("Constant", "e", nil, []string{"e"}, stringsAttr("value_strings", "no"))}}
	return modelProto([]*pb.NodeProto{
		nodeProto("Loop", "loop", []string{"three", "", "x"}, []string{"looped"},
			&pb.AttributeProto{Name: proto.String("body"), Type: pb.AttributeProto_GRAPH.Enum(), G: body}),
		nodeProto("If", "pick", []string{"cond"}, []string{"z"},
			&pb.AttributeProto{Name: proto.String("then_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: then},
			&pb.AttributeProto{Name: proto.String("else_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: els}),
	}, []*pb.ValueInfoProto{vi("x", pb.TensorProto_STRING, 1), vi("cond", pb.TensorProto_BOOL)},
		[]*pb.ValueInfoProto{vi("z", pb.TensorProto_STRING)}, i64Tensor("three", 3))
}

func TestIfAndLoopCarryStrings(t *testing.T) {
	m, err := loadCPU(t, loopStringsModel())
	require.NoError(t, err)
	x := &Strings{Shape: core.Shape{1}, Data: []string{"hi"}}
	for cond, want := range map[bool]string{true: "hi!!!", false: "no"} {
		out, err := m.RunValues(map[string]Value{"x": x, "cond": core.FromSlice([]bool{cond}, core.Shape{}, core.CPU)})
		require.NoError(t, err)
		assert.Equal(t, &Strings{Shape: core.Shape{1}, Data: []string{want}}, out["z"])
	}
}

func TestStringInitializerOverride(t *testing.T) {
	mp := stringModel(nodeProto("StringConcat", "sc", []string{"x", "suffix"}, []string{"z"}), vi("suffix", pb.TensorProto_STRING),
		stringTensor("suffix", nil, "?"))
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	x := &Strings{Shape: core.Shape{3}, Data: []string{"a", "b", "c"}}
	out, err := m.RunValues(map[string]Value{"x": x})
	require.NoError(t, err)
	assert.Equal(t, []string{"a?", "b?", "c?"}, out["z"].(*Strings).Data)
	out, err = m.RunValues(map[string]Value{"x": x, "suffix": &Strings{Shape: core.Shape{}, Data: []string{"!"}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a!", "b!", "c!"}, out["z"].(*Strings).Data)
	_, err = m.RunValues(map[string]Value{"x": x, "suffix": core.FromSlice([]float32{1}, core.Shape{}, core.CPU)})
	assert.ErrorContains(t, err, `input "suffix" overrides an initializer, a string tensor; got a f32 tensor`)
}

func TestLabelEncoderAlone(t *testing.T) {
	// A model that imports ai.onnx.ml only (as scikit-learn's exporters
	// write one-operator models): float keys, NaN included, to strings.
	enc := &pb.NodeProto{OpType: proto.String("LabelEncoder"), Domain: proto.String(mlDomain), Name: proto.String("enc"),
		Input: []string{"x"}, Output: []string{"z"}, Attribute: []*pb.AttributeProto{
			{Name: proto.String("keys_floats"), Type: pb.AttributeProto_FLOATS.Enum(), Floats: []float32{0.5, float32(math.NaN()), 2, 2}},
			stringsAttr("values_strings", "half", "nan", "two", "TWO"),
		}}
	mp := modelProto([]*pb.NodeProto{enc}, []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 4)}, []*pb.ValueInfoProto{vi("z", pb.TensorProto_STRING)})
	mp.OpsetImport = []*pb.OperatorSetIdProto{{Domain: proto.String(mlDomain), Version: proto.Int64(4)}}
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	out, err := m.RunValues(map[string]Value{"x": core.FromSlice([]float32{2, float32(math.NaN()), 0.5, 3}, core.Shape{4}, core.CPU)})
	require.NoError(t, err)
	assert.Equal(t, &Strings{Shape: core.Shape{4}, Data: []string{"TWO", "nan", "half", "_Unused"}}, out["z"])

	_, err = m.RunValues(map[string]Value{"x": core.FromSlice([]int64{1, 2, 3, 4}, core.Shape{4}, core.CPU)})
	assert.ErrorContains(t, err, `input "x": dtype i64, the model declares f32`)

	mp.Graph.Node = append(mp.Graph.Node, nodeProto("Identity", "id", []string{"z"}, []string{"w"}))
	_, err = loadCPU(t, mp)
	assert.ErrorContains(t, err, `node "id" (Identity): the model imports no default-domain opset`)

	enc.Attribute = enc.Attribute[:1]
	mp.Graph.Node = mp.Graph.Node[:1]
	_, err = loadCPU(t, mp)
	assert.ErrorContains(t, err, `node "enc" (LabelEncoder): exactly one values_* attribute is required, got []`)
}
