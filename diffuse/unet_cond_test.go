package diffuse

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// The conditional UNet's reference vectors: diffusers 0.42 ran tiny seeded
// UNet2DConditionModels (testdata/make_cond_refs.py) on a seeded batch with
// random encoder states at a few timesteps, and StableDiffusionPipeline's
// classifier-free guidance loop on the first one.

type condRefs struct {
	Timesteps []float64 `json:"timesteps"`
	PerBatch  []float64 `json:"per_batch"`
	Models    []string  `json:"models"`
	Pipelines map[string]struct {
		Steps           int     `json:"steps"`
		GuidanceScale   float64 `json:"guidance_scale"`
		ImagesPerPrompt int     `json:"images_per_prompt"`
		NoiseDraws      int     `json:"noise_draws"`
		Scheduler       string  `json:"scheduler"`
		Eta             float64 `json:"eta"`
	} `json:"pipelines"`
	tensors *safetensors.File
}

func loadCondRefs(t testing.TB) *condRefs {
	t.Helper()
	b, err := os.ReadFile("testdata/cond_refs.json")
	require.NoError(t, err)
	var r condRefs
	require.NoError(t, json.Unmarshal(b, &r))
	r.tensors, err = safetensors.ReadFile("testdata/cond_refs.safetensors")
	require.NoError(t, err)
	require.Len(t, r.Models, 2)
	return &r
}

func (r *condRefs) get(t testing.TB, name string, dev core.Device) *core.Tensor {
	t.Helper()
	st, ok := r.tensors.Tensors[name]
	require.True(t, ok, "no reference tensor %s", name)
	x := st.ToTensor(dev)
	require.NoError(t, x.Err())
	return x
}

// condTol is the conditional UNet's tolerance relative to the largest
// reference value: the same float32 reordering as unetTol, through a
// deeper network (every cross-attention block adds layer norms, two
// attentions and a feed-forward).
const condTol = 1e-4

// checkCondUNet runs every reference input of model name on dev and
// returns the worst relative error.
func checkCondUNet(t *testing.T, r *condRefs, name string, dev core.Device) float64 {
	m, err := LoadUNet2DCondition(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	x := r.get(t, name+"/sample", dev)
	enc := r.get(t, name+"/encoder_hidden_states", dev)
	worst := 0.0
	for _, ts := range r.Timesteps {
		out, err := m.Forward(x, ts, enc)
		require.NoError(t, err)
		e := relMaxErr(t, out, r.get(t, fmt.Sprintf("%s/out_%d", name, int(ts)), core.CPU))
		require.Less(t, e, condTol, "%s at t=%v", name, ts)
		worst = math.Max(worst, e)
	}
	per := core.FromFloat64s(core.I64, core.Shape{len(r.PerBatch)}, r.PerBatch, dev)
	out, err := m.ForwardTimesteps(x, per, enc)
	require.NoError(t, err)
	e := relMaxErr(t, out, r.get(t, name+"/out_per_batch", core.CPU))
	require.Less(t, e, condTol, "%s at per-batch timesteps %v", name, r.PerBatch)
	return math.Max(worst, e)
}

func TestUNet2DConditionMatchesDiffusers(t *testing.T) {
	r := loadCondRefs(t)
	for _, name := range r.Models {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest output", checkCondUNet(t, r, name, core.CPU))
		})
	}
}

func TestUNet2DConditionOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	r := loadCondRefs(t)
	for _, name := range r.Models {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest output", checkCondUNet(t, r, name, webgputest.Device))
		})
	}
}

// The state dict is the checkpoint's, name for name.
func TestUNet2DConditionStateDictNames(t *testing.T) {
	for _, name := range []string{"unet2dcond_tiny", "unet2dcond_variant"} {
		dir := filepath.Join("testdata", name)
		m, err := LoadUNet2DCondition(dir)
		require.NoError(t, err)
		f, err := safetensors.ReadFile(filepath.Join(dir, "diffusion_pytorch_model.safetensors"))
		require.NoError(t, err)
		var got []string
		for _, s := range m.StateDict() {
			got = append(got, s.Name)
		}
		want := append([]string(nil), f.Names...)
		sort.Strings(want)
		sort.Strings(got)
		require.Equal(t, want, got, name)
	}
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
		x := r.get(t, name+"/sample", core.CPU).Cast(core.F16)
		enc := r.get(t, name+"/encoder_hidden_states", core.CPU).Cast(core.F16)
		out, err := m.Forward(x, 500, enc)
		require.NoError(t, err)
		require.Equal(t, core.F16, out.DType())
		e := relMaxErr(t, out.Cast(core.F32), r.get(t, name+"/out_500", core.CPU))
		t.Logf("%s: f16 error %.2g of the largest output", name, e)
		require.Less(t, e, 2e-2, name)
	}
}
