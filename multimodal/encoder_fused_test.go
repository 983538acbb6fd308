package multimodal

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// linearActivated runs GELU (both forms) and ReLU in the product's store on
// the CPU: the same bits as the linear layer then the activation (with and
// without a bias), for a batch of sequences; with a gradient to record it
// takes the ops, and the gradient flows. (nn's tests check Linear.ForwardAdd,
// the residual added in the store.)
func TestLinearActivatedEqualsTheLayerThenTheActivation(t *testing.T) {
	x := core.FromSlice(ramp(2*33*48), core.Shape{2, 33, 48})
	for _, bias := range []bool{true, false} {
		var opts []nn.Option
		if !bias {
			opts = append(opts, nn.WithoutBias())
		}
		l, err := nn.NewLinear(48, 72, opts...)
		require.NoError(t, err)
		for _, act := range []string{"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "quick_gelu"} {
			want, err := activate(l.Forward(x), act).Float32s()
			require.NoError(t, err)
			got, err := linearActivated(l, x, act).Float32s()
			require.NoError(t, err)
			require.Equal(t, want, got, "%s, bias %v", act, bias)
		}
	}
	l, err := nn.NewLinear(48, 72)
	require.NoError(t, err)
	xg := x.Detach().SetRequiresGrad(true)
	y := linearActivated(l, xg, "gelu")
	require.True(t, y.RequiresGrad(), "with a gradient to record the ops run")
	require.NoError(t, y.Sum(core.Attrs{}).Backward())
	require.NotNil(t, xg.Grad())
}

func ramp(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*29)%41)/10 - 2
	}
	return v
}
