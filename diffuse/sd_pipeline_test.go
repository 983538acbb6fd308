package diffuse

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
	"github.com/webtensor/webtensor/multimodal"
)

// The text-to-image reference vectors: diffusers' StableDiffusionPipeline
// on the tiny seeded folder testdata/sd_tiny (testdata/make_sd_refs.py),
// with the tokenizer's ids, the text encoder's states, every noise tensor
// drawn, the latents and the images.

var sdTiny = filepath.Join("testdata", "sd_tiny")

type sdRun struct {
	Prompts         []string `json:"prompts"`
	NegativePrompts []string `json:"negative_prompts"`
	Scheduler       string   `json:"scheduler"`
	Steps           int      `json:"steps"`
	GuidanceScale   float64  `json:"guidance_scale"`
	ImagesPerPrompt int      `json:"images_per_prompt"`
	NoiseDraws      int      `json:"noise_draws"`
}

type sdRefs struct {
	Runs        map[string]sdRun `json:"runs"`
	VocabLayout struct {
		TokenizerConfig json.RawMessage `json:"tokenizer_config"`
		Texts           []string        `json:"texts"`
		InputIDs        [][]int         `json:"input_ids"`
	} `json:"vocab_layout"`
	refTensors
}

func loadSDRefs(t testing.TB) *sdRefs {
	t.Helper()
	var r sdRefs
	r.refTensors = readRefs(t, "sd_refs", &r)
	return &r
}

// sdTol bounds the latents' and images' errors relative to their largest
// value: the UNet's ~1e-6 differences grow with guidance as in
// condPipeTol, and the VAE's decode adds its own.
const sdTol = 1e-4

// sdEmbedTol bounds the text encoder states' relative error, as the
// multimodal package's CLIP tolerance.
const sdEmbedTol = 1e-5

// replay hands out run's recorded noise, the initial latents first, and
// counts the draws.
func (r *sdRefs) replay(run string, k *int) Noise {
	return r.stackedNoise(run+"/noise", r.Runs[run].NoiseDraws, k)
}

func (run sdRun) request() TextToImage {
	return TextToImage{Prompts: run.Prompts, NegativePrompts: run.NegativePrompts, GuidanceScale: run.GuidanceScale,
		ImagesPerPrompt: run.ImagesPerPrompt, Steps: run.Steps, Scheduler: run.Scheduler}
}

// ids is the pipeline tokenizer's ids for texts.
func ids(t *testing.T, p *StableDiffusionPipeline, texts []string) [][]int {
	t.Helper()
	encs, err := p.Tokenizer.EncodeBatch(texts, true)
	require.NoError(t, err)
	out := make([][]int, len(encs))
	for i, e := range encs {
		out[i] = e.IDs
	}
	return out
}

func (r *sdRefs) refIDs(t *testing.T, name string) [][]int {
	t.Helper()
	v, err := r.Get(t, name, core.CPU).Int64s()
	require.NoError(t, err)
	s := r.File.Tensors[name].Shape
	out := make([][]int, s[0])
	for i := range out {
		for _, id := range v[i*s[1] : (i+1)*s[1]] {
			out[i] = append(out[i], int(id))
		}
	}
	return out
}

// replaySD checks every run's ids, text states, latents and images on dev
// and returns the worst relative errors of the states, latents and
// images.
func replaySD(t *testing.T, r *sdRefs, dev core.Device) (float64, float64, float64) {
	p, err := LoadStableDiffusion(sdTiny, WithDevice(dev))
	require.NoError(t, err)
	require.Equal(t, 77, p.MaxLength)
	var embed, lat, img float64
	for name, run := range r.Runs {
		require.Equal(t, r.refIDs(t, name+"/input_ids"), ids(t, p, run.Prompts), "%s: prompt ids", name)
		neg := run.NegativePrompts
		if neg == nil {
			neg = make([]string, len(run.Prompts))
		}
		require.Equal(t, r.refIDs(t, name+"/negative_input_ids"), ids(t, p, neg), "%s: negative prompt ids", name)
		for _, c := range []struct {
			ref   string
			texts []string
		}{{"prompt_embeds", run.Prompts}, {"negative_prompt_embeds", neg}} {
			got, err := p.EncodePrompts(c.texts)
			require.NoError(t, err)
			e := reftest.RelMaxErr(t, got, r.Get(t, name+"/"+c.ref, core.CPU))
			require.Less(t, e, sdEmbedTol, "%s: %s", name, c.ref)
			embed = max(embed, e)
		}
		k := 0
		x, err := p.Latents(run.request(), r.replay(name, &k))
		require.NoError(t, err)
		require.Equal(t, run.NoiseDraws, k, "%s: noise draws", name)
		e := reftest.RelMaxErr(t, x, r.Get(t, name+"/latents", core.CPU))
		require.Less(t, e, sdTol, "%s: latents", name)
		lat = max(lat, e)
		k = 0
		images, err := p.Generate(run.request(), r.replay(name, &k))
		require.NoError(t, err)
		require.Equal(t, dev, images.Device())
		// diffusers' "np" images are (B, H, W, C).
		e = reftest.RelMaxErr(t, images.Permute(core.Attrs{"dims": []int{0, 2, 3, 1}}), r.Get(t, name+"/images", core.CPU))
		require.Less(t, e, sdTol, "%s: images", name)
		img = max(img, e)
	}
	return embed, lat, img
}

