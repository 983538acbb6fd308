package diffuse

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The img2img reference vectors: StableDiffusionImg2ImgPipeline on the
// tiny conditional UNet and VAE, and pixel-space img2img on the tiny
// UNet2DModel (testdata/make_img2img_refs.py), with every noise drawn.

type img2imgRun struct {
	Steps           int     `json:"steps"`
	Strength        float64 `json:"strength"`
	GuidanceScale   float64 `json:"guidance_scale"`
	Prompts         int     `json:"prompts"`
	ImagesPerPrompt int     `json:"images_per_prompt"`
	NoiseDraws      int     `json:"noise_draws"`
	Scheduler       string  `json:"scheduler"`
	Eta             float64 `json:"eta"`
}

type img2imgRefs struct {
	Runs  map[string]img2imgRun `json:"runs"`
	Pixel img2imgRun            `json:"pixel"`
	refTensors
}

func loadImg2ImgRefs(t testing.TB) *img2imgRefs {
	t.Helper()
	var r img2imgRefs
	r.refTensors = readRefs(t, "img2img_refs", &r)
	return &r
}

func (run img2imgRun) scheduler(t *testing.T) Scheduler {
	return refScheduler(t, run.Scheduler, run.Eta)
}

// replayImg2Img runs one StableDiffusionImg2ImgPipeline run with diffusers'
// noise and returns the worst relative errors of the latents and images.
func replayImg2Img(t *testing.T, r *img2imgRefs, name string, dev core.Device) (float64, float64) {
	run := r.Runs[name]
	unet, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), WithDevice(dev))
	require.NoError(t, err)
	vae, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"), WithDevice(dev))
	require.NoError(t, err)
	neg := r.Get(t, "negative_prompt_embeds", dev)
	pr := Prompts{Embeds: r.Get(t, "prompt_embeds", dev).Slice(core.Attrs{"axis": 0, "start": 0, "stop": run.Prompts}),
		Negative: neg, GuidanceScale: run.GuidanceScale, ImagesPerPrompt: run.ImagesPerPrompt}
	p := &Img2ImgPipeline{VAE: vae, Cond: NewUNet2DConditionPipeline(unet, run.scheduler(t))}
	k := 0
	images, err := p.Generate(r.Get(t, "image", dev), run.Strength, pr, run.Steps, r.replayNoise(t, name, run.NoiseDraws, &k))
	require.NoError(t, err)
	require.Equal(t, run.NoiseDraws, k, "noise draws")
	eImg := reftest.RelMaxErr(t, images, r.Get(t, name+"/images", core.CPU))

	// The latents alone, from the same posterior sample.
	k = 0
	noise := r.replayNoise(t, name, run.NoiseDraws, &k)
	post, err := vae.Encode(mul(r.Get(t, "image", dev), 2).Sub(scalarLike(r.Get(t, "image", dev), 1)))
	require.NoError(t, err)
	eps, err := noise(post.Mean.Shape(), core.F32, dev)
	require.NoError(t, err)
	z, err := post.Sample(eps)
	require.NoError(t, err)
	latents, err := p.Cond.SampleFrom(mul(z, vae.Config.ScalingFactor), run.Strength, pr, run.Steps, noise)
	require.NoError(t, err)
	eLat := reftest.RelMaxErr(t, latents, r.Get(t, name+"/latents", core.CPU))
	require.Less(t, eLat, condPipeTol, "%s latents", name)
	require.Less(t, eImg, condPipeTol, "%s images", name)
	return eLat, eImg
}

func replayPixelImg2Img(t *testing.T, r *img2imgRefs, dev core.Device) float64 {
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"), WithDevice(dev))
	require.NoError(t, err)
	k := 0
	x, err := NewUNet2DPipeline(m, r.Pixel.scheduler(t)).SampleFrom(r.Get(t, "pixel/images", dev), r.Pixel.Strength,
		r.Pixel.Steps, r.replayNoise(t, "pixel", r.Pixel.NoiseDraws, &k))
	require.NoError(t, err)
	require.Equal(t, r.Pixel.NoiseDraws, k, "noise draws")
	e := reftest.RelMaxErr(t, x, r.Get(t, "pixel/result", core.CPU))
	require.Less(t, e, unetTol)
	return e
}

func testImg2Img(t *testing.T, dev core.Device) {
	r := loadImg2ImgRefs(t)
	for _, name := range sortedKeys(r.Runs) {
		t.Run(name, func(t *testing.T) {
			eLat, eImg := replayImg2Img(t, r, name, dev)
			t.Logf("worst error: latents %.2g, images %.2g", eLat, eImg)
		})
	}
	t.Run("pixel", func(t *testing.T) {
		t.Logf("worst error: %.2g", replayPixelImg2Img(t, r, dev))
	})
}

func TestImg2ImgMatchesDiffusers(t *testing.T) { testImg2Img(t, core.CPU) }

func TestImg2ImgOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	testImg2Img(t, webgputest.Device)
}

func TestImg2ImgBadInput(t *testing.T) {
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"))
	require.NoError(t, err)
	cfg, _ := Defaults("DDIMScheduler")
	s, err := New("DDIMScheduler", cfg)
	require.NoError(t, err)
	p := NewUNet2DPipeline(m, s)
	img := core.Zeros(core.Shape{1, 3, 16, 16}, core.F32)
	_, err = p.SampleFrom(img, 0.05, 10, SeededNoise(1))
	require.ErrorContains(t, err, "strength 0.05 of 10 steps leaves no step to run")
	_, err = p.SampleFrom(img, 1.5, 10, SeededNoise(1))
	require.ErrorContains(t, err, "strength 1.5 is outside (0, 1]")
	_, err = p.SampleFrom(core.Zeros(core.Shape{1, 4, 16, 16}, core.F32), 0.5, 10, SeededNoise(1))
	require.ErrorContains(t, err, "images have shape [1 4 16 16], want (batch, 3, height, width)")

	pcfg, _ := Defaults("PNDMScheduler")
	ps, err := New("PNDMScheduler", pcfg)
	require.NoError(t, err)
	_, err = NewUNet2DPipeline(m, ps).SampleFrom(img, 0.5, 10, SeededNoise(1))
	require.ErrorContains(t, err, "cannot run the PRK warm-up; set skip_prk_steps")
}
