package abi

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/diffuse"
)

// The diffusion calls against package diffuse called directly, and the
// images every SDK's test expects (diffuse/testdata/sdk_pipeline.json,
// rewritten by `go test ./abi -run TestDiffusion -update`): the same
// library on the same device gives the same images for a seed, so the
// SDKs compare within a float32 rounding.

var updateSDKRefs = flag.Bool("update", false, "rewrite diffuse/testdata/sdk_pipeline.json from the library's own images")

var (
	diffuseTestdata = filepath.Join("..", "diffuse", "testdata")
	ddpmPipe        = filepath.Join(diffuseTestdata, "ddpm_pipe")
	sdkPipelineRefs = filepath.Join(diffuseTestdata, "sdk_pipeline.json")
)

// sdkRun is one sampling run the SDKs repeat.
type sdkRun struct {
	Batch     int       `json:"batch"`
	Steps     int       `json:"steps"`
	Seed      uint64    `json:"seed"`
	Scheduler string    `json:"scheduler"` // "": the folder's
	Shape     []int     `json:"shape"`
	Images    []float32 `json:"images"`
}

type sdkPipelineFile struct {
	Note     string   `json:"note"`
	Pipeline string   `json:"pipeline"` // relative to diffuse/testdata
	Atol     float64  `json:"atol"`     // how close every SDK's native CPU images must come
	Runs     []sdkRun `json:"runs"`
}

// sdkPipelineAtol is the images' tolerance the file gives the SDKs: the
// pins come from one CPU, and another's kernels round in other places
// (AVX-512's small-head attention tiles against AVX2's blocked products:
// up to 2.2e-6 apart after DDPM's four steps), so not bit for bit.
const sdkPipelineAtol = 1e-5

// libraryImages samples with package diffuse directly, as the ABI should.
func libraryImages(t *testing.T, r sdkRun) *core.Tensor {
	m, err := diffuse.LoadUNet2D(filepath.Join(ddpmPipe, "unet"), diffuse.WithDevice(core.CPU))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(ddpmPipe, "scheduler", "scheduler_config.json"))
	require.NoError(t, err)
	cfg, err := diffuse.ParseConfig(raw)
	require.NoError(t, err)
	if r.Scheduler != "" {
		cfg, err = cfg.For(r.Scheduler)
		require.NoError(t, err)
	}
	s, err := diffuse.New(cfg.Class, cfg)
	require.NoError(t, err)
	img, err := diffuse.NewUNet2DPipeline(m, s).Generate(r.Batch, r.Steps, diffuse.SeededNoise(r.Seed))
	require.NoError(t, err)
	return img
}

