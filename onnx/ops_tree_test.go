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

// treeAttrs is a forest of three trees over two features: a two-level
// tree (LEQ, then LT with NaN tracking true), a set-membership stump and
// a tree that is one leaf (both branches of its root lead there).
func treeAttrs() map[string]*pb.AttributeProto {
	nan := float32(math.NaN())
	tensor := func(name string, dt pb.TensorProto_DataType, v ...float32) *pb.AttributeProto {
		tp := f32Tensor(name, []int64{int64(len(v))}, v)
		if dt == pb.TensorProto_UINT8 {
			raw := make([]byte, len(v))
			for i, x := range v {
				raw[i] = byte(x)
			}
			tp = &pb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))}, DataType: proto.Int32(int32(dt)), RawData: raw}
		}
		return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_TENSOR.Enum(), T: tp}
	}
	list := []*pb.AttributeProto{
		intsAttribute("nodes_featureids", 0, 1, 1, 0),
		tensor("nodes_modes", pb.TensorProto_UINT8, 0, 1, 6, 0),
		tensor("nodes_splits", pb.TensorProto_FLOAT, 0.5, 2, nan, 0),
		intsAttribute("nodes_truenodeids", 0, 1, 3, 5), intsAttribute("nodes_trueleafs", 1, 1, 1, 1),
		intsAttribute("nodes_falsenodeids", 1, 2, 4, 5), intsAttribute("nodes_falseleafs", 0, 1, 1, 1),
		intsAttribute("nodes_missing_value_tracks_true", 0, 1, 0, 0),
		tensor("membership_values", pb.TensorProto_FLOAT, 1, 5, nan),
		intsAttribute("leaf_targetids", 0, 1, 0, 1, 1, 0),
		tensor("leaf_weights", pb.TensorProto_FLOAT, 1, 2, 3, 10, -4, 0.5),
		intsAttribute("tree_roots", 0, 2, 3),
		intAttribute("n_targets", 2),
	}
	m := map[string]*pb.AttributeProto{}
	for _, a := range list {
		m[a.GetName()] = a
	}
	return m
}

func treeModel(attrs map[string]*pb.AttributeProto) *pb.ModelProto {
	var list []*pb.AttributeProto
	for _, name := range mlOperators["TreeEnsemble"].attrs { // a fixed order
		if a := attrs[name]; a != nil {
			list = append(list, a)
		}
	}
	n := &pb.NodeProto{OpType: proto.String("TreeEnsemble"), Domain: proto.String(mlDomain), Name: proto.String("trees"),
		Input: []string{"X"}, Output: []string{"Y"}, Attribute: list}
	mp := modelProto([]*pb.NodeProto{n}, []*pb.ValueInfoProto{vi("X", pb.TensorProto_FLOAT, "N", 2)}, []*pb.ValueInfoProto{vi("Y", pb.TensorProto_FLOAT)})
	mp.OpsetImport = []*pb.OperatorSetIdProto{{Domain: proto.String(mlDomain), Version: proto.Int64(5)}}
	return mp
}

func TestTreeEnsembleAggregates(t *testing.T) {
	nan := float32(math.NaN())
	x := core.FromSlice([]float32{0.2, 7, 1, 1, 1, nan, nan, 3}, core.Shape{4, 2}, core.CPU)
	sum := []float64{1.5, -4, 0.5, 12, 0.5, -2, 3.5, -4}
	sigmoid := make([]float64, len(sum))
	for i, v := range sum {
		sigmoid[i] = 1 / (1 + math.Exp(-v))
	}
	cases := []struct {
		extra []*pb.AttributeProto
		want  []float64
	}{
		{nil, sum},
		{[]*pb.AttributeProto{intAttribute("aggregate_function", 0)}, []float64{0.5, -4.0 / 3, 0.5 / 3, 4, 0.5 / 3, -2.0 / 3, 3.5 / 3, -4.0 / 3}},
		{[]*pb.AttributeProto{intAttribute("aggregate_function", 3)}, []float64{1, -4, 0.5, 10, 0.5, 2, 3, -4}},
		{[]*pb.AttributeProto{intAttribute("aggregate_function", 2), intAttribute("n_targets", 3)},
			[]float64{0.5, -4, math.MaxFloat32, 0.5, 2, math.MaxFloat32, 0.5, -4, math.MaxFloat32, 0.5, -4, math.MaxFloat32}},
		{[]*pb.AttributeProto{intAttribute("post_transform", 2)}, sigmoid},
	}
	for i, tc := range cases {
		attrs := treeAttrs()
		for _, a := range tc.extra {
			attrs[a.GetName()] = a
		}
		m, err := loadCPU(t, treeModel(attrs))
		require.NoError(t, err, "case %d", i)
		out, err := m.Call([]*core.Tensor{x})
		require.NoError(t, err, "case %d", i)
		assertClose(t, tc.want, floats(t, out[0]), 1e-6, "TreeEnsemble")
	}
}

