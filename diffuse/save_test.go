package diffuse

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// probe is a fixed input both sides can build: sin(i/7) in (-1, 1).
func probe(shape core.Shape) *core.Tensor {
	v := make([]float32, shape.Numel())
	for i := range v {
		v[i] = float32(math.Sin(float64(i) / 7))
	}
	return core.FromSlice(v, shape)
}

// A saved pipeline loads back (LoadUNet2D, the configs' parsers) to the
// same model and scheduler.
func TestSavePipelineLoadsBack(t *testing.T) {
	m, err := NewUNet2D(tinyTrainConfig(), 5)
	require.NoError(t, err)
	m.Train(false)
	cfg, _ := Defaults("DDPMScheduler")
	cfg.BetaSchedule = "squaredcos_cap_v2"
	ddim, err := cfg.For("DDIMScheduler")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, SavePipeline(dir, m, ddim))

	var index map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, "model_index.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &index))
	assert.Equal(t, map[string]any{"_class_name": "DDIMPipeline", "scheduler": []any{"diffusers", "DDIMScheduler"},
		"unet": []any{"diffusers", "UNet2DModel"}}, index)
	raw, err = os.ReadFile(filepath.Join(dir, "scheduler", "scheduler_config.json"))
	require.NoError(t, err)
	back, err := ParseConfig(raw)
	require.NoError(t, err)
	assert.Equal(t, ddim, back)

	loaded, err := LoadUNet2D(filepath.Join(dir, "unet"))
	require.NoError(t, err)
	assert.Equal(t, m.Config, loaded.Config)
	x := probe(core.Shape{2, 1, 8, 8})
	want, err := m.Forward(x, 321)
	require.NoError(t, err)
	got, err := loaded.Forward(x, 321)
	require.NoError(t, err)
	wv, _ := want.Float32s()
	gv, _ := got.Float32s()
	assert.Equal(t, wv, gv, "the loaded model computes the saved one's outputs bit for bit")

	_, err = QuantizeInt8(loaded)
	require.NoError(t, err)
	err = SavePipeline(t.TempDir(), loaded, ddim)
	assert.ErrorContains(t, err, "diffuse: SavePipeline: the model holds int8 weights")
}

// Every scheduler's defaults, and a changed config, survive JSON and
// ParseConfig unchanged.
func TestSchedulerConfigJSONRoundTrips(t *testing.T) {
	for _, name := range Names() {
		c, err := Defaults(name)
		require.NoError(t, err)
		raw, err := c.JSON()
		require.NoError(t, err)
		back, err := ParseConfig(raw)
		require.NoError(t, err, name)
		assert.Equal(t, c, back, name)
	}
	c, _ := Defaults("DDIMScheduler")
	c.Eta, c.TrainedBetas, c.BetaSchedule = 0.5, []float64{0.1, 0.2}, "scaled_linear"
	raw, err := c.JSON()
	require.NoError(t, err)
	back, err := ParseConfig(raw)
	require.NoError(t, err)
	assert.Equal(t, c, back)
	_, err = Config{Class: "Fancy"}.JSON()
	assert.ErrorContains(t, err, `unknown scheduler "Fancy"`)
}

func TestUNet2DConfigJSONRoundTrips(t *testing.T) {
	for _, c := range []UNet2DConfig{DefaultUNet2DConfig(), tinyTrainConfig()} {
		raw, err := c.JSON()
		require.NoError(t, err)
		back, err := ParseUNet2DConfig(raw)
		require.NoError(t, err)
		assert.Equal(t, c, back)
	}
	c := tinyTrainConfig()
	c.MidBlock, c.AttentionHeadDim, c.TimeEmbeddingDim, c.FreqShift = false, 0, 64, 1
	raw, err := c.JSON()
	require.NoError(t, err)
	back, err := ParseUNet2DConfig(raw)
	require.NoError(t, err)
	assert.Equal(t, c, back)
	c.BlockOutChannels = nil
	_, err = c.JSON()
	assert.ErrorContains(t, err, "block_out_channels: empty")
}

// diffusers itself loads a saved pipeline (DiffusionPipeline.from_pretrained)
// and its UNet computes what ours does. Needs a Python with diffusers
// ($WEBTENSOR_PYTHON or the repository's .venv); skips without one.
func TestSavedPipelineLoadsInDiffusers(t *testing.T) {
	py := pythonWith(t, "diffusers")
	m, err := NewUNet2D(tinyTrainConfig(), 9)
	require.NoError(t, err)
	m.Train(false)
	cfg, _ := Defaults("DDPMScheduler")
	cfg.BetaSchedule = "squaredcos_cap_v2"
	dir := t.TempDir()
	require.NoError(t, SavePipeline(dir, m, cfg))
	x := probe(core.Shape{2, 1, 8, 8})
	want, err := m.Forward(x, 400)
	require.NoError(t, err)
	wv, _ := want.Float32s()

	script := `
import json, sys, numpy as np, torch
from diffusers import DiffusionPipeline
pipe = DiffusionPipeline.from_pretrained(sys.argv[1])
x = torch.from_numpy(np.sin(np.arange(2 * 64, dtype=np.float64) / 7).astype(np.float32).reshape(2, 1, 8, 8))
with torch.no_grad():
    out = pipe.unet(x, 400).sample
print(json.dumps({"pipeline": type(pipe).__name__, "scheduler": type(pipe.scheduler).__name__,
                  "beta_schedule": pipe.scheduler.config.beta_schedule, "out": out.flatten().tolist()}))
`
	out, err := exec.Command(py, "-c", script, dir).Output()
	require.NoError(t, err, "diffusers could not load %s: %s", dir, exitStderr(err))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var got struct {
		Pipeline, Scheduler string
		BetaSchedule        string `json:"beta_schedule"`
		Out                 []float64
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &got))
	assert.Equal(t, "DDPMPipeline", got.Pipeline)
	assert.Equal(t, "DDPMScheduler", got.Scheduler)
	assert.Equal(t, "squaredcos_cap_v2", got.BetaSchedule)
	require.Len(t, got.Out, len(wv))
	for i := range wv {
		require.InDelta(t, got.Out[i], float64(wv[i]), 1e-4, "output %d", i)
	}
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// pythonWith is a Python that imports module: $WEBTENSOR_PYTHON or the
// repository's .venv; the test skips, saying so, without one (make test's
// environment has PyTorch but not diffusers, which only the reference
// scripts under testdata need).
func pythonWith(t *testing.T, module string) string {
	var tried []string
	for _, py := range []string{os.Getenv("WEBTENSOR_PYTHON"), filepath.Join("..", ".venv", "bin", "python")} {
		if py == "" {
			continue
		}
		if err := exec.Command(py, "-c", "import "+module).Run(); err == nil {
			return py
		}
		tried = append(tried, py)
	}
	t.Skipf("no Python with %s (tried %s; set WEBTENSOR_PYTHON)", module, strings.Join(tried, ", "))
	return ""
}
