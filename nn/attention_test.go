package nn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// With attention dropout in training mode MultiheadAttention spells the
// attention out instead of calling the fused op. A dropout probability of
// 1e-9 drops nothing in practice, so that path must agree with the fused
// one (evaluation mode) for every kind of mask.
func TestAttentionDropoutPathAgreesWithFusedPath(t *testing.T) {
	core.ManualSeed(11)
	mha := must(nn.NewMultiheadAttention(8, 2, nn.WithDropout(1e-9), nn.WithBatchFirst()))(t)
	x := core.Call1("randn", core.Attrs{"shape": []int{2, 5, 8}})
	padding := core.FromSlice([]bool{false, false, false, true, true, false, false, false, false, false}, core.Shape{2, 5})
	attn := core.FromSlice([]float32{0, -1, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0}, core.Shape{5, 5})
	for name, mask := range map[string]nn.AttentionMask{
		"none":                        {},
		"causal":                      {Causal: true},
		"key padding":                 {KeyPadding: padding},
		"float mask, padding, causal": {Attn: attn, KeyPadding: padding, Causal: true},
	} {
		t.Run(name, func(t *testing.T) {
			mha.Train(true)
			spelled := values(t, mha.Forward(x, x, x, mask))
			mha.Train(false)
			fused := values(t, mha.Forward(x, x, x, mask))
			assert.InDeltaSlice(t, fused, spelled, 1e-5)
		})
	}
}

func TestAttentionDropoutIsActiveOnlyInTraining(t *testing.T) {
	core.ManualSeed(12)
	mha := must(nn.NewMultiheadAttention(8, 2, nn.WithDropout(0.5)))(t)
	x := core.Call1("randn", core.Attrs{"shape": []int{4, 3, 8}})
	mha.Train(false)
	eval1, eval2 := values(t, mha.Forward(x, x, x, nn.AttentionMask{})), values(t, mha.Forward(x, x, x, nn.AttentionMask{}))
	assert.Equal(t, eval1, eval2)
	mha.Train(true)
	train := mha.Forward(x, x, x, nn.AttentionMask{})
	assert.NotEqual(t, eval1, values(t, train))
	require.NoError(t, core.Call1("sum", nil, train).Backward())
	assert.NotNil(t, mha.InProjWeight.Grad(), "gradients flow through the dropout path")
}

func TestUnbatchedAttention(t *testing.T) {
	core.ManualSeed(13)
	mha := must(nn.NewMultiheadAttention(8, 2))(t)
	x := core.Call1("randn", core.Attrs{"shape": []int{5, 8}})
	unbatched := mha.Forward(x, x, x, nn.AttentionMask{})
	require.NoError(t, unbatched.Err())
	assert.Equal(t, core.Shape{5, 8}, unbatched.Shape())
	batched := mha.Forward(core.Call1("unsqueeze", core.Attrs{"axis": 1}, x), core.Call1("unsqueeze", core.Attrs{"axis": 1}, x),
		core.Call1("unsqueeze", core.Attrs{"axis": 1}, x), nn.AttentionMask{})
	assert.InDeltaSlice(t, values(t, batched), values(t, unbatched), 1e-6)
}

func TestForwardErrorsAreCarriedNotPanicked(t *testing.T) {
	mha := must(nn.NewMultiheadAttention(8, 2))(t)
	assert.ErrorContains(t, mha.Forward(nil, nil, nil, nn.AttentionMask{}).Err(), "nil")
	wrongWidth := core.Zeros(core.Shape{3, 2, 6}, core.F32)
	assert.Error(t, mha.Forward(wrongWidth, wrongWidth, wrongWidth, nn.AttentionMask{}).Err())

	lin := must(nn.NewLinear(4, 2))(t)
	assert.Error(t, lin.Forward(core.Zeros(core.Shape{3, 5}, core.F32)).Err())
	bn := must(nn.NewBatchNorm2d(3))(t)
	assert.Error(t, bn.Forward(core.Zeros(core.Shape{2, 4, 2, 2}, core.F32)).Err())
	bn.Train(false)
	assert.Error(t, bn.Forward(core.Zeros(core.Shape{2, 4, 2, 2}, core.F32)).Err())
	enc := must(nn.NewTransformerEncoderLayer(8, 2, 16))(t)
	assert.Error(t, enc.Forward(core.Zeros(core.Shape{3, 7}, core.F32)).Err())
	seq := must(nn.NewSequential(lin, &nn.ReLU{}))(t)
	assert.Error(t, seq.Forward(core.Zeros(core.Shape{1, 3}, core.F32)).Err())
}
