package diffuse

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
	"github.com/webtensor/webtensor/nn"
)

// Int8 weights against f32 weights: the same pipelines from the same
// seeds, compared by PSNR (issue 21's bar is 38 dB), and the quantised
// tensors against a plain symmetric per-output-channel quantisation.

// int8PSNR is the bar: images in [0, 1] from int8 weights within 38 dB
// PSNR of the f32 weights' images.
const int8PSNR = 38

// psnr is 10·log10(1/MSE) of two images in [0, 1].
func psnr(t *testing.T, a, b *core.Tensor) float64 {
	t.Helper()
	x, y := reftest.Values(t, a, b)
	mse := 0.0
	for i := range x {
		mse += (x[i] - y[i]) * (x[i] - y[i])
	}
	mse /= float64(len(x))
	return 10 * math.Log10(1/mse)
}

// ddpmImages samples ddpm_pipe's UNet with its DDPM scheduler.
func ddpmImages(t *testing.T, dev core.Device, opts ...LoadOption) (*core.Tensor, *UNet2DModel) {
	t.Helper()
	m, err := LoadUNet2D(filepath.Join("testdata", "ddpm_pipe", "unet"), append([]LoadOption{WithDevice(dev)}, opts...)...)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join("testdata", "ddpm_pipe", "scheduler", "scheduler_config.json"))
	require.NoError(t, err)
	cfg, err := ParseConfig(raw)
	require.NoError(t, err)
	s, err := New(cfg.Class, cfg)
	require.NoError(t, err)
	img, err := NewUNet2DPipeline(m, s).Generate(4, 50, SeededNoise(11))
	require.NoError(t, err)
	return img, m
}

// condImages is text-to-image on the tiny conditional UNet with guidance,
// decoded by the tiny VAE (the UNet and the VAE both take opts), with the
// reference DDIM run's scheduler config: Stable Diffusion's, clip_sample
// off. With clip_sample on (DDIMScheduler's default), this random-weight
// UNet's x0 predictions fall far outside [-1, 1] at every step, the clip
// saturates them, and the latents end as the signs of quantities near
// zero: there f16 weights give 14 dB against f32 and int8 13.5 dB, a
// property of the random model rather than of either rounding (with the
// clip off, f16 gives 68 dB and int8 58).
func condImages(t *testing.T, dev core.Device, opts ...LoadOption) (img *core.Tensor, unet, vae int64) {
	t.Helper()
	r := loadCondRefs(t)
	opts = append([]LoadOption{WithDevice(dev)}, opts...)
	u, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), opts...)
	require.NoError(t, err)
	v, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"), opts...)
	require.NoError(t, err)
	cfg, err := ParseConfig([]byte(r.Pipelines["ddim"].Scheduler))
	require.NoError(t, err)
	require.False(t, cfg.ClipSample)
	s, err := New(cfg.Class, cfg)
	require.NoError(t, err)
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", dev), Negative: r.Get(t, "pipe/negative_prompt_embeds", dev),
		GuidanceScale: 7.5, ImagesPerPrompt: 2}
	latents, err := NewUNet2DConditionPipeline(u, s).Sample(pr, 20, SeededNoise(5))
	require.NoError(t, err)
	x, err := v.Decode(div(latents, v.Config.ScalingFactor))
	require.NoError(t, err)
	img = div(x, 2).Add(scalarLike(x, 0.5)).Clamp(core.Attrs{"min": 0.0, "max": 1.0})
	return img, WeightBytes(u), WeightBytes(v)
}

