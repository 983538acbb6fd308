package nn_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// Layer tests load torch modules' state dicts, inputs and outputs from
// testdata/layers.safetensors (written by testdata/make_layers.py; see its
// docstring), so each case checks state-dict names and shapes (the load is
// strict) as well as the forward computation.

type refCase struct {
	state map[string]safetensors.Tensor
	in    []*core.Tensor
	out   []*core.Tensor
	extra map[string]safetensors.Tensor // BatchNorm statistics after the run
	probe *core.Tensor                  // weights of the output in the loss whose gradients are stored
	grads map[string]*core.Tensor       // by parameter name, and "input"
}

func loadRef(tb testing.TB, name string) refCase {
	tb.Helper()
	f, err := safetensors.ReadFile("testdata/layers.safetensors")
	require.NoError(tb, err)
	c := refCase{state: map[string]safetensors.Tensor{}, extra: map[string]safetensors.Tensor{}, grads: map[string]*core.Tensor{}}
	ins, outs := map[string]*core.Tensor{}, map[string]*core.Tensor{}
	for key, t := range f.Tensors {
		rest, ok := strings.CutPrefix(key, name+".")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(rest, "in."):
			ins[rest[3:]] = t.ToTensor()
		case strings.HasPrefix(rest, "out."):
			outs[rest[4:]] = t.ToTensor()
		case strings.HasPrefix(rest, "after."):
			c.extra[rest[6:]] = t
		case strings.HasPrefix(rest, "grad."):
			c.grads[rest[5:]] = t.ToTensor()
		case rest == "probe":
			c.probe = t.ToTensor()
		default:
			c.state[rest] = t
		}
	}
	for i := 0; ins[itoa(i)] != nil; i++ {
		c.in = append(c.in, ins[itoa(i)])
	}
	for i := 0; outs[itoa(i)] != nil; i++ {
		c.out = append(c.out, outs[itoa(i)])
	}
	require.NotEmpty(tb, c.out, "no reference case %q", name)
	return c
}

func itoa(i int) string { return string(rune('0' + i)) }

// checkLayer loads the case into m and compares Forward on input 0 with
// output 0 and, where the case has them, the gradients.
func checkLayer(t *testing.T, name string, m nn.Layer) {
	c := loadRef(t, name)
	require.NoError(t, nn.LoadStateDict(m, c.state))
	x := c.in[0]
	if c.probe != nil {
		x = x.Detach().SetRequiresGrad(true)
	}
	y := m.Forward(x)
	assert.InDeltaSlice(t, values(t, c.out[0]), values(t, y), 2e-5, name)
	if c.probe != nil {
		checkGrads(t, name, c, m, x, y)
	}
}

// checkGrads backpropagates sum(y·probe) and compares every parameter's
// gradient and the input's with torch's.
func checkGrads(t *testing.T, name string, c refCase, m nn.Module, x, y *core.Tensor) {
	nn.ZeroGrad(m)
	loss := core.Call1("sum", nil, core.Call1("mul", nil, y, c.probe))
	require.NoError(t, loss.Backward())
	require.Len(t, m.NamedParameters(), len(c.grads)-1, name)
	for _, np := range m.NamedParameters() {
		require.NotNil(t, np.Param.Grad(), "%s: %s has no gradient", name, np.Name)
		assert.InDeltaSlice(t, values(t, c.grads[np.Name]), values(t, np.Param.Grad()), 1e-4, "%s: grad of %s", name, np.Name)
	}
	assert.InDeltaSlice(t, values(t, c.grads["input"]), values(t, x.Grad()), 1e-4, "%s: grad of the input", name)
}

func TestLinearMatchesTorch(t *testing.T) {
	checkLayer(t, "linear", must(nn.NewLinear(4, 3))(t))
	checkLayer(t, "linear_nobias", must(nn.NewLinear(4, 3, nn.WithoutBias()))(t))
}

func TestConvolutionsMatchTorch(t *testing.T) {
	checkLayer(t, "conv1d", must(nn.NewConv1d(4, 6, 3, nn.WithStride(2), nn.WithPadding(1), nn.WithGroups(2)))(t))
	checkLayer(t, "conv2d", must(nn.NewConv2d(3, 4, 3, 2, nn.WithStride(2, 1), nn.WithPadding(1, 0), nn.WithDilation(1, 2)))(t))
	checkLayer(t, "convt2d", must(nn.NewConvTranspose2d(4, 6, 3, 3, nn.WithStride(2), nn.WithPadding(1),
		nn.WithOutputPadding(1), nn.WithGroups(2)))(t))
}

func TestNormsMatchTorch(t *testing.T) {
	checkLayer(t, "layernorm", must(nn.NewLayerNorm(core.Shape{3, 4}))(t))
	checkLayer(t, "rmsnorm", must(nn.NewRMSNorm(core.Shape{4}))(t))
	checkLayer(t, "groupnorm", must(nn.NewGroupNorm(2, 6, nn.WithEps(1e-3)))(t))
	checkLayer(t, "batchnorm_batch_stats", must(nn.NewBatchNorm1d(3, nn.WithoutRunningStats()))(t))
}

