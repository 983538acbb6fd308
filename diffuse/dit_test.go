package diffuse

import (
	"encoding/json"
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

// The DiT reference vectors: diffusers 0.42 ran tiny seeded
// DiTTransformer2DModels (testdata/make_dit_refs.py) on a seeded batch.

type ditRefs struct {
	Models   []string         `json:"models"`
	T        []float64        `json:"timesteps"`
	SharedT  float64          `json:"shared_timestep"`
	Labels   map[string][]int `json:"labels"`
	unetRefs                  // for get
}

func loadDiTRefs(t testing.TB) *ditRefs {
	t.Helper()
	b, err := os.ReadFile("testdata/dit_refs.json")
	require.NoError(t, err)
	var r ditRefs
	require.NoError(t, json.Unmarshal(b, &r))
	r.tensors, err = safetensors.ReadFile("testdata/dit_refs.safetensors")
	require.NoError(t, err)
	require.Len(t, r.Models, 2)
	return &r
}

func checkDiT(t *testing.T, r *ditRefs, name string, dev core.Device) float64 {
	m, err := LoadDiT(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	labels := r.Labels[name]
	x := r.get(t, name+"/sample", dev)
	worst := 0.0
	for _, c := range []struct {
		ref    string
		x      *core.Tensor
		ts     []float64
		labels []int
	}{
		{"out", x, r.T, labels},
		{"out_shared", x, []float64{r.SharedT}, labels},
		{"out_big", r.get(t, name+"/sample_big", dev), r.T[1:], labels[:1]},
	} {
		out, err := m.Forward(c.x, c.ts, c.labels)
		require.NoError(t, err)
		e := relMaxErr(t, out, r.get(t, name+"/"+c.ref, core.CPU))
		require.Less(t, e, unetTol, "%s: %s", name, c.ref)
		worst = math.Max(worst, e)
	}
	return worst
}

func TestDiTMatchesDiffusers(t *testing.T) {
	r := loadDiTRefs(t)
	for _, name := range r.Models {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest output", checkDiT(t, r, name, core.CPU))
		})
	}
}

func TestDiTOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	r := loadDiTRefs(t)
	for _, name := range r.Models {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest output", checkDiT(t, r, name, webgputest.Device))
		})
	}
}

func TestDiTStateDictNames(t *testing.T) {
	for _, name := range []string{"dit_tiny", "dit_variant"} {
		dir := filepath.Join("testdata", name)
		m, err := LoadDiT(dir)
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

func TestDiTBadInput(t *testing.T) {
	m, err := LoadDiT(filepath.Join("testdata", "dit_tiny"))
	require.NoError(t, err)
	x := core.Zeros(core.Shape{2, 4, 8, 8}, core.F32)
	_, err = m.Forward(x, []float64{1}, []int{0, 11})
	require.ErrorContains(t, err, "class label 11 (element 1) is outside [0, 10]")
	_, err = m.Forward(x, []float64{1, 2, 3}, []int{0, 1})
	require.ErrorContains(t, err, "3 timesteps for a batch of 2")
	_, err = m.Forward(core.Zeros(core.Shape{1, 4, 8, 6}, core.F32), []float64{1}, []int{0})
	require.ErrorContains(t, err, "sample is 8×6; it must be square")

	_, err = ParseDiTConfig([]byte(`{"norm_type": "ada_norm_single"}`))
	require.ErrorContains(t, err, "key \"norm_type\": value \"ada_norm_single\" is not supported")
	_, err = ParseDiTConfig([]byte(`{"activation_fn": "geglu"}`))
	require.ErrorContains(t, err, `activation_fn: "geglu" is not supported`)
	_, err = ParseDiTConfig([]byte(`{"caption_channels": 4}`))
	require.ErrorContains(t, err, `unknown key "caption_channels"`)
}

// A checkpoint that does not match its config fails naming the tensors.
func TestDiTLoadMismatch(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "dit_tiny")
	raw, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(raw, &cfg))
	cfg["num_layers"], cfg["out_channels"] = 3, 4
	raw, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644))
	st, err := os.ReadFile(filepath.Join(src, "diffusion_pytorch_model.safetensors"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "diffusion_pytorch_model.safetensors"), st, 0o644))
	_, err = LoadDiT(dir)
	require.ErrorContains(t, err, "tensor transformer_blocks.2.attn1.to_q.weight is missing (want shape [16 16])")
	require.ErrorContains(t, err, "tensor proj_out_2.weight has shape [32 16], want [16 16]")
}

// DiTPipeline against diffusers' with the noise it drew.
func testDiTPipeline(t *testing.T, dev core.Device) {
	b, err := os.ReadFile("testdata/dit_refs.json")
	require.NoError(t, err)
	var meta struct {
		Labels    []int `json:"pipe_labels"`
		Pipelines map[string]struct {
			Steps         int     `json:"steps"`
			GuidanceScale float64 `json:"guidance_scale"`
			NoiseDraws    int     `json:"noise_draws"`
			Scheduler     string  `json:"scheduler"`
		} `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal(b, &meta))
	r := loadDiTRefs(t)
	m, err := LoadDiT(filepath.Join("testdata", "dit_pipe"), WithDevice(dev))
	require.NoError(t, err)
	vae, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"), WithDevice(dev))
	require.NoError(t, err)
	names := make([]string, 0, len(meta.Pipelines))
	for name := range meta.Pipelines {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		run := meta.Pipelines[name]
		t.Run(name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(run.Scheduler))
			require.NoError(t, err)
			s, err := New(cfg.Class, cfg)
			require.NoError(t, err)
			img2 := &img2imgRefs{unetRefs: r.unetRefs}
			k := 0
			p := &DiTPipeline{Model: m, Scheduler: s, VAE: vae, GuidanceScale: run.GuidanceScale}
			images, err := p.Generate(meta.Labels, run.Steps, img2.replayNoise(t, "pipe_"+name, run.NoiseDraws, &k))
			require.NoError(t, err)
			require.Equal(t, run.NoiseDraws, k, "noise draws")
			e := relMaxErr(t, images, r.get(t, "pipe_"+name+"/images", core.CPU))
			require.Less(t, e, condPipeTol)
			t.Logf("worst error: %.2g", e)
		})
	}
}

func TestDiTPipelineMatchesDiffusers(t *testing.T) { testDiTPipeline(t, core.CPU) }

func TestDiTPipelineOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	testDiTPipeline(t, webgputest.Device)
}