func testInt8PSNR(t *testing.T, dev core.Device) {
	t.Run("ddpm", func(t *testing.T) {
		ref, m32 := ddpmImages(t, dev)
		got, m8 := ddpmImages(t, dev, WithInt8Weights())
		p := psnr(t, got, ref)
		t.Logf("DDPM, 50 steps, 4 images: PSNR %.1f dB (int8 vs f32 weights); UNet weights %d -> %d bytes", p, WeightBytes(m32), WeightBytes(m8))
		assert.GreaterOrEqual(t, p, float64(int8PSNR))
	})
	t.Run("cond_vae", func(t *testing.T) {
		ref, u32, v32 := condImages(t, dev)
		got, u8, v8 := condImages(t, dev, WithInt8Weights())
		p := psnr(t, got, ref)
		t.Logf("guided DDIM, 20 steps, VAE decode, 4 images: PSNR %.1f dB; UNet %d -> %d bytes, VAE %d -> %d bytes", p, u32, u8, v32, v8)
		assert.GreaterOrEqual(t, p, float64(int8PSNR))
	})
	t.Run("dit", func(t *testing.T) {
		ref, d32, v32 := ditImages(t, dev)
		got, d8, v8 := ditImages(t, dev, WithInt8Weights())
		p := psnr(t, got, ref)
		t.Logf("DiT, guided DPM-Solver++, 20 steps, VAE decode, 2 images: PSNR %.1f dB; DiT %d -> %d bytes, VAE %d -> %d bytes", p, d32, d8, v32, v8)
		assert.GreaterOrEqual(t, p, float64(int8PSNR))
	})
}

