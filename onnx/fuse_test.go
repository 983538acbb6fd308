package onnx

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// encoderBlockModel is what torch.onnx writes for a BERT layer's exact
// GELU and attention: y = gelu(x) by Div, Erf, Add, Mul, Mul, and
// o = Softmax(q @ kᵀ · 0.5 + mask) @ v, with kᵀ given. extra names
// values to add as graph outputs (which must keep a chain unfused).
func encoderBlockModel(extra ...string) *pb.ModelProto {
	nodes := []*pb.NodeProto{
		nodeProto("Div", "div", []string{"x", "sqrt2"}, []string{"xd"}),
		nodeProto("Erf", "erf", []string{"xd"}, []string{"e"}),
		nodeProto("Add", "add1", []string{"e", "one"}, []string{"e1"}),
		nodeProto("Mul", "mulx", []string{"x", "e1"}, []string{"xe"}),
		nodeProto("Mul", "half", []string{"xe", "point5"}, []string{"y"}),
		nodeProto("MatMul", "scores", []string{"q", "kt"}, []string{"s"}),
		nodeProto("Mul", "scale", []string{"s", "point5"}, []string{"ss"}),
		nodeProto("Add", "mask", []string{"ss", "m"}, []string{"sm"}),
		nodeProto("Softmax", "softmax", []string{"sm"}, []string{"p"}, intAttr("axis", -1)),
		nodeProto("MatMul", "mix", []string{"p", "v"}, []string{"o"}),
	}
	outs := []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT), vi("o", pb.TensorProto_FLOAT)}
	for _, name := range extra {
		outs = append(outs, vi(name, pb.TensorProto_FLOAT))
	}
	return modelProto(nodes,
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 2, 6), vi("q", pb.TensorProto_FLOAT, 2, 3, 4, 8),
			vi("kt", pb.TensorProto_FLOAT, 2, 3, 8, 5), vi("v", pb.TensorProto_FLOAT, 2, 3, 5, 8),
			vi("m", pb.TensorProto_FLOAT, 2, 1, 1, 5)},
		outs,
		f32Tensor("sqrt2", nil, []float32{float32(math.Sqrt2)}), f32Tensor("one", nil, []float32{1}),
		f32Tensor("point5", nil, []float32{0.5}))
}

func encoderBlockInputs(rng *rand.Rand) map[string]*core.Tensor {
	randn := func(shape ...int) *core.Tensor {
		v := make([]float32, core.Shape(shape).Numel())
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 2)
		}
		return core.FromSlice(v, core.Shape(shape))
	}
	mask := make([]float32, 10)
	for i := range mask {
		if rng.IntN(3) == 0 {
			mask[i] = -1e9 // padding, as BERT's extended mask
		}
	}
	return map[string]*core.Tensor{"x": randn(2, 6), "q": randn(2, 3, 4, 8), "kt": randn(2, 3, 8, 5),
		"v": randn(2, 3, 5, 8), "m": core.FromSlice(mask, core.Shape{2, 1, 1, 5})}
}

// fusedLabels lists the model's nodes that stand for chains.
func fusedLabels(m *Model) []string {
	var out []string
	for _, n := range m.nodes {
		if strings.Contains(n.pb.GetOpType(), " fused from ") {
			out = append(out, n.pb.GetOpType())
		}
	}
	return out
}