func TestDiffusionGenerate(t *testing.T) {
	p, err := diffusionLoad(ddpmPipe, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(p)) }()
	info, err := diffusionInfoJSON(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"pipeline": "DDPMPipeline", "scheduler": "DDPMScheduler", "image_shape": [3, 16, 16],
		"class_conditional": false, "text_conditional": false, "device": "cpu", "weight_bytes": 709708, "int8_weights": false}`, info)

	runs := []sdkRun{{Batch: 2, Steps: 4, Seed: 7}, {Batch: 1, Steps: 3, Seed: 11, Scheduler: "DDIMScheduler"}}
	var committed sdkPipelineFile
	if !*updateSDKRefs {
		raw, err := os.ReadFile(sdkPipelineRefs)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &committed))
		require.Len(t, committed.Runs, len(runs))
	}
	for i := range runs {
		r := &runs[i]
		h, err := diffusionGenerate(p, r.Batch, r.Steps, r.Seed, r.Scheduler, nil)
		require.NoError(t, err)
		x, err := TensorOf(h)
		require.NoError(t, err)
		got, err := x.Float32s()
		require.NoError(t, err)
		want, err := libraryImages(t, *r).Float32s()
		require.NoError(t, err)
		require.Equal(t, want, got, "run %d: the ABI's images are the library's, bit for bit", i)
		r.Shape, r.Images = x.Shape(), got
		require.NoError(t, TensorFree(h))
		if !*updateSDKRefs {
			assert.Equal(t, committed.Runs[i].Shape, r.Shape, "run %d", i)
			requireClose(t, f64s(committed.Runs[i].Images), f64s(got), committed.Atol, "run images")
		}
	}
	if *updateSDKRefs {
		out, err := json.MarshalIndent(sdkPipelineFile{
			Note:     "images package diffuse samples on the CPU from ddpm_pipe (abi/diffuse_test.go -update writes this); every SDK's test repeats the runs",
			Pipeline: "ddpm_pipe", Atol: sdkPipelineAtol, Runs: runs}, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(sdkPipelineRefs, append(out, '\n'), 0o644))
	}

	_, err = diffusionGenerateClasses(p, []int64{1}, 2, 0, 4, "", nil)
	assert.ErrorContains(t, err, "a DDPMPipeline takes no class labels")
	_, err = diffusionGenerate(p, 1, 2, 0, "FancyScheduler", nil)
	assert.ErrorContains(t, err, "FancyScheduler")
	_, err = diffusionGenerate(p, 0, 2, 0, "", nil)
	assert.ErrorContains(t, err, "batch 0 and steps 2 must be >= 1")
	_, err = diffusionGenerateText(p, TextToImage{Prompts: []string{"a"}, Steps: 1})
	assert.ErrorContains(t, err, "a DDPMPipeline takes no prompts: use diffusion.generate")
}

// diffusion.quantize_int8 gives the library's int8 images bit for bit,
// the info reports the smaller weights, and the images stay within the
// SDKs' bar (38 dB PSNR) of the committed f32 ones.
func TestDiffusionQuantizeInt8(t *testing.T) {
	p, err := diffusionLoad(ddpmPipe, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(p)) }()
	require.NoError(t, diffusionQuantizeInt8(p))
	require.NoError(t, diffusionQuantizeInt8(p), "a second call changes nothing")
	info, err := diffusionInfoJSON(p)
	require.NoError(t, err)
	var v struct {
		Bytes int64 `json:"weight_bytes"`
		Int8  bool  `json:"int8_weights"`
	}
	require.NoError(t, json.Unmarshal([]byte(info), &v))
	assert.True(t, v.Int8)
	assert.Equal(t, int64(191496), v.Bytes) // packed int8 words (rows padded to whole words) and f32 scales, plus the f32 rest

	raw, err := os.ReadFile(sdkPipelineRefs)
	require.NoError(t, err)
	var committed sdkPipelineFile
	require.NoError(t, json.Unmarshal(raw, &committed))
	m, err := diffuse.LoadUNet2D(filepath.Join(ddpmPipe, "unet"), diffuse.WithInt8Weights())
	require.NoError(t, err)
	for i, r := range committed.Runs {
		h, err := diffusionGenerate(p, r.Batch, r.Steps, r.Seed, r.Scheduler, nil)
		require.NoError(t, err)
		got, _ := hostValues(t, h)
		cfg, err := diffuse.ParseConfig(mustRead(t, filepath.Join(ddpmPipe, "scheduler", "scheduler_config.json")))
		require.NoError(t, err)
		if r.Scheduler != "" {
			cfg, err = cfg.For(r.Scheduler)
			require.NoError(t, err)
		}
		s, err := diffuse.New(cfg.Class, cfg)
		require.NoError(t, err)
		want, err := diffuse.NewUNet2DPipeline(m, s).Generate(r.Batch, r.Steps, diffuse.SeededNoise(r.Seed))
		require.NoError(t, err)
		w, err := want.Float64s()
		require.NoError(t, err)
		require.Equal(t, w, got, "run %d: the ABI's int8 images are the library's", i)
		mse := 0.0
		for k, x := range r.Images {
			mse += (float64(x) - got[k]) * (float64(x) - got[k])
		}
		psnr := 10 * math.Log10(float64(len(got))/mse)
		t.Logf("run %d: int8 against f32 images: PSNR %.1f dB", i, psnr)
		assert.GreaterOrEqual(t, psnr, 38.0, "run %d", i)
	}
	assert.Equal(t, StatusHandle, StatusOf(diffusionQuantizeInt8(-1)))
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// copyDir copies a model folder's files (flat) into dst.
func copyDir(t *testing.T, src, dst string) {
	require.NoError(t, os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
}

func TestDiffusionDiTPipeline(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, filepath.Join(diffuseTestdata, "dit_pipe"), filepath.Join(dir, "transformer"))
	copyDir(t, filepath.Join(diffuseTestdata, "vae_tiny"), filepath.Join(dir, "vae"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "scheduler"), 0o755))
	sched := `{"_class_name": "DDIMScheduler", "num_train_timesteps": 1000, "beta_schedule": "linear"}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scheduler", "scheduler_config.json"), []byte(sched), 0o644))
	index := `{"_class_name": "DiTPipeline", "transformer": ["diffusers", "DiTTransformer2DModel"],
		"vae": ["diffusers", "AutoencoderKL"], "scheduler": ["diffusers", "DDIMScheduler"]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model_index.json"), []byte(index), 0o644))

	p, err := diffusionLoad(dir, "cpu")
	require.NoError(t, err)
	defer func() { require.NoError(t, diffusionFree(p)) }()
	info, err := diffusionInfoJSON(p)
	require.NoError(t, err)
	assert.Contains(t, info, `"class_conditional":true`)

	h, err := diffusionGenerateClasses(p, []int64{3, 917}, 2, 5, 4, "", nil)
	require.NoError(t, err)
	got, shape := hostValues(t, h)

	m, err := diffuse.LoadDiT(filepath.Join(dir, "transformer"))
	require.NoError(t, err)
	vae, err := diffuse.LoadAutoencoderKL(filepath.Join(dir, "vae"))
	require.NoError(t, err)
	cfg, err := diffuse.ParseConfig([]byte(sched))
	require.NoError(t, err)
	s, err := diffuse.New(cfg.Class, cfg)
	require.NoError(t, err)
	want, err := (&diffuse.DiTPipeline{Model: m, Scheduler: s, VAE: vae, GuidanceScale: 4}).Generate([]int{3, 917}, 2, diffuse.SeededNoise(5))
	require.NoError(t, err)
	assert.Equal(t, want.Shape(), shape)
	var infoV struct {
		Shape []int `json:"image_shape"`
	}
	require.NoError(t, json.Unmarshal([]byte(info), &infoV))
	assert.Equal(t, []int(shape[1:]), infoV.Shape, "info's image shape is what Generate gives")
	w, err := want.Float64s()
	require.NoError(t, err)
	assert.Equal(t, w, got)

	_, err = diffusionGenerateClasses(p, []int64{1000}, 2, 0, 4, "", nil)
	assert.ErrorContains(t, err, "label 1000 (at 0) is outside the model's classes 0..999")
	_, err = diffusionGenerate(p, 1, 2, 0, "", nil)
	assert.ErrorContains(t, err, "class-conditional: use diffusion.generate_classes")

	_, err = diffusionEncodeText(p, []string{"a"})
	assert.ErrorContains(t, err, "a DiTPipeline takes no prompts: use diffusion.generate_classes")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "model_index.json"), []byte(`{"_class_name": "StableDiffusionXLPipeline"}`), 0o644))
	_, err = diffusionLoad(dir, "cpu")
	assert.ErrorContains(t, err, `pipeline "StableDiffusionXLPipeline" is not supported`)
	_, err = diffusionLoad(filepath.Join(diffuseTestdata, "absent"), "cpu")
	assert.Equal(t, StatusIO, StatusOf(err), "%v", err)
}
