package diffuse

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The DiT reference vectors: diffusers 0.42 ran tiny seeded
// DiTTransformer2DModels (testdata/make_dit_refs.py) on a seeded batch.

type ditRefs struct {
	Models  []string         `json:"models"`
	T       []float64        `json:"timesteps"`
	SharedT float64          `json:"shared_timestep"`
	Labels  map[string][]int `json:"labels"`
	// The DiTPipeline runs, on testdata/dit_pipe.
	PipeLabels []int                  `json:"pipe_labels"`
	Pipelines  map[string]pipelineRun `json:"pipelines"`
	refTensors
}

func loadDiTRefs(t testing.TB) *ditRefs {
	t.Helper()
	var r ditRefs
	r.refTensors = readRefs(t, "dit_refs", &r)
	require.Len(t, r.Models, 2)
	return &r
}

func (r *ditRefs) checkDiT(t *testing.T, name string, dev core.Device) float64 {
	m, err := LoadDiT(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	labels := r.Labels[name]
	x := r.Get(t, name+"/sample", dev)
	worst := 0.0
	for _, c := range []struct {
		ref    string
		x      *core.Tensor
		ts     []float64
		labels []int
	}{
		{"out", x, r.T, labels},
		{"out_shared", x, []float64{r.SharedT}, labels},
		{"out_big", r.Get(t, name+"/sample_big", dev), r.T[1:], labels[:1]},
	} {
		out, err := m.Forward(c.x, c.ts, c.labels)
		require.NoError(t, err)
		e := reftest.RelMaxErr(t, out, r.Get(t, name+"/"+c.ref, core.CPU))
		require.Less(t, e, unetTol, "%s: %s", name, c.ref)
		worst = math.Max(worst, e)
	}
	return worst
}

func TestDiTMatchesDiffusers(t *testing.T) {
	r := loadDiTRefs(t)
	checkEach(t, r.Models, core.CPU, r.checkDiT)
}

func TestDiTOnWebGPU(t *testing.T) {
	r := loadDiTRefs(t)
	checkEachOnWebGPU(t, r.Models, r.checkDiT)
}

func TestDiTStateDictNames(t *testing.T) {
	requireCheckpointNames(t, LoadDiT, "dit_tiny", "dit_variant")
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
	r := loadDiTRefs(t)
	m, err := LoadDiT(filepath.Join("testdata", "dit_pipe"), WithDevice(dev))
	require.NoError(t, err)
	vae, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"), WithDevice(dev))
	require.NoError(t, err)
	checkEach(t, sortedKeys(r.Pipelines), dev, func(t *testing.T, name string, dev core.Device) float64 {
		run := r.Pipelines[name]
		k := 0
		p := &DiTPipeline{Model: m, Scheduler: refScheduler(t, run.Scheduler, run.Eta), VAE: vae, GuidanceScale: run.GuidanceScale}
		images, err := p.Generate(r.PipeLabels, run.Steps, r.replayNoise(t, "pipe_"+name, run.NoiseDraws, &k))
		require.NoError(t, err)
		require.Equal(t, run.NoiseDraws, k, "noise draws")
		e := reftest.RelMaxErr(t, images, r.Get(t, "pipe_"+name+"/images", core.CPU))
		require.Less(t, e, condPipeTol)
		return e
	})
}

func TestDiTPipelineMatchesDiffusers(t *testing.T) { testDiTPipeline(t, core.CPU) }

func TestDiTPipelineOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	testDiTPipeline(t, webgputest.Device)
}
