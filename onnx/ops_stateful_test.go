package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Feeding a sequence in two pieces, the state carried between them,
// gives what one call over the whole sequence gives: CausalConvWithState
// and LinearAttention (gated delta rule, grouped query heads).
func TestStatefulOperatorsResumeFromTheirState(t *testing.T) {
	x, w, bias := wave(0.3, 2, 3, 7), wave(0.9, 3, 1, 4), wave(1.7, 3)
	act := []*pb.AttributeProto{strAttribute("activation", "silu")}
	whole, err := runOne(t, "CausalConvWithState", act, 2, x, w, bias)
	require.NoError(t, err)
	first, err := runOne(t, "CausalConvWithState", act, 2, call("slice", core.Attrs{"axis": 2, "start": 0, "stop": 5}, x), w, bias)
	require.NoError(t, err)
	rest, err := runOne(t, "CausalConvWithState", act, 2, call("slice", core.Attrs{"axis": 2, "start": 5, "stop": 7}, x), w, bias, first[1])
	require.NoError(t, err)
	assertClose(t, floats(t, whole[0]), floats(t, call("concat", core.Attrs{"axis": 2}, first[0], rest[0])), 1e-6, "output")
	assertClose(t, floats(t, whole[1]), floats(t, rest[1]), 0, "state")

	heads := []*pb.AttributeProto{intAttribute("q_num_heads", 4), intAttribute("kv_num_heads", 2)}
	q, k, v := wave(0.11, 2, 5, 4*3), wave(0.23, 2, 5, 2*3), wave(0.37, 2, 5, 2*2)
	decay := call("mul", nil, wave(0.41, 2, 5, 2), core.Scalar(0.05, core.F32, core.CPU))
	beta := call("sigmoid", nil, wave(0.53, 2, 5, 2))
	part := func(x *core.Tensor, a, b int) *core.Tensor {
		return call("slice", core.Attrs{"axis": 1, "start": a, "stop": b}, x)
	}
	all, err := runOne(t, "LinearAttention", heads, 2, q, k, v, nil, decay, beta)
	require.NoError(t, err)
	assert.Equal(t, core.Shape{2, 5, 8}, all[0].Shape())
	assert.Equal(t, core.Shape{2, 2, 3, 2}, all[1].Shape())
	a, err := runOne(t, "LinearAttention", heads, 2, part(q, 0, 3), part(k, 0, 3), part(v, 0, 3), nil, part(decay, 0, 3), part(beta, 0, 3))
	require.NoError(t, err)
	b, err := runOne(t, "LinearAttention", heads, 2, part(q, 3, 5), part(k, 3, 5), part(v, 3, 5), a[1], part(decay, 3, 5), part(beta, 3, 5))
	require.NoError(t, err)
	assertClose(t, floats(t, all[0]), floats(t, call("concat", core.Attrs{"axis": 1}, a[0], b[0])), 1e-5, "output")
	assertClose(t, floats(t, all[1]), floats(t, b[1]), 1e-5, "state")
}

func TestStatefulOperatorErrorsNameTheNode(t *testing.T) {
	x, w := wave(0.3, 1, 2, 4), wave(0.9, 2, 1, 3)
	_, err := runOne(t, "CausalConvWithState", []*pb.AttributeProto{strAttribute("activation", "gelu")}, 2, x, w)
	assert.ErrorContains(t, err, `node "n1" (CausalConvWithState): activation "gelu" is not one of none, silu, swish`)
	_, err = runOne(t, "CausalConvWithState", nil, 2, x, wave(0.9, 2, 2, 3))
	assert.ErrorContains(t, err, `node "n1" (CausalConvWithState): input has shape [1 2 4] and weight [2 2 3]: want (batch, channels, length) and (channels, 1, k)`)
	_, err = runOne(t, "CausalConvWithState", nil, 2, x, w, nil, wave(1, 1, 2, 3))
	assert.ErrorContains(t, err, `node "n1" (CausalConvWithState): past_state has shape [1 2 3], want [1 2 2] (batch, channels, k-1)`)

	q, k, v := wave(0.1, 1, 2, 4), wave(0.2, 1, 2, 4), wave(0.3, 1, 2, 4)
	d, bt := wave(0.4, 1, 2, 2), wave(0.5, 1, 2, 2)
	heads := func(extra ...*pb.AttributeProto) []*pb.AttributeProto {
		return append([]*pb.AttributeProto{intAttribute("q_num_heads", 2), intAttribute("kv_num_heads", 2)}, extra...)
	}
	cases := []struct {
		attrs []*pb.AttributeProto
		ins   []*core.Tensor
		want  string
	}{
		{heads(strAttribute("update_rule", "mamba")), []*core.Tensor{q, k, v}, `update_rule "mamba" is not one of linear, gated, delta, gated_delta`},
		{heads(), []*core.Tensor{q, k, v, nil, d}, `update_rule "gated_delta" requires the beta input`},
		{heads(strAttribute("update_rule", "linear")), []*core.Tensor{q, k, v, nil, d}, `update_rule "linear" forbids the decay input`},
		{heads(strAttribute("update_rule", "delta")), []*core.Tensor{q, k, v}, `update_rule "delta" requires the beta input`},
		{[]*pb.AttributeProto{intAttribute("q_num_heads", 2)}, []*core.Tensor{q, k, v, nil, d, bt}, `attributes q_num_heads and kv_num_heads are required`},
		{[]*pb.AttributeProto{intAttribute("q_num_heads", 3), intAttribute("kv_num_heads", 2)}, []*core.Tensor{q, k, v, nil, d, bt},
			`q_num_heads 3 must be a positive multiple of kv_num_heads 2`},
		{heads(), []*core.Tensor{q, wave(0.2, 1, 2, 6), v, nil, d, bt}, `query [1 2 4], key [1 2 6] and value [1 2 4]`},
		{heads(), []*core.Tensor{q, k, v, nil, wave(0.4, 1, 2, 3), bt}, `decay has shape [1 2 3], want [1 2 2] or [1 2 4]`},
		{heads(), []*core.Tensor{q, k, v, wave(0.4, 1, 2, 2, 3), d, bt}, `past_state has shape [1 2 2 3], want [1 2 2 2]`},
	}
	for _, tc := range cases {
		_, err := runOne(t, "LinearAttention", tc.attrs, 2, tc.ins...)
		assert.ErrorContains(t, err, `node "n1" (LinearAttention): `+tc.want)
	}
}