func TestEmbeddingMatchesTorch(t *testing.T) {
	c := loadRef(t, "embedding")
	e := must(nn.NewEmbedding(10, 4))(t)
	require.NoError(t, nn.LoadStateDict(e, c.state))
	assert.InDeltaSlice(t, values(t, c.out[0]), values(t, e.Forward(c.in[0])), 0)
}

// Two training batches update the running statistics, then an evaluation
// batch uses them; torch's outputs and final statistics must match.
func TestBatchNormMatchesTorch(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []nn.Option
	}{{"batchnorm", nil}, {"batchnorm_cumulative", []nn.Option{nn.WithCumulativeAverage()}}} {
		t.Run(c.name, func(t *testing.T) {
			ref := loadRef(t, c.name)
			bn := must(nn.NewBatchNorm2d(3, c.opts...))(t)
			require.NoError(t, nn.LoadStateDict(bn, ref.state))
			assert.InDeltaSlice(t, values(t, ref.out[0]), values(t, bn.Forward(ref.in[0])), 2e-5)
			assert.InDeltaSlice(t, values(t, ref.out[1]), values(t, bn.Forward(ref.in[1])), 2e-5)
			bn.Train(false)
			assert.InDeltaSlice(t, values(t, ref.out[2]), values(t, bn.Forward(ref.in[2])), 2e-5)
			for _, buf := range bn.NamedBuffers() {
				want := ref.extra[buf.Name].ToTensor()
				assert.InDeltaSlice(t, values(t, want), values(t, buf.Buffer.Tensor()), 2e-6, buf.Name)
			}
		})
	}
}

func TestActivationsMatchTorch(t *testing.T) {
	checkLayer(t, "relu", &nn.ReLU{})
	checkLayer(t, "gelu", &nn.GELU{})
	checkLayer(t, "gelu_tanh", &nn.GELU{Approximate: "tanh"})
	checkLayer(t, "silu", &nn.SiLU{})
	checkLayer(t, "tanh", &nn.Tanh{})
	checkLayer(t, "sigmoid", &nn.Sigmoid{})
	checkLayer(t, "softmax", nn.NewSoftmax(0))
}

func TestMultiheadAttentionMatchesTorch(t *testing.T) {
	mha := must(nn.NewMultiheadAttention(8, 2))(t)
	check := func(name string, mask nn.AttentionMask) {
		ref := loadRef(t, name)
		require.NoError(t, nn.LoadStateDict(mha, ref.state))
		if len(ref.in) > 3 {
			mask.Attn, mask.KeyPadding = ref.in[3], ref.in[4]
		}
		q := ref.in[0]
		if ref.probe != nil {
			q = q.Detach().SetRequiresGrad(true)
		}
		got := mha.Forward(q, ref.in[1], ref.in[2], mask)
		assert.InDeltaSlice(t, values(t, ref.out[0]), values(t, got), 2e-5, name)
		if ref.probe != nil {
			checkGrads(t, name, ref, mha, q, got)
		}
	}
	check("mha", nn.AttentionMask{})
	check("mha_masked", nn.AttentionMask{})
	check("mha_causal", nn.AttentionMask{Causal: true})

	ref := loadRef(t, "mha_batch_first")
	bf := must(nn.NewMultiheadAttention(8, 4, nn.WithBatchFirst(), nn.WithoutBias()))(t)
	require.NoError(t, nn.LoadStateDict(bf, ref.state))
	x := ref.in[0]
	assert.InDeltaSlice(t, values(t, ref.out[0]), values(t, bf.Forward(x, x, x, nn.AttentionMask{})), 2e-5)
}

func TestTransformerEncoderLayerMatchesTorch(t *testing.T) {
	checkLayer(t, "encoder", must(nn.NewTransformerEncoderLayer(8, 2, 16, nn.WithDropout(0)))(t))
	checkLayer(t, "encoder_prenorm_gelu", must(nn.NewTransformerEncoderLayer(8, 2, 16, nn.WithDropout(0),
		nn.WithNormFirst(), nn.WithActivation("gelu")))(t))
}

func TestDropoutTrainAndEval(t *testing.T) {
	d := must(nn.NewDropout(0.5))(t)
	x := core.Ones(core.Shape{1000}, core.F32)
	kept := 0
	for _, v := range values(t, d.Forward(x)) {
		switch v {
		case 0:
		case 2:
			kept++
		default:
			t.Fatalf("dropout(0.5) of 1 gave %v, want 0 or 2", v)
		}
	}
	assert.InDelta(t, 500, kept, 80)
	d.Train(false)
	assert.Same(t, x, d.Forward(x), "dropout is the identity in evaluation mode")
	_, err := nn.NewDropout(1.5)
	assert.ErrorContains(t, err, "[0, 1]")
}
