package abi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/diffuse"
)

// Text to image through the ABI: diffuse/testdata/sd_tiny, checked
// against diffusers' own run (diffuse/testdata/make_sd_refs.py) when the
// call is given diffusers' initial latents, and against package diffuse
// called directly, bit for bit, for a seed.

var sdTiny = filepath.Join(diffuseTestdata, "sd_tiny")

// sdRefRun is the "ddim" run of sd_refs.json (DDIM at eta 0 draws only
// the initial latents).
type sdRefRun struct {
	Prompts         []string `json:"prompts"`
	Steps           int      `json:"steps"`
	GuidanceScale   float64  `json:"guidance_scale"`
	ImagesPerPrompt int      `json:"images_per_prompt"`
}

func TestDiffusionTextToImage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(diffuseTestdata, "sd_refs.json"))
	require.NoError(t, err)
	var meta struct {
		Runs map[string]sdRefRun `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(raw, &meta))
	run := meta.Runs["ddim"]
	refs, err := safetensors.ReadFile(filepath.Join(diffuseTestdata, "sd_refs.safetensors"))
	require.NoError(t, err)
	ref := func(name string) *core.Tensor { return refs.Tensors[name].ToTensor(core.CPU) }

	p, err := diffusionLoad(sdTiny, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(p)) }()
	info, err := diffusionInfoJSON(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"pipeline": "StableDiffusionPipeline", "scheduler": "DDIMScheduler", "image_shape": [3, 16, 16],
		"class_conditional": false, "text_conditional": true, "device": "cpu", "weight_bytes": 465740, "int8_weights": false}`, info)

	h, err := diffusionEncodeText(p, run.Prompts)
	require.NoError(t, err)
	got, shape := hostValues(t, h)
	want, err := ref("ddim/prompt_embeds").Float64s()
	require.NoError(t, err)
	assert.Equal(t, core.Shape{2, 77, 32}, shape)
	requireClose(t, want, got, 1e-5, "prompt embeddings")

	// diffusers' initial latents give diffusers' images.
	st := refs.Tensors["ddim/noise"]
	init, err := NewOutput(safetensors.Tensor{DType: st.DType, Shape: st.Shape[1:], Data: st.Data}.ToTensor(core.CPU))
	require.NoError(t, err)
	req := TextToImage{Prompts: run.Prompts, ImagesPerPrompt: run.ImagesPerPrompt, Steps: run.Steps,
		GuidanceScale: run.GuidanceScale, Latents: init}
	h, err = diffusionGenerateText(p, req)
	require.NoError(t, err)
	require.NoError(t, TensorFree(init))
	got, shape = hostValues(t, h)
	assert.Equal(t, core.Shape{4, 3, 16, 16}, shape)
	want, err = ref("ddim/images").Permute(core.Attrs{"dims": []int{0, 3, 1, 2}}).Float64s()
	require.NoError(t, err)
	requireClose(t, want, got, 1e-4, "images")

	// A seed gives package diffuse's images, bit for bit.
	req = TextToImage{Prompts: []string{"a red cube"}, NegativePrompts: []string{"blurry"}, ImagesPerPrompt: 2,
		Steps: 2, Seed: 9, GuidanceScale: 6, Height: 8, Width: 12, Scheduler: "EulerAncestralDiscreteScheduler"}
	h, err = diffusionGenerateText(p, req)
	require.NoError(t, err)
	got, shape = hostValues(t, h)
	sd, err := diffuse.LoadStableDiffusion(sdTiny)
	require.NoError(t, err)
	lib, err := sd.Generate(diffuse.TextToImage{Prompts: req.Prompts, NegativePrompts: req.NegativePrompts,
		ImagesPerPrompt: 2, Steps: 2, GuidanceScale: 6, Height: 8, Width: 12, Scheduler: req.Scheduler}, diffuse.SeededNoise(9))
	require.NoError(t, err)
	assert.Equal(t, lib.Shape(), shape)
	libv, err := lib.Float64s()
	require.NoError(t, err)
	assert.Equal(t, libv, got)

	_, err = diffusionGenerate(p, 1, 2, 0, "", nil)
	assert.ErrorContains(t, err, "a StableDiffusionPipeline is text-conditional: use diffusion.generate_text")
	_, err = diffusionGenerateClasses(p, []int64{1}, 2, 0, 4, "", nil)
	assert.ErrorContains(t, err, "takes no class labels: use diffusion.generate_text")
	_, err = diffusionGenerateText(p, TextToImage{Prompts: []string{"a"}, Steps: 0})
	assert.ErrorContains(t, err, "diffusion.generate_text: diffuse: StableDiffusionPipeline: steps 0, want >= 1")
	assert.Equal(t, StatusInvalid, StatusOf(err))
	_, err = diffusionGenerateText(p, TextToImage{Prompts: []string{"a"}, Steps: 1, Latents: 1 << 40})
	assert.ErrorContains(t, err, "diffusion.generate_text: latents")
	_, err = diffusionEncodeText(p, nil)
	assert.ErrorContains(t, err, "no texts")

	// int8: the UNet and VAE shrink (the CLIP text encoder stays f32) and
	// the pipeline still samples.
	require.NoError(t, diffusionQuantizeInt8(p))
	info, err = diffusionInfoJSON(p)
	require.NoError(t, err)
	var q struct {
		Bytes int64 `json:"weight_bytes"`
		Int8  bool  `json:"int8_weights"`
	}
	require.NoError(t, json.Unmarshal([]byte(info), &q))
	assert.True(t, q.Int8)
	assert.Less(t, q.Bytes, int64(465740/3), "int8 weight bytes")
	h, err = diffusionGenerateText(p, TextToImage{Prompts: []string{"a red cube"}, Steps: 2, Seed: 3})
	require.NoError(t, err)
	require.NoError(t, TensorFree(h))
}