// ditImages is DiTPipeline on the tiny DiT and VAE (both taking opts)
// with the reference DPM-Solver run's scheduler, guided.
func ditImages(t *testing.T, dev core.Device, opts ...LoadOption) (img *core.Tensor, dit, vae int64) {
	t.Helper()
	b, err := os.ReadFile("testdata/dit_refs.json")
	require.NoError(t, err)
	var meta struct {
		Labels    []int                                 `json:"pipe_labels"`
		Pipelines map[string]struct{ Scheduler string } `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal(b, &meta))
	opts = append([]LoadOption{WithDevice(dev)}, opts...)
	m, err := LoadDiT(filepath.Join("testdata", "dit_pipe"), opts...)
	require.NoError(t, err)
	v, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"), opts...)
	require.NoError(t, err)
	cfg, err := ParseConfig([]byte(meta.Pipelines["dpm"].Scheduler))
	require.NoError(t, err)
	s, err := New(cfg.Class, cfg)
	require.NoError(t, err)
	img, err = (&DiTPipeline{Model: m, Scheduler: s, VAE: v, GuidanceScale: 4}).Generate(meta.Labels, 20, SeededNoise(3))
	require.NoError(t, err)
	return img, WeightBytes(m), WeightBytes(v)
}

func TestInt8PSNR(t *testing.T) { testInt8PSNR(t, core.CPU) }

func TestInt8PSNROnWebGPU(t *testing.T) {
	webgputest.Need(t)
	testInt8PSNR(t, webgputest.Device)
}

// hostWeights is every linear and conv weight of m as f32 on the host, by
// layer path.
func hostWeights(t *testing.T, m nn.Module) map[string][]float32 {
	out := map[string][]float32{}
	for name, l := range layersOf(m) {
		v, err := l.weight().Tensor().Float32s()
		require.NoError(t, err)
		out[name] = v
	}
	return out
}

// The quantised weights are i8 tensors with max|w|/127 per output channel
// and round(w/scale) as values, what a plain symmetric per-channel
// quantisation gives; the model's bytes fall about fourfold.
func TestInt8WeightsArePerChannelI8(t *testing.T) {
	dir := filepath.Join("testdata", "unet2d_tiny")
	m, err := LoadUNet2D(dir)
	require.NoError(t, err)
	f32 := hostWeights(t, m)
	before := WeightBytes(m)
	n, err := QuantizeInt8(m)
	require.NoError(t, err)
	layers := layersOf(m)
	require.Equal(t, len(layers), n)
	require.Greater(t, n, 20)

	want := before
	for name, l := range layers {
		q := l.quantized()
		require.NotNil(t, q, name)
		shape := q.shape
		out := shape[0]
		words := (shape.Numel()/out + 3) / 4
		require.Equal(t, core.U32, q.packed.DType(), name)
		require.Equal(t, core.Shape{out, words}, q.packed.Shape(), name)
		require.Equal(t, core.F32, q.scale.DType(), name)
		require.Equal(t, core.Shape{out}, q.scale.Shape(), name)
		require.Equal(t, core.Shape{}, l.weight().Tensor().Shape(), "%s: the parameter keeps a placeholder", name)
		vals, err := q.int8s()
		require.NoError(t, err)
		scales, err := q.scale.Float32s()
		require.NoError(t, err)
		w := f32[name]
		require.Len(t, vals, len(w))
		per := len(w) / out
		for c := range out {
			row := w[c*per : (c+1)*per]
			amax := float32(0)
			for _, v := range row {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			s := amax / 127
			require.Equal(t, s, scales[c], "%s channel %d scale", name, c)
			for i, v := range row {
				r := float64(v) / float64(s)
				want := math.RoundToEven(r)
				got := float64(vals[c*per+i])
				// core rounds v·(1/s) in f32, torch's arithmetic; it can
				// differ from v/s only where that is within rounding of a tie.
				if got != want && math.Abs(math.Abs(r-math.Trunc(r))-0.5) > 1e-5 {
					require.Equal(t, want, got, "%s channel %d element %d (w %v, scale %v)", name, c, i, v, s)
				}
				require.LessOrEqual(t, math.Abs(got), 127.0)
			}
		}
		want += int64(4*out*words - 4*len(w) + 4*out) // f32 weights out; words and scales in
	}
	after := WeightBytes(m)
	t.Logf("unet2d_tiny: %d linear and conv layers, weights %d -> %d bytes (%.2fx smaller)", n, before, after, float64(before)/float64(after))
	require.Equal(t, want, after, "the f32 weights' bytes replaced by the packed int8 words' and the scales'")
	require.Less(t, after, before*2/7)

	again, err := QuantizeInt8(m)
	require.NoError(t, err)
	require.Zero(t, again, "a quantised model is left as it is")

	// Quantising at load gives the same tensors as quantising after.
	m2, err := LoadUNet2D(dir, WithInt8Weights())
	require.NoError(t, err)
	for name, l := range layersOf(m2) {
		q, q2 := layers[name].quantized(), l.quantized()
		require.NotNil(t, q2, name)
		a, err := q.packed.Bytes()
		require.NoError(t, err)
		b, err := q2.packed.Bytes()
		require.NoError(t, err)
		require.Equal(t, a, b, name)
		sa, _ := q.scale.Float32s()
		sb, _ := q2.scale.Float32s()
		require.Equal(t, sa, sb, name)
	}
	require.Equal(t, after, WeightBytes(m2))
}

// Forward dequantises at each call: its output is bit-identical to the
// f32 model's with every weight replaced by q·scale, and the resident
// weights stay i8 afterwards.
func testInt8DequantisesPerCall(t *testing.T, dev core.Device) {
	{
		dir := filepath.Join("testdata", "unet2d_tiny")
		m8, err := LoadUNet2D(dir, WithDevice(dev), WithInt8Weights())
		require.NoError(t, err)
		ref, err := LoadUNet2D(dir, WithDevice(dev))
		require.NoError(t, err)
		layers := layersOf(m8)
		for name, l := range layersOf(ref) {
			q := layers[name].quantized()
			vals, err := q.int8s()
			require.NoError(t, err)
			scales, err := q.scale.Float32s()
			require.NoError(t, err)
			deq := make([]float64, len(vals))
			per := len(vals) / len(scales)
			for i, v := range vals {
				deq[i] = float64(float32(v) * scales[i/per])
			}
			w := l.weight()
			require.NoError(t, w.Set(core.FromFloat64s(core.F32, w.Shape(), deq).To(dev)))
		}
		x := core.Randn(core.Attrs{"shape": []int{2, 3, 16, 16}, "seed": int64(4)}).To(dev)
		a, err := m8.Forward(x, 321)
		require.NoError(t, err)
		b, err := ref.Forward(x, 321)
		require.NoError(t, err)
		av, err := a.Float32s()
		require.NoError(t, err)
		bv, err := b.Float32s()
		require.NoError(t, err)
		require.Equal(t, bv, av, "on %s", dev)
		for name, l := range layersOf(m8) {
			require.Equal(t, core.U32, l.quantized().packed.DType(), name)
			require.Equal(t, core.Shape{}, l.weight().Tensor().Shape(), name)
		}
	}
}

func TestInt8DequantisesPerCall(t *testing.T) { testInt8DequantisesPerCall(t, core.CPU) }

func TestInt8DequantisesPerCallOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	testInt8DequantisesPerCall(t, webgputest.Device)
}

// f16 activations: a model loaded in f16 dequantises its int8 weights to
// f16, and stays close to the f16 model.
func TestInt8WithF16Activations(t *testing.T) {
	dir := filepath.Join("testdata", "unet2d_tiny")
	m16, err := LoadUNet2D(dir, WithDType(core.F16))
	require.NoError(t, err)
	m8, err := LoadUNet2D(dir, WithDType(core.F16), WithInt8Weights())
	require.NoError(t, err)
	x := core.Randn(core.Attrs{"shape": []int{1, 3, 16, 16}, "seed": int64(9)}).Cast(core.F16)
	a, err := m8.Forward(x, 500)
	require.NoError(t, err)
	require.Equal(t, core.F16, a.DType())
	b, err := m16.Forward(x, 500)
	require.NoError(t, err)
	e := reftest.RelMaxErr(t, a, b)
	t.Logf("f16 activations: int8 weights against f16 weights, worst error %.2g of the largest output", e)
	require.Less(t, e, 0.05)
	require.Less(t, WeightBytes(m8), WeightBytes(m16)*2/3)
}

// LoRA: Apply works on int8 weights and Remove restores the output bit
// for bit; Merge and Unmerge are refused naming the conflict, and a LoRA
// merged before quantising is kept.
func TestInt8WithLoRA(t *testing.T) {
	c, m32 := loadLoRACase(t, core.CPU)
	m8, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), WithInt8Weights())
	require.NoError(t, err)
	peft := loadLoRA(t, "peft.safetensors")
	plain, err := m8.Forward(c.x, loraT, c.ctx)
	require.NoError(t, err)

	a, err := peft.Apply(m8, 1)
	require.NoError(t, err)
	adapted, err := m8.Forward(c.x, loraT, c.ctx)
	require.NoError(t, err)
	e := reftest.RelMaxErr(t, adapted, c.Get(t, "out_peft", core.CPU))
	t.Logf("LoRA applied to int8 weights: worst error %.2g against diffusers' f32 output", e)
	require.Less(t, e, 0.05)
	require.Greater(t, reftest.RelMaxErr(t, adapted, plain), 10*e, "the adapter changes the output")
	a.Remove()
	again, err := m8.Forward(c.x, loraT, c.ctx)
	require.NoError(t, err)
	pv, _ := plain.Float32s()
	av, _ := again.Float32s()
	require.Equal(t, pv, av)

	require.ErrorContains(t, peft.Merge(m8, 1), "LoRA.Merge: ")
	require.ErrorContains(t, peft.Merge(m8, 1), "hold int8 weights (QuantizeInt8, WithInt8Weights)")
	require.ErrorContains(t, peft.Unmerge(m8, 1), "LoRA.Unmerge: ")

	require.NoError(t, peft.Merge(m32, 1))
	_, err = QuantizeInt8(m32)
	require.NoError(t, err)
	merged, err := m32.Forward(c.x, loraT, c.ctx)
	require.NoError(t, err)
	e = reftest.RelMaxErr(t, merged, c.Get(t, "out_peft", core.CPU))
	t.Logf("LoRA merged, then quantised: worst error %.2g", e)
	require.Less(t, e, 0.05)
}

// A ControlNet and its UNet with int8 weights stay close to diffusers'
// f32 output with the residuals.
func TestInt8ControlNet(t *testing.T) {
	r := loadControlRefs(t)
	const name = "controlnet_tiny"
	net, err := LoadControlNet(filepath.Join("testdata", name), WithInt8Weights())
	require.NoError(t, err)
	unet, err := LoadUNet2DCondition(filepath.Join("testdata", controlUNet[name]), WithInt8Weights())
	require.NoError(t, err)
	x, enc, cond := r.Get(t, name+"/sample", core.CPU), r.Get(t, name+"/encoder_hidden_states", core.CPU), r.Get(t, name+"/cond", core.CPU)
	for _, ts := range r.UNetTimesteps {
		res, err := net.Forward(x, ts, enc, cond, 1)
		require.NoError(t, err)
		out, err := unet.ForwardControlled(x, ts, enc, res)
		require.NoError(t, err)
		e := reftest.RelMaxErr(t, out, r.Get(t, fmt.Sprintf("%s/unet_%d", name, int(ts)), core.CPU))
		t.Logf("t=%v: worst error %.2g of the largest value against diffusers' f32", ts, e)
		require.Less(t, e, 0.05)
	}
}

func TestInt8Refusals(t *testing.T) {
	dir := filepath.Join("testdata", "unet2dcond_tiny")
	_, err := LoadUNet2DConditionStreamed(dir, WithInt8Weights())
	require.ErrorContains(t, err, "LoadUNet2DConditionStreamed: WithInt8Weights: a streamed UNet copies its weights in")
	s, err := LoadUNet2DConditionStreamed(dir)
	require.NoError(t, err)
	defer s.Close()
	_, err = QuantizeInt8(s)
	require.ErrorContains(t, err, "QuantizeInt8: the UNet streams its weights")

	cfg, err := ParseUNet2DConfig([]byte(`{"block_out_channels": [8, 16], "norm_num_groups": 4, "sample_size": 8,
		"down_block_types": ["DownBlock2D", "DownBlock2D"], "up_block_types": ["UpBlock2D", "UpBlock2D"], "layers_per_block": 1}`))
	require.NoError(t, err)
	_, err = NewUNet2D(cfg, 1, WithInt8Weights())
	require.ErrorContains(t, err, "NewUNet2D: WithInt8Weights: NewUNet2D builds a model to train")
	fresh, err := NewUNet2D(cfg, 1)
	require.NoError(t, err)
	_, err = QuantizeInt8(fresh)
	require.ErrorContains(t, err, "in training mode")
	fresh.Train(false)
	_, err = QuantizeInt8(fresh)
	require.NoError(t, err)

	lin, err := nn.NewLinear(3, 4)
	require.NoError(t, err)
	_, err = QuantizeInt8(lin)
	require.ErrorContains(t, err, "QuantizeInt8: a *nn.Linear has no linear or conv layer")

	// A non-finite weight fails naming the layer and channel, and nothing
	// is quantised.
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"))
	require.NoError(t, err)
	w := layersOf(m)["mid_block.resnets.0.conv1"].weight()
	v, err := w.Tensor().Float64s()
	require.NoError(t, err)
	v[len(v)-1] = math.Inf(1)
	require.NoError(t, w.Set(core.FromFloat64s(core.F32, w.Shape(), v)))
	_, err = QuantizeInt8(m)
	require.ErrorContains(t, err, "layer mid_block.resnets.0.conv1: output channel 31 has a non-finite weight (max |w| = +Inf)")
	for name, l := range layersOf(m) {
		require.Nil(t, l.quantized(), name)
	}
}

// On WebGPU, which holds an i8 tensor in 32-bit words, the packed int8
// weights still take a byte each: the device's live buffer bytes for the
// int8 model are about a quarter of the f32 model's, as on the CPU.
func TestInt8WeightsTakeAByteOnWebGPU(t *testing.T) {
	b := webgputest.Need(t)
	dir := filepath.Join("testdata", "unet2d_tiny")
	// Tensors dropped by the loads (and by the tests before this one) free
	// their buffers in finalizers: collect until the count holds still.
	live := func() int64 {
		last := int64(-1)
		for range 50 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			n := b.MemoryInUse()
			if n == last {
				return n
			}
			last = n
		}
		return last
	}
	base := live()
	f32, err := LoadUNet2D(dir, WithDevice(webgputest.Device))
	require.NoError(t, err)
	withF32 := live() - base
	i8, err := LoadUNet2D(dir, WithDevice(webgputest.Device), WithInt8Weights())
	require.NoError(t, err)
	withI8 := live() - base - withF32
	t.Logf("device buffers: f32 model %d bytes, int8 model %d (%.2fx smaller); weights %d -> %d",
		withF32, withI8, float64(withF32)/float64(withI8), WeightBytes(f32), WeightBytes(i8))
	require.Less(t, withI8, withF32*3/10)
	runtime.KeepAlive(f32)
	runtime.KeepAlive(i8)
}
