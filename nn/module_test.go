package nn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The expected entries are torch 2.15's state_dict() keys, shapes and dtypes
// for the same modules (printed by iterating m.state_dict().items()).
func TestStateDictNamesMatchTorch(t *testing.T) {
	f32, i64 := core.F32, core.I64
	cases := []struct {
		name  string
		build func(testing.TB) nn.Module
		want  []entry
	}{
		{"Sequential", func(tb testing.TB) nn.Module {
			return must(nn.NewSequential(must(nn.NewLinear(2, 3))(tb), &nn.ReLU{}, must(nn.NewLinear(3, 1))(tb)))(tb)
		}, []entry{{"0.weight", core.Shape{3, 2}, f32}, {"0.bias", core.Shape{3}, f32}, {"2.weight", core.Shape{1, 3}, f32}, {"2.bias", core.Shape{1}, f32}}},
		{"BatchNorm2d", func(tb testing.TB) nn.Module { return must(nn.NewBatchNorm2d(4))(tb) },
			[]entry{{"weight", core.Shape{4}, f32}, {"bias", core.Shape{4}, f32}, {"running_mean", core.Shape{4}, f32},
				{"running_var", core.Shape{4}, f32}, {"num_batches_tracked", core.Shape{}, i64}}},
		{"MultiheadAttention", func(tb testing.TB) nn.Module { return must(nn.NewMultiheadAttention(8, 2))(tb) },
			[]entry{{"in_proj_weight", core.Shape{24, 8}, f32}, {"in_proj_bias", core.Shape{24}, f32},
				{"out_proj.weight", core.Shape{8, 8}, f32}, {"out_proj.bias", core.Shape{8}, f32}}},
		{"TransformerEncoderLayer", func(tb testing.TB) nn.Module { return must(nn.NewTransformerEncoderLayer(8, 2, 16))(tb) },
			[]entry{{"self_attn.in_proj_weight", core.Shape{24, 8}, f32}, {"self_attn.in_proj_bias", core.Shape{24}, f32},
				{"self_attn.out_proj.weight", core.Shape{8, 8}, f32}, {"self_attn.out_proj.bias", core.Shape{8}, f32},
				{"linear1.weight", core.Shape{16, 8}, f32}, {"linear1.bias", core.Shape{16}, f32},
				{"linear2.weight", core.Shape{8, 16}, f32}, {"linear2.bias", core.Shape{8}, f32},
				{"norm1.weight", core.Shape{8}, f32}, {"norm1.bias", core.Shape{8}, f32},
				{"norm2.weight", core.Shape{8}, f32}, {"norm2.bias", core.Shape{8}, f32}}},
		{"Conv2d without bias", func(tb testing.TB) nn.Module { return must(nn.NewConv2d(3, 4, 3, 2, nn.WithoutBias()))(tb) },
			[]entry{{"weight", core.Shape{4, 3, 3, 2}, f32}}},
		{"ConvTranspose2d grouped", func(tb testing.TB) nn.Module { return must(nn.NewConvTranspose2d(4, 6, 3, 3, nn.WithGroups(2)))(tb) },
			[]entry{{"weight", core.Shape{4, 3, 3, 3}, f32}, {"bias", core.Shape{6}, f32}}},
		{"LayerNorm without affine", func(tb testing.TB) nn.Module { return must(nn.NewLayerNorm(core.Shape{4}, nn.WithoutAffine()))(tb) }, nil},
		{"GroupNorm", func(tb testing.TB) nn.Module { return must(nn.NewGroupNorm(2, 4))(tb) },
			[]entry{{"weight", core.Shape{4}, f32}, {"bias", core.Shape{4}, f32}}},
		{"RMSNorm", func(tb testing.TB) nn.Module { return must(nn.NewRMSNorm(core.Shape{5}))(tb) },
			[]entry{{"weight", core.Shape{5}, f32}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, stateEntries(c.build(t)))
		})
	}
}

func TestNamedParametersSkipBuffersAndDeduplicate(t *testing.T) {
	bn := must(nn.NewBatchNorm1d(3))(t)
	assert.Equal(t, []string{"weight", "bias"}, paramNames(bn))
	assert.Len(t, bn.NamedBuffers(), 3)

	shared := must(nn.NewLinear(2, 2))(t)
	seq := must(nn.NewSequential(shared, &nn.Tanh{}, shared))(t)
	assert.Equal(t, []string{"0.weight", "0.bias"}, paramNames(seq), "a shared layer's parameters are listed once")
	assert.Len(t, seq.StateDict(), 4, "the state dict names shared tensors under every name, as torch does")
	assert.Equal(t, 6, nn.NumParameters(seq))
}

