package onnx

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// treeCase is one model of testdata/tree_models/cases.json (written by
// make_tree_models.py from onnx's reference evaluator, onnxruntime's rule
// where the two differ), the model in a file beside it.
type treeCase = referenceCase[treeJSONValue]

// treeJSONValue is a tensor (NaN written as null) or a string tensor.
type treeJSONValue struct {
	DType   string     `json:"dtype"`
	Dims    []int      `json:"dims"`
	Data    []*float64 `json:"data"`
	Strings []string   `json:"strings"`
}

func (j treeJSONValue) numbers() []float64 {
	out := make([]float64, len(j.Data))
	for i, v := range j.Data {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

func (j treeJSONValue) tensor() *core.Tensor {
	d := map[string]core.DType{"f32": core.F32, "f64": core.F64, "i64": core.I64}[j.DType]
	return core.FromFloat64s(d, core.Shape(j.Dims), j.numbers(), core.CPU)
}

func readTreeCases(t *testing.T) []treeCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tree_models", "cases.json"))
	require.NoError(t, err)
	var file struct {
		Cases []treeCase `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &file))
	require.NotEmpty(t, file.Cases)
	return file.Cases
}

func readTreeModel(t *testing.T, file string) *pb.ModelProto {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tree_models", file))
	require.NoError(t, err)
	mp := &pb.ModelProto{}
	require.NoError(t, proto.Unmarshal(data, mp))
	return mp
}

// checkTreeOutput compares floats to 1e-5 relative (1e-7 absolute near
// zero) and labels exactly.
func checkTreeOutput(t *testing.T, what string, got Value, want treeJSONValue) {
	t.Helper()
	if want.DType == "string" {
		s, ok := got.(*Strings)
		require.True(t, ok, "%s: %s, want a string tensor", what, describe(got))
		assert.Equal(t, want.Dims, []int(s.Shape), what)
		assert.Equal(t, want.Strings, s.Data, what)
		return
	}
	g, ok := got.(*core.Tensor)
	require.True(t, ok, "%s: %s, want a tensor", what, describe(got))
	w := want.tensor()
	require.Equal(t, w.DType(), g.DType(), what)
	require.Equal(t, w.Shape(), g.Shape(), what)
	gv, err := g.Float64s()
	require.NoError(t, err, what)
	wv := want.numbers()
	for i := range wv {
		if want.DType == "i64" {
			assert.Equal(t, wv[i], gv[i], "%s: element %d", what, i)
			continue
		}
		if math.Abs(gv[i]-wv[i]) > 1e-7+1e-5*math.Abs(wv[i]) {
			t.Errorf("%s: element %d is %v, want %v", what, i, gv[i], wv[i])
		}
	}
}

// TreeEnsembleRegressor and TreeEnsembleClassifier (every branch mode,
// NaN tracking, each aggregate and post_transform, two targets, the
// *_as_tensor attributes, int64 and string labels, the binary case) match
// onnx's reference evaluator, or onnxruntime's rule where the two differ.
func TestTreeEnsembleMLCases(t *testing.T) {
	run := func(t *testing.T, dev core.Device) {
		for _, tc := range readTreeCases(t) {
			t.Run(tc.Name, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("testdata", "tree_models", tc.File))
				require.NoError(t, err)
				m, err := LoadBytes(data, WithDevice(dev))
				require.NoError(t, err)
				ins := map[string]Value{}
				for name, v := range tc.Inputs {
					ins[name] = v.tensor().To(dev)
				}
				got, err := m.RunValues(ins)
				require.NoError(t, err)
				require.Len(t, got, len(tc.Outputs))
				for name, want := range tc.Outputs {
					if g, ok := got[name].(*core.Tensor); ok {
						got[name] = g.To(core.CPU)
					}
					checkTreeOutput(t, tc.Name+" ("+tc.Source+") output "+name, got[name], want)
				}
			})
		}
	}
	t.Run("cpu", func(t *testing.T) { run(t, core.CPU) })
	t.Run("webgpu", func(t *testing.T) {
		webgputest.Need(t)
		run(t, webgputest.Device)
	})
}

// setTreeAttr replaces (or adds) the node's attribute a; a nil value
// with a name removes it.
func setTreeAttr(mp *pb.ModelProto, name string, a *pb.AttributeProto) {
	n := mp.Graph.Node[0]
	n.Attribute = slices.DeleteFunc(n.Attribute, func(x *pb.AttributeProto) bool { return x.GetName() == name })
	if a != nil {
		n.Attribute = append(n.Attribute, a)
	}
}

func treeAttr(mp *pb.ModelProto, name string) *pb.AttributeProto {
	for _, a := range mp.Graph.Node[0].Attribute {
		if a.GetName() == name {
			return proto.Clone(a).(*pb.AttributeProto)
		}
	}
	return nil
}

// anyShape declares the model's input X of element type elem and any
// shape.
func anyShape(mp *pb.ModelProto, elem pb.TensorProto_DataType) {
	mp.Graph.Input[0].Type.GetTensorType().ElemType = proto.Int32(int32(elem))
	mp.Graph.Input[0].Type.GetTensorType().Shape = nil
}

func stringsAttribute(name string, v ...string) *pb.AttributeProto {
	a := &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRINGS.Enum()}
	for _, s := range v {
		a.Strings = append(a.Strings, []byte(s))
	}
	return a
}

func stringAttribute(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// Attributes out of the specification are refused at load, naming the
// node, the attribute and the value.
func TestTreeEnsembleMLRefusals(t *testing.T) {
	type edit func(mp *pb.ModelProto)
	set := func(a *pb.AttributeProto) edit { return func(mp *pb.ModelProto) { setTreeAttr(mp, a.GetName(), a) } }
	change := func(name string, f func(a *pb.AttributeProto)) edit {
		return func(mp *pb.ModelProto) {
			a := treeAttr(mp, name)
			f(a)
			setTreeAttr(mp, name, a)
		}
	}
	cases := []struct {
		file  string
		edits []edit
		want  string
	}{
		{"regressor_sum.onnx", []edit{change("nodes_modes", func(a *pb.AttributeProto) { a.Strings[3] = []byte("BRANCH_XYZ") })},
			`nodes_modes[3] (tree 1, node 1) is "BRANCH_XYZ", not one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ or LEAF`},
		{"regressor_sum.onnx", []edit{change("nodes_modes", func(a *pb.AttributeProto) { a.Strings[0] = []byte("BRANCH_MEMBER") })},
			`nodes_modes[0] (tree 0, node 0) is "BRANCH_MEMBER", not one of`},
		{"regressor_sum.onnx", []edit{change("nodes_values", func(a *pb.AttributeProto) { a.Floats = a.Floats[1:] })},
			`attribute "nodes_values" has 14 values for the 15 nodes of nodes_treeids`},
		{"regressor_sum.onnx", []edit{change("nodes_missing_value_tracks_true", func(a *pb.AttributeProto) { a.Ints = a.Ints[1:] })},
			`attribute "nodes_missing_value_tracks_true" has 14 values for the 15 nodes of nodes_treeids`},
		{"regressor_sum.onnx", []edit{change("target_weights", func(a *pb.AttributeProto) { a.Floats = append(a.Floats, 1) })},
			`attribute "target_weights" has 10 values for the 9 of target_ids`},
		{"regressor_sum.onnx", []edit{change("nodes_truenodeids", func(a *pb.AttributeProto) { a.Ints[0] = 9 })},
			`nodes_truenodeids[0] (tree 0, node 0) is 9, not a node of tree 0`},
		{"regressor_sum.onnx", []edit{change("nodes_falsenodeids", func(a *pb.AttributeProto) { a.Ints[1] = 0 })},
			`node 0 is its own descendant`},
		{"regressor_sum.onnx", []edit{change("nodes_nodeids", func(a *pb.AttributeProto) { a.Ints[1] = 0 })},
			`node 1 (nodes_treeids 0, nodes_nodeids 0) repeats node 0`},
		{"regressor_sum.onnx", []edit{change("target_nodeids", func(a *pb.AttributeProto) { a.Ints[2] = 0 })},
			`target_treeids[2] and target_nodeids[2] (tree 1, node 0) name node 2, a BRANCH_GTE node, not a LEAF`},
		{"regressor_sum.onnx", []edit{change("target_nodeids", func(a *pb.AttributeProto) { a.Ints[2] = 42 })},
			`target_treeids[2] and target_nodeids[2] (tree 1, node 42) name no node`},
		{"regressor_sum.onnx", []edit{change("target_ids", func(a *pb.AttributeProto) { a.Ints[2] = 1 })},
			`target_ids[2] is 1, outside [0, 1) (n_targets)`},
		{"regressor_sum.onnx", []edit{set(stringAttribute("aggregate_function", "MEDIAN"))},
			`attribute "aggregate_function" is "MEDIAN", not one of SUM, AVERAGE, MIN, MAX`},
		{"regressor_sum.onnx", []edit{set(stringAttribute("post_transform", "PROBIT"))},
			`post_transform "PROBIT" is not supported (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO)`},
		{"regressor_sum.onnx", []edit{set(stringAttribute("post_transform", "EXP"))},
			`attribute "post_transform" is "EXP", not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT`},
		{"regressor_sum.onnx", []edit{set(intAttribute("n_targets", 0))}, `n_targets is 0: want at least one target`},
		{"regressor_sum.onnx", []edit{func(mp *pb.ModelProto) { setTreeAttr(mp, "n_targets", nil) }}, `attribute "n_targets" is required`},
		{"regressor_sum.onnx", []edit{set(floatsAttribute("base_values", 1, 2))}, `attribute "base_values" has 2 values for 1 targets (n_targets)`},
		{"regressor_sum.onnx", []edit{set(intsAttribute("nodes_modes", 1))}, `attribute "nodes_modes" is a INTS, want STRINGS`},
		{"regressor_as_tensor.onnx", []edit{set(floatsAttribute("nodes_values", 1))},
			`attributes "nodes_values" and "nodes_values_as_tensor" are both given: one of them, please`},
		{"classifier_int_none.onnx", []edit{change("class_ids", func(a *pb.AttributeProto) { a.Ints[5] = 3 })},
			`class_ids[5] is 3, outside [0, 3) (the 3 labels of classlabels_int64s)`},
		{"classifier_str_none.onnx", []edit{change("class_ids", func(a *pb.AttributeProto) { a.Ints[4] = -1 })},
			`class_ids[4] is -1, outside [0, 3) (the 3 labels of classlabels_strings)`},
		{"classifier_int_none.onnx", []edit{set(stringsAttribute("classlabels_strings", "a", "b", "c"))},
			`attributes "classlabels_int64s" and "classlabels_strings" are both given`},
		{"classifier_int_none.onnx", []edit{set(intsAttribute("classlabels_int64s", 7))},
			`classlabels_int64s has 1 labels: want at least 2`},
		{"classifier_int_none.onnx", []edit{set(floatsAttribute("base_values", 1, 2))},
			`attribute "base_values" has 2 values for 3 classes (classlabels_int64s)`},
		{"classifier_int_none.onnx", []edit{change("class_nodeids", func(a *pb.AttributeProto) { a.Ints = a.Ints[1:] })},
			`attribute "class_nodeids" has 26 values for the 27 of class_ids`},
		{"binary_logistic.onnx", []edit{change("class_ids", func(a *pb.AttributeProto) {
			for i := range a.Ints {
				a.Ints[i] = 2
			}
		})}, `class_ids[0] is 2, outside [0, 2) (the 2 labels of classlabels_int64s)`},
	}
	for _, tc := range cases {
		mp := readTreeModel(t, tc.file)
		for _, e := range tc.edits {
			e(mp)
		}
		_, err := loadCPU(t, mp)
		require.Error(t, err, tc.want)
		op := mp.Graph.Node[0].GetOpType()
		assert.ErrorContains(t, err, `node "trees" (`+op+`): `, tc.want)
		assert.ErrorContains(t, err, tc.want)
	}
	mp := readTreeModel(t, "regressor_sum.onnx")
	anyShape(mp, pb.TensorProto_FLOAT)
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	_, err = m.Call([]*core.Tensor{core.Zeros(core.Shape{1, 2}, core.F32, core.CPU)})
	assert.ErrorContains(t, err, `node "trees" (TreeEnsembleRegressor): nodes_featureids[`)
	assert.ErrorContains(t, err, `is 2, but X has 2 features`)
	_, err = m.Call([]*core.Tensor{core.Zeros(core.Shape{1, 2, 3}, core.F32, core.CPU)})
	assert.ErrorContains(t, err, `X is a f32 tensor of shape [1 2 3], want [N, F] of float, double, int64 or int32`)
}

// Integer features are compared as floats, a vector is one sample, and a
// NaN reaching a BRANCH_NEQ node goes to its true branch (NaN != t) even
// where nodes_missing_value_tracks_true is 0, as in onnxruntime (the
// reference would take the false branch).
func TestTreeEnsembleMLInputs(t *testing.T) {
	byName := map[string]treeCase{}
	for _, tc := range readTreeCases(t) {
		byName[tc.Name] = tc
	}
	sum := byName["regressor_sum"]
	want := sum.Outputs["Y"].numbers()
	mp := readTreeModel(t, "regressor_sum.onnx")
	anyShape(mp, pb.TensorProto_INT64)
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	ints := core.FromSlice([]int64{2, 3, 0, 0, 0, 5, -2, 5, 1}, core.Shape{3, 3}, core.CPU)
	out, err := m.Call([]*core.Tensor{ints})
	require.NoError(t, err)
	assertClose(t, []float64{want[4], want[5], want[6]}, floats(t, out[0]), 1e-6, "int64 X")

	anyShape(mp, pb.TensorProto_DOUBLE)
	m, err = loadCPU(t, mp)
	require.NoError(t, err)
	out, err = m.Call([]*core.Tensor{core.FromSlice([]float64{0.5, 2, 1}, core.Shape{3}, core.CPU)})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 1}, []int(out[0].Shape()))
	assert.Equal(t, core.F32, out[0].DType())
	assertClose(t, want[:1], floats(t, out[0]), 1e-6, "one sample, float64 X")

	// A float64 X computes in float64; a target no leaf reached still
	// holds float32's largest value, as for a float32 X.
	least := byName["regressor_two_targets_min"]
	mp = readTreeModel(t, least.File)
	anyShape(mp, pb.TensorProto_DOUBLE)
	m, err = loadCPU(t, mp)
	require.NoError(t, err)
	out, err = m.Call([]*core.Tensor{least.Inputs["X"].tensor().Cast(core.F64)})
	require.NoError(t, err)
	require.Contains(t, least.Outputs["Y"].numbers(), float64(math.MaxFloat32))
	checkTreeOutput(t, "MIN over float64 X", out[0], least.Outputs["Y"])

	// Row 7 ([1, -1, NaN]) reaches tree 1's BRANCH_NEQ node (index 8),
	// which tracks missing values to the true branch; without the
	// tracking it still goes there.
	mp = readTreeModel(t, "regressor_sum.onnx")
	tracks := treeAttr(mp, "nodes_missing_value_tracks_true")
	require.Equal(t, "BRANCH_NEQ", string(treeAttr(mp, "nodes_modes").Strings[8]))
	require.Equal(t, int64(1), tracks.Ints[8])
	tracks.Ints[8] = 0
	setTreeAttr(mp, tracks.GetName(), tracks)
	m, err = loadCPU(t, mp)
	require.NoError(t, err)
	nan := float32(math.NaN())
	out, err = m.Call([]*core.Tensor{core.FromSlice([]float32{1, -1, nan}, core.Shape{1, 3}, core.CPU)})
	require.NoError(t, err)
	assertClose(t, want[7:], floats(t, out[0]), 1e-6, "NaN at BRANCH_NEQ")
}
