package diffuse

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The LoRA reference vectors: a seeded PEFT LoRA (attention, feed-forward,
// time projections, and LoCon on the ResNets' 3×3 convs) on the tiny
// conditional UNet, saved by diffusers in PEFT naming and rewritten in
// kohya's, with the UNet's outputs as diffusers applies them
// (testdata/make_lora_refs.py).

const loraT = 500

type loraCase struct {
	refTensors
	x, ctx *core.Tensor
}

func loadLoRACase(t *testing.T, dev core.Device) (*loraCase, *UNet2DConditionModel) {
	t.Helper()
	f, err := safetensors.ReadFile("testdata/lora_refs.safetensors")
	require.NoError(t, err)
	c := &loraCase{refTensors: refTensors{reftest.Refs{File: f}}}
	c.x, c.ctx = c.Get(t, "sample", dev), c.Get(t, "encoder_hidden_states", dev)
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), WithDevice(dev))
	require.NoError(t, err)
	return c, m
}

func (c *loraCase) check(t *testing.T, m *UNet2DConditionModel, ref string) float64 {
	t.Helper()
	out, err := m.Forward(c.x, loraT, c.ctx)
	require.NoError(t, err)
	e := reftest.RelMaxErr(t, out, c.Get(t, ref, core.CPU))
	require.Less(t, e, unetTol, ref)
	return e
}

func loadLoRA(t *testing.T, name string) *LoRA {
	l, err := LoadLoRA(filepath.Join("testdata", "lora", name))
	require.NoError(t, err)
	return l
}

func testLoRARunTime(t *testing.T, dev core.Device) {
	c, m := loadLoRACase(t, dev)
	peft := loadLoRA(t, "peft.safetensors")
	require.Equal(t, "peft", peft.Format)
	a, err := peft.Apply(m, 1)
	require.NoError(t, err)
	require.Equal(t, len(peft.Layers), a.Layers())
	worst := c.check(t, m, "out_peft")
	a.SetScale(0.5)
	worst = math.Max(worst, c.check(t, m, "out_peft_half"))
	a.Remove()
	worst = math.Max(worst, c.check(t, m, "out_base"))

	kohya := loadLoRA(t, "kohya.safetensors")
	require.Equal(t, "kohya", kohya.Format)
	a, err = kohya.Apply(m, 1)
	require.NoError(t, err)
	worst = math.Max(worst, c.check(t, m, "out_kohya"))
	a.Remove()
	t.Logf("worst error: %.2g of the largest output", worst)
}

// stateValues is every tensor of m's state dict, read to the host.
func stateValues(t *testing.T, m *UNet2DConditionModel) map[string][]float64 {
	out := map[string][]float64{}
	for _, s := range m.StateDict() {
		v, err := s.Value.Tensor().Float64s()
		require.NoError(t, err)
		out[s.Name] = v
	}
	return out
}

func testLoRAMerge(t *testing.T, dev core.Device) {
	c, m := loadLoRACase(t, dev)
	before := stateValues(t, m)
	worst, drift := 0.0, 0.0
	for _, file := range []string{"peft.safetensors", "kohya.safetensors"} {
		l := loadLoRA(t, file)
		ref := map[string]string{"peft.safetensors": "out_peft", "kohya.safetensors": "out_kohya"}[file]
		require.NoError(t, l.Merge(m, 1))
		worst = math.Max(worst, c.check(t, m, ref))
		require.NoError(t, l.Unmerge(m, 1))
		// The round trip: each weight within a few float32 roundings of its
		// own size plus the delta's.
		for name, after := range stateValues(t, m) {
			for i, w := range before[name] {
				require.InDelta(t, w, after[i], 1e-6*(1+math.Abs(w)), "%s %s[%d]", file, name, i)
				drift = math.Max(drift, math.Abs(w-after[i])/(1+math.Abs(w)))
			}
		}
	}
	worst = math.Max(worst, c.check(t, m, "out_base"))
	t.Logf("worst error: %.2g of the largest output; merge-unmerge drift %.2g", worst, drift)
}

func TestLoRAMatchesDiffusers(t *testing.T) { testLoRARunTime(t, core.CPU) }
func TestLoRAMergeUnmerge(t *testing.T)     { testLoRAMerge(t, core.CPU) }

func TestLoRAOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	t.Run("run-time", func(t *testing.T) { testLoRARunTime(t, webgputest.Device) })
	t.Run("merge", func(t *testing.T) { testLoRAMerge(t, webgputest.Device) })
}

func TestLoRAForAnotherModel(t *testing.T) {
	peft := loadLoRA(t, "peft.safetensors")
	dit, err := LoadDiT(filepath.Join("testdata", "dit_tiny"))
	require.NoError(t, err)
	_, err = peft.Apply(dit, 1)
	require.ErrorContains(t, err, "no layer is for the transformer (the file's layers are for unet)")

	u, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"))
	require.NoError(t, err)
	_, err = peft.Apply(u, 1)
	require.ErrorContains(t, err, "layers match no linear or conv layer of the model (a LoRA for another model?): down_blocks.0.attentions.0.proj_in")

	v, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_variant"))
	require.NoError(t, err)
	err = loadLoRA(t, "kohya.safetensors").Merge(v, 1)
	require.ErrorContains(t, err, "do not fit a")
}

func TestLoRABadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, tensors map[string]*core.Tensor) string {
		path := filepath.Join(dir, name)
		st := map[string]safetensors.Tensor{}
		for k, v := range tensors {
			var err error
			st[k], err = safetensors.FromTensor(v)
			require.NoError(t, err)
		}
		require.NoError(t, safetensors.WriteFile(path, st, nil))
		return path
	}
	w := func(shape ...int) *core.Tensor { return core.Zeros(core.Shape(shape), core.F32) }
	_, err := LoadLoRA(write("dora.safetensors", map[string]*core.Tensor{
		"unet.a.lora_A.weight": w(2, 3), "unet.a.lora_B.weight": w(4, 2), "unet.a.lora_magnitude_vector": w(4)}))
	require.ErrorContains(t, err, "tensor unet.a.lora_magnitude_vector is not a PEFT LoRA tensor")
	_, err = LoadLoRA(write("half.safetensors", map[string]*core.Tensor{"unet.a.lora_A.weight": w(2, 3)}))
	require.ErrorContains(t, err, "layer a has a down tensor but no up tensor")
	_, err = LoadLoRA(write("rank.safetensors", map[string]*core.Tensor{
		"lora_unet_a.lora_down.weight": w(2, 3), "lora_unet_a.lora_up.weight": w(4, 3)}))
	require.ErrorContains(t, err, "layer a: up has shape [4 3], want (out, 2)")
	_, err = LoadLoRA(write("loha.safetensors", map[string]*core.Tensor{"lora_unet_a.hada_w1_a": w(2, 3)}))
	require.ErrorContains(t, err, "tensor lora_unet_a.hada_w1_a is not supported")
	_, err = LoadLoRA(filepath.Join(dir, "absent.safetensors"))
	require.Error(t, err)
	_, statErr := os.Stat(filepath.Join(dir, "absent.safetensors"))
	require.True(t, os.IsNotExist(statErr))
}
