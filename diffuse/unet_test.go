package diffuse

import (
	"encoding/json"
	"fmt"
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

// The UNet reference vectors: diffusers 0.42 ran tiny seeded UNet2DModels
// (testdata/make_unet_refs.py) on a seeded batch at a few timesteps, and the
// DDPM and DDIM pipelines on the first one.

type unetRefs struct {
	Timesteps []float64 `json:"timesteps"`
	PerBatch  []float64 `json:"per_batch"`
	Models    []string  `json:"models"`
	Pipelines map[string]struct {
		Steps      int     `json:"steps"`
		NoiseDraws int     `json:"noise_draws"`
		Scheduler  string  `json:"scheduler"`
		Eta        float64 `json:"eta"`
	} `json:"pipelines"`
	tensors *safetensors.File
}

func loadUNetRefs(t testing.TB) *unetRefs {
	t.Helper()
	b, err := os.ReadFile("testdata/unet_refs.json")
	require.NoError(t, err)
	var r unetRefs
	require.NoError(t, json.Unmarshal(b, &r))
	r.tensors, err = safetensors.ReadFile("testdata/unet_refs.safetensors")
	require.NoError(t, err)
	require.Len(t, r.Models, 2)
	return &r
}

func (r *unetRefs) get(t testing.TB, name string, dev core.Device) *core.Tensor {
	t.Helper()
	st, ok := r.tensors.Tensors[name]
	require.True(t, ok, "no reference tensor %s", name)
	x := st.ToTensor(dev)
	require.NoError(t, x.Err())
	return x
}

// unetTol is the UNet tolerance, relative to the largest reference value:
// float32 convolutions, matmuls and group norms summed in another order
// than torch's differ by ~1e-6 of the output's scale per layer; a dozen
// layers deep, 1e-4 leaves room for GPU reductions too.
const unetTol = 1e-4

// relMaxErr is max|got - want| / max|want|.
func relMaxErr(t testing.TB, got, want *core.Tensor) float64 {
	t.Helper()
	require.NoError(t, got.Err())
	require.Equal(t, want.Shape(), got.Shape())
	g, err := got.Float64s()
	require.NoError(t, err)
	w, err := want.Float64s()
	require.NoError(t, err)
	diff, scale := 0.0, 0.0
	for i := range w {
		diff = math.Max(diff, math.Abs(g[i]-w[i]))
		scale = math.Max(scale, math.Abs(w[i]))
	}
	if !(diff <= diff) { // NaN
		return math.Inf(1)
	}
	return diff / scale
}

// checkUNet runs every reference input of model name on dev and returns
// the worst relative error.
func checkUNet(t *testing.T, r *unetRefs, name string, dev core.Device) float64 {
	m, err := LoadUNet2D(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	x := r.get(t, name+"/sample", dev)
	worst := 0.0
	for _, ts := range r.Timesteps {
		out, err := m.Forward(x, ts)
		require.NoError(t, err)
		e := relMaxErr(t, out, r.get(t, fmt.Sprintf("%s/out_%d", name, int(ts)), core.CPU))
		require.Less(t, e, unetTol, "%s at t=%v", name, ts)
		worst = math.Max(worst, e)
	}
	per := core.FromFloat64s(core.I64, core.Shape{len(r.PerBatch)}, r.PerBatch, dev)
	out, err := m.ForwardTimesteps(x, per)
	require.NoError(t, err)
	e := relMaxErr(t, out, r.get(t, name+"/out_per_batch", core.CPU))
	require.Less(t, e, unetTol, "%s at per-batch timesteps %v", name, r.PerBatch)
	return math.Max(worst, e)
}

func TestUNet2DMatchesDiffusers(t *testing.T) {
	r := loadUNetRefs(t)
	for _, name := range r.Models {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest output", checkUNet(t, r, name, core.CPU))
		})
	}
}

func TestUNet2DOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	r := loadUNetRefs(t)
	for _, name := range r.Models {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest output", checkUNet(t, r, name, webgputest.Device))
		})
	}
}

// The state dict is the checkpoint's: the same names (so nn.Save writes a
// file diffusers loads) and diffusers' order.
func TestUNet2DStateDictNames(t *testing.T) {
	for _, name := range []string{"unet2d_tiny", "unet2d_variant"} {
		dir := filepath.Join("testdata", name)
		m, err := LoadUNet2D(dir)
		require.NoError(t, err)
		f, err := safetensors.ReadFile(filepath.Join(dir, "diffusion_pytorch_model.safetensors"))
		require.NoError(t, err)
		var mine []string
		for _, s := range m.StateDict() {
			mine = append(mine, s.Name)
		}
		want := append([]string(nil), f.Names...)
		sort.Strings(want)
		got := append([]string(nil), mine...)
		sort.Strings(got)
		require.Equal(t, want, got, name)
	}
}

// replayPipeline runs diffusers' pipeline pname with the noise it drew and
// returns the worst relative error of the images.
func replayPipeline(t *testing.T, r *unetRefs, pname string, dev core.Device) float64 {
	ref, ok := r.Pipelines[pname]
	require.True(t, ok, pname)
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"), WithDevice(dev))
	require.NoError(t, err)
	cfg, err := ParseConfig([]byte(ref.Scheduler))
	require.NoError(t, err)
	cfg.Eta = ref.Eta
	s, err := New(cfg.Class, cfg)
	require.NoError(t, err)
	st := r.tensors.Tensors["pipe_"+pname+"/noise"]
	k := 0
	noise := func(shape core.Shape, dtype core.DType, d core.Device) (*core.Tensor, error) {
		if k >= ref.NoiseDraws {
			return nil, fmt.Errorf("draw %d: diffusers drew only %d times", k, ref.NoiseDraws)
		}
		n := len(st.Data) / st.Shape[0]
		x := safetensors.Tensor{DType: st.DType, Shape: st.Shape[1:], Data: st.Data[k*n : (k+1)*n]}.ToTensor(d)
		k++
		return x, x.Err()
	}
	p := NewUNet2DPipeline(m, s)
	img, err := p.Generate(2, ref.Steps, noise)
	require.NoError(t, err)
	require.Equal(t, ref.NoiseDraws, k, "noise draws")
	e := relMaxErr(t, img, r.get(t, "pipe_"+pname+"/images", core.CPU))
	require.Less(t, e, pipeTol, pname)
	return e
}

// pipeTol bounds the images' error relative to their largest value (1):
// the UNet's 1e-6 differences pass through DDPM's and DDIM's steps, whose
// coefficients (up to 1/sqrt(alpha_cumprod) ~ 150 at t = 999 before
// clipping) magnify them.
const pipeTol = 1e-4

func TestPipelineMatchesDiffusers(t *testing.T) {
	r := loadUNetRefs(t)
	for _, pname := range []string{"ddpm", "ddim"} {
		t.Run(pname, func(t *testing.T) {
			t.Logf("worst error: %.2g", replayPipeline(t, r, pname, core.CPU))
		})
	}
}

func TestPipelineOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	r := loadUNetRefs(t)
	for _, pname := range []string{"ddpm", "ddim"} {
		t.Run(pname, func(t *testing.T) {
			t.Logf("worst error: %.2g", replayPipeline(t, r, pname, webgputest.Device))
		})
	}
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