func TestTreeEnsembleErrorsNameTheNode(t *testing.T) {
	nan := float32(math.NaN())
	set := func(a ...*pb.AttributeProto) map[string]*pb.AttributeProto {
		m := treeAttrs()
		for _, x := range a {
			m[x.GetName()] = x
		}
		return m
	}
	modes := treeAttrs()["nodes_modes"]
	badMode := proto.Clone(modes).(*pb.AttributeProto)
	badMode.T.RawData = []byte{0, 1, 7, 0}
	members := proto.Clone(treeAttrs()["membership_values"]).(*pb.AttributeProto)
	members.T = f32Tensor("membership_values", []int64{2}, []float32{1, 5})
	extra := proto.Clone(members).(*pb.AttributeProto)
	extra.T = f32Tensor("membership_values", []int64{4}, []float32{1, nan, 2, nan})
	cases := []struct {
		attrs map[string]*pb.AttributeProto
		want  string
	}{
		{set(intAttribute("aggregate_function", 5)), `aggregate_function 5 is not one of 0 (AVERAGE), 1 (SUM), 2 (MIN), 3 (MAX)`},
		{set(intAttribute("post_transform", 4)), `post_transform 4 (PROBIT) is not supported`},
		{set(intAttribute("post_transform", 9)), `post_transform 9 is not one of`},
		{set(badMode), `nodes_modes[2] is 7, not one of 0 to 6`},
		{set(intsAttribute("nodes_truenodeids", 0, 1, 3, 6)), `node 3's true branch is 6, outside [0, 6)`},
		{set(intsAttribute("nodes_falsenodeids", 1, 0, 4, 5), intsAttribute("nodes_falseleafs", 0, 0, 1, 1)), `node 0 is its own descendant`},
		{set(intsAttribute("leaf_targetids", 0, 1, 0, 1, 2, 0)), `leaf_targetids[4] is 2, outside [0, 2) (n_targets)`},
		{set(members), `membership_values [1 5] ends before the set of node 2`},
		{set(extra), `membership_values [1 NaN 2 NaN] has more sets than the BRANCH_MEMBER nodes`},
		{set(intsAttribute("nodes_featureids", 0, 1, 1)), `attribute "nodes_truenodeids" has 4 values for the 3 nodes of nodes_featureids`},
		{set(intsAttribute("tree_roots", 0, 4)), `tree_roots[1] is 4, outside [0, 4)`},
		{set(intAttribute("n_targets", 0)), `n_targets 0: want at least one target`},
	}
	for _, tc := range cases {
		_, err := loadCPU(t, treeModel(tc.attrs))
		require.Error(t, err, tc.want)
		assert.ErrorContains(t, err, `node "trees" (TreeEnsemble): `)
		assert.ErrorContains(t, err, tc.want)
	}
	m, err := loadCPU(t, treeModel(set(intsAttribute("nodes_featureids", 0, 1, 2, 0))))
	require.NoError(t, err)
	_, err = m.Call([]*core.Tensor{core.Zeros(core.Shape{1, 2}, core.F32, core.CPU)})
	assert.ErrorContains(t, err, `node "trees" (TreeEnsemble): nodes_featureids[2] is 2, but X has 2 features`)

	mp := treeModel(treeAttrs())
	mp.Graph.Node[0].Domain = proto.String("ai.onnx.preview")
	_, err = loadCPU(t, mp)
	assert.ErrorContains(t, err, `domain "ai.onnx.preview" is not supported (only the standard ai.onnx domain and ai.onnx.ml's ArrayFeatureExtractor, Binarizer, LabelEncoder, TreeEnsemble, TreeEnsembleClassifier and TreeEnsembleRegressor)`)
}
