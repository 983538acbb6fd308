package diffuse

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The UNet reference vectors: diffusers 0.42 ran tiny seeded UNet2DModels
// (testdata/make_unet_refs.py) on a seeded batch at a few timesteps, and the
// DDPM and DDIM pipelines on the first one.

// unetTol is the UNet tolerance, relative to the largest reference value:
// float32 convolutions, matmuls and group norms summed in another order
// than torch's differ by ~1e-6 of the output's scale per layer; a dozen
// layers deep, 1e-4 leaves room for GPU reductions too.
const unetTol = 1e-4

func (r *unetRefs) checkUNet(t *testing.T, name string, dev core.Device) float64 {
	m, err := LoadUNet2D(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	return r.checkTimesteps(t, name, dev, unetTol, m.Forward, m.ForwardTimesteps)
}

func TestUNet2DMatchesDiffusers(t *testing.T) {
	r := loadUNetRefs(t, "unet_refs")
	checkEach(t, r.Models, core.CPU, r.checkUNet)
}

func TestUNet2DOnWebGPU(t *testing.T) {
	r := loadUNetRefs(t, "unet_refs")
	checkEachOnWebGPU(t, r.Models, r.checkUNet)
}

func TestUNet2DStateDictNames(t *testing.T) {
	requireCheckpointNames(t, LoadUNet2D, "unet2d_tiny", "unet2d_variant")
}

// replayPipeline runs diffusers' pipeline pname with the noise it drew and
// returns the worst relative error of the images.
func (r *unetRefs) replayPipeline(t *testing.T, pname string, dev core.Device) float64 {
	ref, ok := r.Pipelines[pname]
	require.True(t, ok, pname)
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"), WithDevice(dev))
	require.NoError(t, err)
	k := 0
	p := NewUNet2DPipeline(m, refScheduler(t, ref.Scheduler, ref.Eta))
	img, err := p.Generate(2, ref.Steps, r.stackedNoise("pipe_"+pname+"/noise", ref.NoiseDraws, &k))
	require.NoError(t, err)
	require.Equal(t, ref.NoiseDraws, k, "noise draws")
	e := reftest.RelMaxErr(t, img, r.Get(t, "pipe_"+pname+"/images", core.CPU))
	require.Less(t, e, pipeTol, pname)
	return e
}

// pipeTol bounds the images' error relative to their largest value (1):
// the UNet's 1e-6 differences pass through DDPM's and DDIM's steps, whose
// coefficients (up to 1/sqrt(alpha_cumprod) ~ 150 at t = 999 before
// clipping) magnify them.
const pipeTol = 1e-4

func TestPipelineMatchesDiffusers(t *testing.T) {
	r := loadUNetRefs(t, "unet_refs")
	checkEach(t, []string{"ddpm", "ddim"}, core.CPU, r.replayPipeline)
}

func TestPipelineOnWebGPU(t *testing.T) {
	r := loadUNetRefs(t, "unet_refs")
	checkEachOnWebGPU(t, []string{"ddpm", "ddim"}, r.replayPipeline)
}

// A seeded pipeline makes the same images twice, and another seed others.
func TestPipelineDeterministic(t *testing.T) {
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"))
	require.NoError(t, err)
	run := func(seed uint64) []float64 {
		cfg, _ := Defaults("DDPMScheduler")
		s, err := New("DDPMScheduler", cfg)
		require.NoError(t, err)
		img, err := NewUNet2DPipeline(m, s).Generate(1, 3, SeededNoise(seed))
		require.NoError(t, err)
		require.Equal(t, core.Shape{1, 3, 16, 16}, img.Shape())
		v, err := img.Float64s()
		require.NoError(t, err)
		return v
	}
	a := run(7)
	require.Equal(t, a, run(7))
	require.NotEqual(t, a, run(8))
}