// TestFusedChainsMatchTheChains: the GELU and attention chains become one
// node each and compute what the chains do (the same model with the
// intermediates made graph outputs keeps them unfused).
func TestFusedChainsMatchTheChains(t *testing.T) {
	fused, err := LoadBytes(marshal(encoderBlockModel()), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Equal(t, []string{"Gelu fused from Div, Erf, Add, Mul, Mul",
		"Attention fused from MatMul, Mul, Add, Softmax, MatMul"}, fusedLabels(fused))
	plain, err := LoadBytes(marshal(encoderBlockModel("e1", "sm")), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Empty(t, fusedLabels(plain))
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3 {
		in := encoderBlockInputs(rng)
		got, err := fused.Run(in)
		require.NoError(t, err)
		want, err := plain.Run(in)
		require.NoError(t, err)
		assertSame(t, []*core.Tensor{want["y"], want["o"]}, []*core.Tensor{got["y"], got["o"]}, 1e-5)
	}
}

// TestAttentionFusesTheHeadsMerge: a Transpose to [B, L, H, E] after the
// attention chain joins it (the CPU kernel stores its output that way
// round) and the result is the chain's, through the CPU's transposed
// kernel and through the op and a permute where that kernel does not
// apply (a gradient to record).
func TestAttentionFusesTheHeadsMerge(t *testing.T) {
	withMerge := func(extra ...string) *pb.ModelProto {
		m := encoderBlockModel(extra...)
		m.Graph.Node = append(m.Graph.Node, nodeProto("Transpose", "merge", []string{"o"}, []string{"ot"}, intsAttribute("perm", 0, 2, 1, 3)))
		m.Graph.Output[1] = vi("ot", pb.TensorProto_FLOAT)
		return m
	}
	fused, err := LoadBytes(marshal(withMerge()), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Equal(t, []string{"Gelu fused from Div, Erf, Add, Mul, Mul",
		"Attention fused from MatMul, Mul, Add, Softmax, MatMul, Transpose"}, fusedLabels(fused))
	plain, err := LoadBytes(marshal(withMerge("e1", "sm")), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Empty(t, fusedLabels(plain))
	rng := rand.New(rand.NewPCG(7, 8))
	for _, grad := range []bool{false, true} {
		in := encoderBlockInputs(rng)
		in["q"].SetRequiresGrad(grad)
		got, err := fused.Run(in)
		require.NoError(t, err)
		want, err := plain.Run(in)
		require.NoError(t, err)
		require.Equal(t, core.Shape{2, 4, 3, 8}, got["ot"].Shape())
		assertSame(t, []*core.Tensor{want["ot"]}, []*core.Tensor{got["ot"]}, 1e-5)
	}
}

// TestFusedChainDeclinesToTheChain: inputs the fused op does not take
// (a mask of a rank above the scores') run the chain's own nodes, which
// broadcast as ONNX does.
func TestFusedChainDeclinesToTheChain(t *testing.T) {
	m := encoderBlockModel()
	m.Graph.Input[4] = vi("m", pb.TensorProto_FLOAT, 1, 2, 1, 1, 5)
	m.Graph.Output[1] = vi("o", pb.TensorProto_FLOAT)
	fused, err := LoadBytes(marshal(m), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Len(t, fusedLabels(fused), 2)
	in := encoderBlockInputs(rand.New(rand.NewPCG(5, 6)))
	in["m"] = in["m"].Reshape(core.Shape{1, 2, 1, 1, 5})
	got, err := fused.Run(in)
	require.NoError(t, err)
	require.Equal(t, core.Shape{1, 2, 3, 4, 8}, got["o"].Shape())
}

// TestChainsThatDoNotMatchStayApart: a GELU chain with another constant,
// or an intermediate read twice, is not fused.
func TestChainsThatDoNotMatchStayApart(t *testing.T) {
	m := encoderBlockModel()
	m.Graph.Initializer[0] = f32Tensor("sqrt2", nil, []float32{1.5})
	loaded, err := LoadBytes(marshal(m), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Equal(t, []string{"Attention fused from MatMul, Mul, Add, Softmax, MatMul"}, fusedLabels(loaded))

	m = encoderBlockModel()
	m.Graph.Node = append(m.Graph.Node, nodeProto("Relu", "reads_scores", []string{"s"}, []string{"r"}))
	m.Graph.Output = append(m.Graph.Output, vi("r", pb.TensorProto_FLOAT))
	loaded, err = LoadBytes(marshal(m), WithDevice(core.CPU))
	require.NoError(t, err)
	require.Equal(t, []string{"Gelu fused from Div, Erf, Add, Mul, Mul"}, fusedLabels(loaded))
}

// linearModel is y = MatMul(x, w) + b, then the GELU chain when gelu is
// set; extra names values to add as graph outputs.
func linearModel(gelu bool, extra ...string) *pb.ModelProto {
	nodes := []*pb.NodeProto{
		nodeProto("MatMul", "mm", []string{"x", "w"}, []string{"h"}),
		nodeProto("Add", "bias", []string{"b", "h"}, []string{"y"}),
	}
	out := "y"
	if gelu {
		nodes = append(nodes,
			nodeProto("Div", "div", []string{"y", "sqrt2"}, []string{"yd"}),
			nodeProto("Erf", "erf", []string{"yd"}, []string{"e"}),
			nodeProto("Add", "add1", []string{"e", "one"}, []string{"e1"}),
			nodeProto("Mul", "muly", []string{"y", "e1"}, []string{"ye"}),
			nodeProto("Mul", "half", []string{"ye", "point5"}, []string{"z"}))
		out = "z"
	}
	outs := []*pb.ValueInfoProto{vi(out, pb.TensorProto_FLOAT)}
	for _, name := range extra {
		outs = append(outs, vi(name, pb.TensorProto_FLOAT))
	}
	rng := rand.New(rand.NewPCG(9, 9))
	w, b := make([]float32, 300*70), make([]float32, 70)
	for i := range w {
		w[i] = float32(rng.NormFloat64() / 10)
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	return modelProto(nodes, []*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, "batch", 130, 300)}, outs,
		f32Tensor("w", []int64{300, 70}, w), f32Tensor("b", []int64{70}, b),
		f32Tensor("sqrt2", nil, []float32{float32(math.Sqrt2)}), f32Tensor("one", nil, []float32{1}),
		f32Tensor("point5", nil, []float32{0.5}))
}

// TestLinearChainsMatchTheChains: MatMul by a constant weight and Add of a
// constant bias, with and without the GELU chain after it, run as one
// product with an epilogue on the CPU, and equal the chains run node by
// node (the same models with the product made a graph output).
func TestLinearChainsMatchTheChains(t *testing.T) {
	x := make([]float32, 2*130*300)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	in := map[string]*core.Tensor{"x": core.FromSlice(x, core.Shape{2, 130, 300})}
	for _, c := range []struct {
		gelu  bool
		label string
		out   string
	}{{false, "Linear fused from MatMul, Add", "y"}, {true, "Linear+Gelu fused from MatMul, Add, Div, Erf, Add, Mul, Mul", "z"}} {
		fused, err := LoadBytes(marshal(linearModel(c.gelu)), WithDevice(core.CPU))
		require.NoError(t, err)
		require.Equal(t, []string{c.label}, fusedLabels(fused))
		plain, err := LoadBytes(marshal(linearModel(c.gelu, "h")), WithDevice(core.CPU))
		require.NoError(t, err)
		for _, l := range fusedLabels(plain) {
			require.NotContains(t, l, "Linear")
		}
		got, err := fused.Run(in)
		require.NoError(t, err)
		want, err := plain.Run(in)
		require.NoError(t, err)
		assertSame(t, []*core.Tensor{want[c.out]}, []*core.Tensor{got[c.out]}, 1e-6)
	}
}
