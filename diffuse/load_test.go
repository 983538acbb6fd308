package diffuse

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// A model read through FromFS (a zip archive) is the model read from the
// folder: the text-to-image pipeline's every component included.
func TestFromFSLoadsWhatTheFolderHolds(t *testing.T) {
	z := reftest.ZipOf(t, sdTiny)
	fromZip, err := LoadStableDiffusion(".", FromFS(z))
	require.NoError(t, err)
	fromDir, err := LoadStableDiffusion(sdTiny)
	require.NoError(t, err)
	assert.Equal(t, fromDir.Scheduler, fromZip.Scheduler)
	assert.Equal(t, fromDir.MaxLength, fromZip.MaxLength)
	prompts := []string{"a red cube on a table", ""}
	want, err := fromDir.EncodePrompts(prompts)
	require.NoError(t, err)
	got, err := fromZip.EncodePrompts(prompts)
	require.NoError(t, err)
	assertSameValues(t, want, got, "text encoder states")
	r := TextToImage{Prompts: []string{"a"}, GuidanceScale: 5, Steps: 2}
	want, err = fromDir.Generate(r, SeededNoise(4))
	require.NoError(t, err)
	got, err = fromZip.Generate(r, SeededNoise(4))
	require.NoError(t, err)
	assertSameValues(t, want, got, "images")

	unet := reftest.ZipOf(t, filepath.Join("testdata", "ddpm_pipe"))
	m, err := LoadUNet2D("unet", FromFS(unet))
	require.NoError(t, err)
	d, err := LoadUNet2D(filepath.Join("testdata", "ddpm_pipe", "unet"))
	require.NoError(t, err)
	x := probe(core.Shape{1, 3, 16, 16})
	want, err = d.Forward(x, 10)
	require.NoError(t, err)
	got, err = m.Forward(x, 10)
	require.NoError(t, err)
	assertSameValues(t, want, got, "UNet2DModel outputs")
}

func assertSameValues(t *testing.T, want, got *core.Tensor, what string) {
	t.Helper()
	wv, err := want.Float32s()
	require.NoError(t, err)
	gv, err := got.Float32s()
	require.NoError(t, err)
	assert.Equal(t, want.Shape(), got.Shape(), what)
	assert.Equal(t, wv, gv, what)
}

func TestFromFSErrors(t *testing.T) {
	z := reftest.ZipOf(t, filepath.Join("testdata", "ddpm_pipe"))
	_, err := LoadUNet2D("vae", FromFS(z))
	assert.EqualError(t, err, "diffuse: LoadUNet2D: the zip archive has no vae/config.json")
	_, err = LoadUNet2D("../unet", FromFS(z))
	assert.ErrorContains(t, err, `diffuse: LoadUNet2D: modelfs: folder "../unet" is not a valid path inside the file system`)
	_, err = LoadUNet2DConditionStreamed("unet", FromFS(z))
	assert.ErrorContains(t, err, "diffuse: LoadUNet2DConditionStreamed: FromFS: weight streaming maps the checkpoint file on disk")
	_, err = LoadStableDiffusion(".", FromFS(z))
	assert.ErrorContains(t, err, `model_index.json: _class_name is "DDPMPipeline", want "StableDiffusionPipeline"`)

	// A config that does not parse names the file inside the archive.
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "unet"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "unet", "config.json"), []byte(`{"in_channels": "x"}`), 0o644))
	_, err = LoadUNet2D("unet", FromFS(reftest.ZipOf(t, dir)))
	assert.ErrorContains(t, err, "(in unet/config.json)")
}

// WithProgress reports every step of a run and changes nothing else; an
// error from it stops the run.
func TestWithProgress(t *testing.T) {
	m, err := LoadUNet2D(filepath.Join("testdata", "ddpm_pipe", "unet"))
	require.NoError(t, err)
	cfg, _ := Defaults("DDIMScheduler")
	plain, err := New(cfg.Class, cfg)
	require.NoError(t, err)
	want, err := NewUNet2DPipeline(m, plain).Generate(1, 3, SeededNoise(2))
	require.NoError(t, err)

	var seen [][2]int
	s, _ := New(cfg.Class, cfg)
	got, err := NewUNet2DPipeline(m, WithProgress(s, func(step, steps int) error {
		seen = append(seen, [2]int{step, steps})
		return nil
	})).Generate(1, 3, SeededNoise(2))
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{1, 3}, {2, 3}, {3, 3}}, seen)
	assertSameValues(t, want, got, "images")
	assert.Same(t, s, WithProgress(s, nil), "no progress: the scheduler itself")

	s, _ = New(cfg.Class, cfg)
	_, err = NewUNet2DPipeline(m, WithProgress(s, func(step, _ int) error {
		if step == 2 {
			return assert.AnError
		}
		return nil
	})).Generate(1, 3, SeededNoise(2))
	assert.ErrorContains(t, err, "stopped by its progress callback after step 2 of 3")
	assert.ErrorIs(t, err, assert.AnError)

	// img2img runs the schedule's tail: the steps it runs are counted.
	s, _ = New(cfg.Class, cfg)
	seen = nil
	_, err = NewUNet2DPipeline(m, WithProgress(s, func(step, steps int) error {
		seen = append(seen, [2]int{step, steps})
		return nil
	})).SampleFrom(probe(core.Shape{1, 3, 16, 16}), 0.5, 4, SeededNoise(1))
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{1, 2}, {2, 2}}, seen)
}
