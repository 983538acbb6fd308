package diffuse

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// Benchmarks of the diffusion work at a small Stable-Diffusion-like
// config (testdata/bench_unet.json: two cross-attention levels of 32 and
// 64 channels, 32×32 latents, 16 text tokens of width 64, the batch of 2
// a guided image runs), which testdata/bench_diffusers.py times in
// diffusers in the same run. The weights are drawn (the timing does not
// depend on them): no checkpoint to ship.
//
//	go test -run '^$' -bench 'UNet2DCondition|SchedulerLoop' ./diffuse/
//
// BenchmarkUNet2DConditionInt8Forward times the forward with int8 weights.

const (
	benchBatch = 2
	benchSeq   = 16
	benchSteps = 20
)

// benchUNetConfig is the config the UNet benchmarks build: the small UNet
// by default, testdata/bench_unet_64.json for the size issue 21 names
// (bench_diffusers.py --config passes it).
var benchUNetConfig = flag.String("unet-config", "testdata/bench_unet.json", "the UNet2DConditionModel config.json the UNet benchmarks build")

func benchUNet(b *testing.B, dev core.Device) (*UNet2DConditionModel, *core.Tensor, *core.Tensor) {
	raw, err := os.ReadFile(*benchUNetConfig)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := ParseUNet2DConditionConfig(raw)
	if err != nil {
		b.Fatal(err)
	}
	m := drawnModel(b, dev, func(w *weights) *UNet2DConditionModel { return buildUNet2DCondition(cfg, w) })
	m.dev, m.dtype = dev, core.F32
	s := cfg.SampleSize
	x := core.Randn(core.Attrs{"shape": []int{benchBatch, cfg.InChannels, s, s}, "dtype": core.F32, "seed": int64(2)}).To(dev)
	ctx := core.Randn(core.Attrs{"shape": []int{benchBatch, benchSeq, cfg.CrossAttentionDim}, "dtype": core.F32, "seed": int64(3)}).To(dev)
	return m, x, ctx
}

// drawnModel builds a model with build on f32 weights on dev drawn from
// seed 1 (timing does not depend on them), failing b if the model left
// any unused.
func drawnModel[M any](b *testing.B, dev core.Device, build func(*weights) M) M {
	w, err := newWeights(nil, dev, core.F32)
	if err != nil {
		b.Fatal(err)
	}
	w.seed = 1
	m := build(w)
	if err := w.check("bench"); err != nil {
		b.Fatal(err)
	}
	return m
}

// benchDevices are the CPU and, where an adapter opens, WebGPU.
func benchDevices(b *testing.B) []core.Device {
	devs := []core.Device{core.CPU}
	if webgputest.Present(b) {
		devs = append(devs, webgputest.Device)
	}
	return devs
}

// BenchmarkUNet2DConditionForward is one forward of the batch (reading
// the output back, so a device's queue is drained).
func BenchmarkUNet2DConditionForward(b *testing.B) { benchForward(b, false, false) }

// BenchmarkUNet2DConditionInt8Forward is the same forward with the
// weights held as int8 (QuantizeInt8), each dequantised at its layer's
// call: the time that costs over BenchmarkUNet2DConditionForward. (Named
// so that bench_diffusers.py's pattern does not pick it up.)
func BenchmarkUNet2DConditionInt8Forward(b *testing.B) { benchForward(b, true, false) }

// BenchmarkCompiledUNet2DCondition is the forward as a fused IR graph
// (CompiledUNet), traced before the timing starts.
func BenchmarkCompiledUNet2DCondition(b *testing.B) { benchForward(b, false, true) }

func benchForward(b *testing.B, int8, compiled bool) {
	for _, dev := range benchDevices(b) {
		b.Run(dev.Kind, func(b *testing.B) {
			m, x, ctx := benchUNet(b, dev)
			m.Train(false)
			if int8 {
				if _, err := QuantizeInt8(m); err != nil {
					b.Fatal(err)
				}
			}
			var model CondDenoiser = m
			if compiled {
				c, err := CompileUNet2DCondition(m)
				if err != nil {
					b.Fatal(err)
				}
				model = c
			}
			run := func() {
				out, err := model.Forward(x, 500, ctx)
				if err == nil {
					_, err = out.Float32s()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			run()
			b.ResetTimer()
			for b.Loop() {
				run()
			}
			b.ReportMetric(float64(cpu.NumThreads()), "threads")
			b.ReportMetric(float64(WeightBytes(m)), "weight-bytes")
		})
	}
}

// BenchmarkSchedulerLoop is a 20-step loop of a scheduler alone on the
// batch's latents, with a fixed stand-in for the model's output: the
// per-step cost a pipeline adds to the UNet's.
func BenchmarkSchedulerLoop(b *testing.B) {
	for _, dev := range benchDevices(b) {
		for _, class := range []string{"DDIMScheduler", "EulerDiscreteScheduler", "DPMSolverMultistepScheduler"} {
			b.Run(fmt.Sprintf("%s/%s", dev.Kind, class), func(b *testing.B) {
				x := core.Randn(core.Attrs{"shape": []int{benchBatch, 4, 32, 32}, "dtype": core.F32, "seed": int64(4)}).To(dev)
				eps := mul(x, 0.1)
				cfg, err := Defaults(class)
				if err != nil {
					b.Fatal(err)
				}
				s, err := New(class, cfg)
				if err != nil {
					b.Fatal(err)
				}
				run := func() {
					if err := s.SetTimesteps(benchSteps); err != nil {
						b.Fatal(err)
					}
					y := x
					for _, t := range s.Timesteps() {
						in, err := s.ScaleModelInput(y, t)
						if err == nil {
							_ = in
							y, err = s.Step(eps, t, y, nil)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					if _, err := y.Float32s(); err != nil {
						b.Fatal(err)
					}
				}
				run()
				b.ResetTimer()
				for b.Loop() {
					run()
				}
			})
		}
	}
}
