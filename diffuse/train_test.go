package diffuse

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// tinyTrainConfig is a UNet small enough to train in a test.
func tinyTrainConfig() UNet2DConfig {
	c := DefaultUNet2DConfig()
	c.SampleSize, c.InChannels, c.OutChannels = 8, 1, 1
	c.BlockOutChannels = []int{8, 16}
	c.DownBlockTypes = []string{"DownBlock2D", "AttnDownBlock2D"}
	c.UpBlockTypes = []string{"AttnUpBlock2D", "UpBlock2D"}
	c.LayersPerBlock, c.NormNumGroups = 1, 4
	return c
}

// A NewUNet2D model records for autograd: every parameter gets a gradient
// from a DDPM loss, and Adam steps lower the loss on a fixed batch.
func TestUNet2DTrains(t *testing.T) {
	m, err := NewUNet2D(tinyTrainConfig(), 3)
	require.NoError(t, err)
	require.True(t, m.Training())
	cfg, _ := Defaults("DDPMScheduler")
	s, err := New("DDPMScheduler", cfg)
	require.NoError(t, err)
	x0 := core.Rand(core.Attrs{"shape": []int{4, 1, 8, 8}, "seed": int64(1)})
	eps := core.Randn(core.Attrs{"shape": []int{4, 1, 8, 8}, "seed": int64(2)})
	ts := []float64{10, 300, 600, 900}
	xt, err := s.AddNoise(x0, eps, ts)
	require.NoError(t, err)
	tt := core.FromFloat64s(core.I64, core.Shape{4}, ts)
	opt, err := nn.NewAdam(m.Parameters(), nn.AdamConfig{LR: 3e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	require.NoError(t, err)
	var first, last float64
	for step := range 15 {
		opt.ZeroGrad()
		pred, err := m.ForwardTimesteps(xt, tt)
		require.NoError(t, err)
		loss := core.Call1("mean", nil, core.Call1("mse_loss", nil, pred, eps))
		require.NoError(t, loss.Backward())
		if step == 0 {
			for _, p := range m.NamedParameters() {
				require.NotNil(t, p.Param.Grad(), "no gradient for %s", p.Name)
			}
		}
		require.NoError(t, opt.Step())
		l, err := loss.Item()
		require.NoError(t, err)
		if step == 0 {
			first = l
		}
		last = l
	}
	require.Less(t, last, 0.8*first, "loss %v -> %v", first, last)

	// Seeded: the same weights again; eval mode records nothing.
	a, err := NewUNet2D(tinyTrainConfig(), 3)
	require.NoError(t, err)
	b, err := NewUNet2D(tinyTrainConfig(), 3)
	require.NoError(t, err)
	va, _ := a.StateDict()[5].Value.Tensor().Float64s()
	vb, _ := b.StateDict()[5].Value.Tensor().Float64s()
	require.Equal(t, va, vb)
	a.Train(false)
	out, err := a.Forward(xt, 5)
	require.NoError(t, err)
	require.False(t, out.RequiresGrad())
}