func TestStableDiffusionMatchesDiffusers(t *testing.T) {
	embed, lat, img := replaySD(t, loadSDRefs(t), core.CPU)
	t.Logf("worst errors: text states %.2g, latents %.2g, images %.2g", embed, lat, img)
}

func TestStableDiffusionOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	embed, lat, img := replaySD(t, loadSDRefs(t), webgputest.Device)
	t.Logf("worst errors: text states %.2g, latents %.2g, images %.2g", embed, lat, img)
}

// copySD copies sd_tiny into a temporary folder, leaving out the files
// skip names (relative paths), and returns it.
func copySD(t *testing.T, skip ...string) string {
	t.Helper()
	dst := t.TempDir()
	left := map[string]bool{}
	for _, s := range skip {
		left[filepath.FromSlash(s)] = true
	}
	require.NoError(t, filepath.WalkDir(sdTiny, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(sdTiny, path)
		if err != nil || left[rel] {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
	return dst
}

// Stable Diffusion v1's repositories ship vocab.json and merges.txt, not
// tokenizer.json: the folder loads from them with SD v1's
// tokenizer_config.json, giving transformers' ids (special tokens spelt in
// other cases included) and the same text states.
func TestStableDiffusionVocabTokenizer(t *testing.T) {
	r := loadSDRefs(t)
	dir := copySD(t, "tokenizer/tokenizer.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer", "tokenizer_config.json"), r.VocabLayout.TokenizerConfig, 0o644))
	p, err := LoadStableDiffusion(dir)
	require.NoError(t, err)
	require.Equal(t, r.VocabLayout.InputIDs, ids(t, p, r.VocabLayout.Texts))
	run := r.Runs["ddim"]
	got, err := p.EncodePrompts(run.Prompts)
	require.NoError(t, err)
	require.Less(t, reftest.RelMaxErr(t, got, r.Get(t, "ddim/prompt_embeds", core.CPU)), sdEmbedTol)
}

// A seeded run is the same twice and another seed differs; the batch is
// prompts × images per prompt, and Height and Width set the images' size.
func TestStableDiffusionSeeded(t *testing.T) {
	p, err := LoadStableDiffusion(sdTiny)
	require.NoError(t, err)
	require.Equal(t, 2, p.ScaleFactor())
	req := TextToImage{Prompts: []string{"a red cube", "a blue sphere"}, NegativePrompts: []string{"blurry"},
		GuidanceScale: 5, ImagesPerPrompt: 2, Steps: 2}
	run := func(req TextToImage, seed uint64) *core.Tensor {
		x, err := p.Generate(req, SeededNoise(seed))
		require.NoError(t, err)
		return x
	}
	a := run(req, 3)
	require.Equal(t, core.Shape{4, 3, 16, 16}, a.Shape())
	av, err := a.Float64s()
	require.NoError(t, err)
	bv, err := run(req, 3).Float64s()
	require.NoError(t, err)
	require.Equal(t, av, bv)
	cv, err := run(req, 4).Float64s()
	require.NoError(t, err)
	require.NotEqual(t, av, cv)
	for _, v := range av {
		require.True(t, v >= 0 && v <= 1, "image value %v outside [0, 1]", v)
	}
	req.Height, req.Width, req.ImagesPerPrompt, req.GuidanceScale = 8, 12, 1, 1
	req.Scheduler = "EulerDiscreteScheduler"
	require.Equal(t, core.Shape{2, 3, 8, 12}, run(req, 3).Shape())
}

// LatentsThen gives a run diffusers' initial latents (its latents=
// argument): DDIM at eta 0 draws nothing else, so the run is diffusers'.
func TestStableDiffusionLatentsThen(t *testing.T) {
	r := loadSDRefs(t)
	p, err := LoadStableDiffusion(sdTiny)
	require.NoError(t, err)
	st := r.File.Tensors["ddim/noise"]
	init := safetensors.Tensor{DType: st.DType, Shape: st.Shape[1:], Data: st.Data}.ToTensor(core.CPU)
	x, err := p.Latents(r.Runs["ddim"].request(), LatentsThen(init, nil))
	require.NoError(t, err)
	require.Less(t, reftest.RelMaxErr(t, x, r.Get(t, "ddim/latents", core.CPU)), sdTol)
	// A stochastic scheduler's draws need the noise after the latents.
	run := r.Runs["euler_a"]
	init = r.Get(t, "euler_a/noise", core.CPU).Slice(core.Attrs{"axis": 0, "start": 0, "stop": 1}).Reshape(core.Shape{2, 4, 8, 8})
	_, err = p.Latents(run.request(), LatentsThen(init, nil))
	require.ErrorContains(t, err, "a draw after the initial latents and no noise for it")
	_, err = p.Latents(run.request(), LatentsThen(nil, SeededNoise(1)))
	require.ErrorContains(t, err, "the initial latents are nil")
}

func TestStableDiffusionErrors(t *testing.T) {
	p, err := LoadStableDiffusion(sdTiny)
	require.NoError(t, err)
	ok := TextToImage{Prompts: []string{"a"}, GuidanceScale: 7.5, Steps: 1}
	for _, c := range []struct {
		edit func(*TextToImage)
		want string
	}{
		{func(r *TextToImage) { r.Prompts = nil }, "no prompts"},
		{func(r *TextToImage) { r.NegativePrompts = []string{"x", "y"} }, "2 negative prompts for 1 prompts"},
		{func(r *TextToImage) { r.Steps = 0 }, "steps 0, want >= 1"},
		{func(r *TextToImage) { r.Height = 15 }, "image size 15×16 (height×width) must be positive multiples of the VAE's scale factor 2"},
		{func(r *TextToImage) { r.Scheduler = "FancyScheduler" }, `scheduler "FancyScheduler"`},
		{func(r *TextToImage) { r.ImagesPerPrompt = -1 }, "ImagesPerPrompt -1"},
	} {
		r := ok
		c.edit(&r)
		_, err := p.Generate(r, SeededNoise(1))
		require.ErrorContains(t, err, c.want)
	}
	_, err = p.EncodePrompts(nil)
	require.ErrorContains(t, err, "no texts")

	index, err := os.ReadFile(filepath.Join(sdTiny, "model_index.json"))
	require.NoError(t, err)
	for _, c := range []struct {
		edit func(map[string]any)
		want string
	}{
		{func(m map[string]any) { m["_class_name"] = "StableDiffusionXLPipeline" }, `_class_name is "StableDiffusionXLPipeline", want "StableDiffusionPipeline"`},
		{func(m map[string]any) { m["text_encoder_2"] = []any{"transformers", "CLIPTextModelWithProjection"} }, `component "text_encoder_2" is not one StableDiffusionPipeline has`},
		{func(m map[string]any) { m["text_encoder"] = []any{"transformers", "T5EncoderModel"} }, `component "text_encoder" is a T5EncoderModel, want CLIPTextModel`},
		{func(m map[string]any) { delete(m, "vae") }, `component "vae" is , want [library, class]`},
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal(index, &m))
		c.edit(m)
		dir := copySD(t)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "model_index.json"), b, 0o644))
		_, err = LoadStableDiffusion(dir)
		require.ErrorContains(t, err, c.want)
	}
	// A text encoder of another width than the UNet's cross-attention.
	dir := copySD(t)
	cfg := filepath.Join(dir, "unet", "config.json")
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["cross_attention_dim"] = 24
	// The UNet's attention weights then no longer fit: its own loader says
	// so first, naming the tensors.
	b, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, b, 0o644))
	_, err = LoadStableDiffusion(dir)
	require.ErrorContains(t, err, "attn2.to_k.weight has shape [16 32], want [16 24]")
	_, err = LoadStableDiffusion(filepath.Join("testdata", "absent"))
	require.ErrorContains(t, err, "model_index.json")
	_, _, err = multimodal.LoadCLIPTokenizer(filepath.Join(sdTiny, "unet"))
	require.ErrorContains(t, err, "has neither tokenizer.json nor vocab.json and merges.txt")
}