type custom struct {
	nn.Base
	scale *nn.Parameter
	inner *nn.Linear
}

func TestCustomModuleRegistration(t *testing.T) {
	m := &custom{scale: must(nn.NewParameter(core.Ones(core.Shape{1}, core.F32)))(t), inner: must(nn.NewLinear(2, 2))(t)}
	require.NoError(t, m.RegisterModule("inner", m.inner))
	require.NoError(t, m.RegisterParameter("scale", m.scale))
	assert.Equal(t, []string{"scale", "inner.weight", "inner.bias"}, paramNames(m), "own parameters come before children's")

	assert.ErrorContains(t, m.RegisterParameter("scale", m.scale), "already registered")
	assert.ErrorContains(t, m.RegisterParameter("a.b", m.scale), "no dots")
	assert.ErrorContains(t, m.RegisterParameter("", m.scale), "non-empty")
	assert.ErrorContains(t, m.RegisterModule("nil", (*nn.Linear)(nil)), "nil module")
	assert.ErrorContains(t, m.RegisterBuffer("b", nil), "nil buffer")
}

func TestTrainPropagatesToChildren(t *testing.T) {
	drop := must(nn.NewDropout(0.5))(t)
	seq := must(nn.NewSequential(must(nn.NewLinear(2, 2))(t), drop))(t)
	assert.True(t, seq.Training(), "modules start in training mode, as in torch")
	seq.Train(false)
	assert.False(t, seq.Training())
	assert.False(t, drop.Training())
	seq.Train(true)
	assert.True(t, drop.Training())
}

func TestParameterSetKeepsLeafAndGrad(t *testing.T) {
	p := must(nn.NewParameter(core.FromSlice([]float32{1, 2}, core.Shape{2})))(t)
	y := core.Call1("sum", nil, core.Call1("mul", nil, p.Tensor(), p.Tensor()))
	require.NoError(t, y.Backward())
	assert.Equal(t, []float64{2, 4}, values(t, p.Grad()))

	require.NoError(t, p.Set(core.FromSlice([]float32{5, 6}, core.Shape{2})))
	assert.True(t, p.Tensor().IsLeaf())
	assert.True(t, p.Tensor().RequiresGrad())
	assert.Equal(t, []float64{5, 6}, values(t, p.Tensor()))
	assert.Equal(t, []float64{2, 4}, values(t, p.Grad()), "Set keeps the accumulated gradient")

	assert.ErrorContains(t, p.Set(core.FromSlice([]float32{1, 2, 3}, core.Shape{3})), "shape [3]")
	assert.ErrorContains(t, p.Set(core.FromSlice([]float64{1, 2}, core.Shape{2})), "dtype f64")
	_, err := nn.NewParameter(core.FromSlice([]int32{1}, core.Shape{1}))
	assert.Error(t, err, "integer tensors cannot be parameters")
}

func TestSequentialRejectsNilLayers(t *testing.T) {
	var failed *nn.Linear
	_, err := nn.NewSequential(&nn.ReLU{}, failed)
	assert.ErrorContains(t, err, "layer 1 is nil")
}

func TestOptionsAreCheckedPerModule(t *testing.T) {
	_, err := nn.NewLinear(2, 3, nn.WithStride(2))
	assert.ErrorContains(t, err, "Linear does not take option WithStride")
	_, err = nn.NewConv2d(3, 4, 3, 3, nn.WithStride(1, 2, 3))
	assert.ErrorContains(t, err, "takes 1 or 2 values")
	_, err = nn.NewConv2d(3, 4, 3, 3, nn.WithGroups(2))
	assert.ErrorContains(t, err, "divisible by groups")
	_, err = nn.NewMultiheadAttention(10, 3)
	assert.ErrorContains(t, err, "multiple of num_heads")
	_, err = nn.NewTransformerEncoderLayer(8, 2, 16, nn.WithActivation("tanh"))
	assert.ErrorContains(t, err, "relu or gelu")
	_, err = nn.NewLinear(2, 3, nn.Option{})
	assert.ErrorContains(t, err, "zero Option")
	_, err = nn.NewConvTranspose2d(2, 2, 3, 3, nn.WithOutputPadding(1))
	assert.ErrorContains(t, err, "output padding")
}

func TestSeedReproducesModel(t *testing.T) {
	build := func() []float64 {
		core.ManualSeed(42)
		l := must(nn.NewLinear(4, 3))(t)
		return append(values(t, l.Weight.Tensor()), values(t, l.Bias.Tensor())...)
	}
	first, second := build(), build()
	assert.Equal(t, first, second)
	for _, v := range first {
		assert.LessOrEqual(t, v*v, 0.25, "default init draws from U(±1/sqrt(fan_in)) = U(±0.5)")
	}
}
