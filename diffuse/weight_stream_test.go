package diffuse

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// A streamed UNet gives the loaded one's outputs bit for bit, with and
// without ControlNet residuals, while holding at most one stage's weights:
// its peak stays below the model's size, and nothing stays loaded
// between calls.
func checkStreamedUNet(t *testing.T, dev core.Device) {
	r := loadControlRefs(t)
	for _, name := range []string{"controlnet_tiny", "controlnet_variant"} {
		dir := filepath.Join("testdata", controlUNet[name])
		whole, err := LoadUNet2DCondition(dir, WithDevice(dev))
		require.NoError(t, err)
		streamed, err := LoadUNet2DConditionStreamed(dir, WithDevice(dev))
		require.NoError(t, err)
		net, err := LoadControlNet(filepath.Join("testdata", name), WithDevice(dev))
		require.NoError(t, err)
		x := r.Get(t, name+"/sample", dev)
		enc := r.Get(t, name+"/encoder_hidden_states", dev)
		res, err := net.Forward(x, 500, enc, r.Get(t, name+"/cond", dev), 0.7)
		require.NoError(t, err)
		for _, ts := range []float64{999, 37} {
			for _, rs := range []*ControlResiduals{nil, res} {
				a, err := whole.ForwardControlled(x, ts, enc, rs)
				require.NoError(t, err)
				b, err := streamed.ForwardControlled(x, ts, enc, rs)
				require.NoError(t, err)
				av, err := a.Float64s()
				require.NoError(t, err)
				bv, err := b.Float64s()
				require.NoError(t, err)
				require.Equal(t, av, bv, "%s at t=%v (residuals: %v)", name, ts, rs != nil)
			}
		}
		mw, ms := whole.WeightMemory(), streamed.WeightMemory()
		t.Logf("%s on %s: weights %d bytes; streamed peak %d bytes (%.0f%%)", controlUNet[name], dev, ms.Total, ms.Peak,
			100*float64(ms.Peak)/float64(ms.Total))
		require.Equal(t, mw.Total, ms.Total)
		require.Equal(t, mw.Total, mw.Peak)
		require.False(t, mw.Streamed)
		require.True(t, ms.Streamed)
		require.Zero(t, ms.Resident)
		require.Positive(t, ms.Peak)
		require.Less(t, ms.Peak, ms.Total/2)
		require.NoError(t, streamed.Close())
		_, err = streamed.Forward(x, 1, enc)
		require.ErrorContains(t, err, "streaming weights: the model is closed")
		require.NoError(t, streamed.Close())
	}
}

func TestStreamedUNetMatchesLoaded(t *testing.T) { checkStreamedUNet(t, core.CPU) }

func TestStreamedUNetOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkStreamedUNet(t, webgputest.Device)
}

// A guided pipeline run on the streamed UNet is the loaded UNet's, bit for
// bit, in half precision too (the conversion happens per stage).
func TestStreamedUNetPipeline(t *testing.T) {
	r := loadCondRefs(t)
	for _, dtype := range []core.DType{core.F32, core.F16} {
		run := func(m *UNet2DConditionModel) []float64 {
			cfg, _ := Defaults("EulerAncestralDiscreteScheduler")
			s, err := New("EulerAncestralDiscreteScheduler", cfg)
			require.NoError(t, err)
			pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", core.CPU).Cast(dtype),
				Negative: r.Get(t, "pipe/negative_prompt_embeds", core.CPU).Cast(dtype), GuidanceScale: 5}
			x, err := NewUNet2DConditionPipeline(m, s).Sample(pr, 3, SeededNoise(2))
			require.NoError(t, err)
			v, err := x.Float64s()
			require.NoError(t, err)
			return v
		}
		dir := filepath.Join("testdata", "unet2dcond_tiny")
		whole, err := LoadUNet2DCondition(dir, WithDType(dtype))
		require.NoError(t, err)
		streamed, err := LoadUNet2DConditionStreamed(dir, WithDType(dtype))
		require.NoError(t, err)
		require.Equal(t, run(whole), run(streamed), "%s", dtype)
		require.NoError(t, streamed.Close())
	}
}

// A streamed load checks the checkpoint as strictly as a whole one, from
// its header; a merge is refused.
func TestStreamedUNetErrors(t *testing.T) {
	src := filepath.Join("testdata", "unet2dcond_tiny")
	f, err := safetensors.ReadFile(filepath.Join(src, "diffusion_pytorch_model.safetensors"))
	require.NoError(t, err)
	delete(f.Tensors, "conv_in.bias")
	st := f.Tensors["conv_out.weight"]
	f.Tensors["conv_out.weight"] = safetensors.Tensor{DType: st.DType, Shape: core.Shape{4, 16, 9}, Data: st.Data}
	f.Tensors["extra"] = safetensors.Tensor{DType: core.F32, Shape: core.Shape{1}, Data: make([]byte, 4)}
	dir := t.TempDir()
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "diffusion_pytorch_model.safetensors"), f.Tensors, nil))
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	_, err = LoadUNet2DConditionStreamed(dir)
	require.ErrorContains(t, err, "3 problem(s)")
	require.ErrorContains(t, err, "tensor conv_in.bias is missing (want shape [16])")
	require.ErrorContains(t, err, "tensor conv_out.weight has shape [4 16 9], want [4 16 3 3]")
	require.ErrorContains(t, err, "tensor extra is not a parameter of the model")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "diffusion_pytorch_model.safetensors"), []byte("\xff\xff\xff\xff\xff\xff\xff\x00"), 0o644))
	_, err = LoadUNet2DConditionStreamed(dir)
	require.ErrorContains(t, err, "header length")

	m, err := LoadUNet2DConditionStreamed(src)
	require.NoError(t, err)
	defer m.Close()
	l, err := LoadLoRA(filepath.Join("testdata", "lora", "peft.safetensors"))
	require.NoError(t, err)
	require.ErrorContains(t, l.Merge(m, 1), "streams its weights from the checkpoint")
}
