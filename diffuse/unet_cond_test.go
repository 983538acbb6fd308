package diffuse

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The conditional UNet's reference vectors: diffusers 0.42 ran tiny seeded
// UNet2DConditionModels (testdata/make_cond_refs.py) on a seeded batch with
// random encoder states at a few timesteps, and StableDiffusionPipeline's
// classifier-free guidance loop on the first one.

func loadCondRefs(t testing.TB) *unetRefs { return loadUNetRefs(t, "cond_refs") }

// condTol is the conditional UNet's tolerance relative to the largest
// reference value: the same float32 reordering as unetTol, through a
// deeper network (every cross-attention block adds layer norms, two
// attentions and a feed-forward).
const condTol = 1e-4

func (r *unetRefs) checkCondUNet(t *testing.T, name string, dev core.Device) float64 {
	m, err := LoadUNet2DCondition(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	enc := r.Get(t, name+"/encoder_hidden_states", dev)
	return r.checkTimesteps(t, name, dev, condTol,
		func(x *core.Tensor, ts float64) (*core.Tensor, error) { return m.Forward(x, ts, enc) },
		func(x, ts *core.Tensor) (*core.Tensor, error) { return m.ForwardTimesteps(x, ts, enc) })
}

func TestUNet2DConditionMatchesDiffusers(t *testing.T) {
	r := loadCondRefs(t)
	checkEach(t, r.Models, core.CPU, r.checkCondUNet)
}

func TestUNet2DConditionOnWebGPU(t *testing.T) {
	r := loadCondRefs(t)
	checkEachOnWebGPU(t, r.Models, r.checkCondUNet)
}

func TestUNet2DConditionStateDictNames(t *testing.T) {
	requireCheckpointNames(t, LoadUNet2DCondition, "unet2dcond_tiny", "unet2dcond_variant")
}

// The per-block keys expand a single number, keep a list, and
// num_attention_heads, when set, overrides attention_head_dim as the head
// count.
func TestUNet2DConditionConfigPerBlock(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "unet2dcond_variant", "config.json"))
	require.NoError(t, err)
	cfg, err := ParseUNet2DConditionConfig(raw)
	require.NoError(t, err)
	require.Equal(t, []int{1, 1, 1}, cfg.LayersPerBlock)
	require.Equal(t, []int{2, 4, 3}, cfg.AttentionHeadDim)
	require.Nil(t, cfg.NumAttentionHeads)
	require.Equal(t, 3, cfg.heads(2))
	cfg, err = ParseUNet2DConditionConfig([]byte(`{"block_out_channels": [32, 64], "norm_num_groups": 8,
		"down_block_types": ["CrossAttnDownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "CrossAttnUpBlock2D"],
		"attention_head_dim": 8, "num_attention_heads": [2, 4], "layers_per_block": [1, 2]}`))
	require.NoError(t, err)
	require.Equal(t, []int{8, 8}, cfg.AttentionHeadDim)
	require.Equal(t, []int{1, 2}, cfg.LayersPerBlock)
	require.Equal(t, 2, cfg.heads(0))
	require.Equal(t, 4, cfg.heads(1))
}

// In half precision (with upcast_attention in the variant, float32
// attention) the outputs stay within float16's rounding of the float32
// reference: a smoke test of the dtype path, not a reference comparison.
func TestUNet2DConditionHalfPrecision(t *testing.T) {
	r := loadCondRefs(t)
	for _, name := range r.Models {
		m, err := LoadUNet2DCondition(filepath.Join("testdata", name), WithDType(core.F16))
		require.NoError(t, err)
		x := r.Get(t, name+"/sample", core.CPU).Cast(core.F16)
		enc := r.Get(t, name+"/encoder_hidden_states", core.CPU).Cast(core.F16)
		out, err := m.Forward(x, 500, enc)
		require.NoError(t, err)
		require.Equal(t, core.F16, out.DType())
		e := reftest.RelMaxErr(t, out.Cast(core.F32), r.Get(t, name+"/out_500", core.CPU))
		t.Logf("%s: f16 error %.2g of the largest output", name, e)
		require.Less(t, e, 2e-2, name)
	}
}
