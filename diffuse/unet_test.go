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
