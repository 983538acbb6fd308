package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Denoiser is the model a Pipeline calls at every step: UNet2DModel is
// one. Forward returns what the scheduler's prediction_type says the model
// predicts (noise, v or the clean sample) for sample at timestep t.
type Denoiser interface {
	Forward(sample *core.Tensor, t float64) (*core.Tensor, error)
}

// Pipeline is unconditional sampling, the loop of diffusers' DDPMPipeline
// and DDIMPipeline generalised to any Scheduler: noise scaled by the
// scheduler's init_noise_sigma, then for every timestep the model's
// prediction on the scaled input and a scheduler step. All of it runs on
// Device in DType. With SeededNoise the images are the same on every run
// on one device (the Philox stream is the same on every device; the
// arithmetic's rounding may differ between devices).
type Pipeline struct {
	Model     Denoiser
	Scheduler Scheduler
	// Channels, Height and Width are one image's shape.
	Channels, Height, Width int
	DType                   core.DType
	Device                  core.Device
}

// NewUNet2DPipeline makes the pipeline of m: images of its in_channels and
// sample_size, on its device, in its dtype.
func NewUNet2DPipeline(m *UNet2DModel, s Scheduler) *Pipeline {
	n := m.Config.SampleSize
	return &Pipeline{Model: m, Scheduler: s, Channels: m.Config.InChannels, Height: n, Width: n,
		DType: m.DType(), Device: m.Device()}
}

// Sample runs the loop for a batch of images with steps inference steps
// and returns the final sample (B, Channels, Height, Width), in the
// model's range (about [-1, 1] for image models). noise draws the initial
// sample first, then whatever the scheduler's steps draw: pass
// SeededNoise(seed) for reproducible images.
func (p *Pipeline) Sample(batch, steps int, noise Noise) (*core.Tensor, error) {
	switch {
	case p.Model == nil || p.Scheduler == nil:
		return nil, fmt.Errorf("diffuse: Pipeline: Model and Scheduler must be set")
	case noise == nil:
		return nil, fmt.Errorf("diffuse: Pipeline: no Noise (use diffuse.SeededNoise(seed))")
	case batch < 1:
		return nil, fmt.Errorf("diffuse: Pipeline: batch %d, want >= 1", batch)
	case p.Channels < 1 || p.Height < 1 || p.Width < 1:
		return nil, fmt.Errorf("diffuse: Pipeline: image shape %d×%d×%d (channels×height×width) must be positive", p.Channels, p.Height, p.Width)
	}
	dtype, dev := placement(p.DType, p.Device)
	if err := p.Scheduler.SetTimesteps(steps); err != nil {
		return nil, fmt.Errorf("diffuse: Pipeline: %w", err)
	}
	shape := core.Shape{batch, p.Channels, p.Height, p.Width}
	x, err := noise(shape, dtype, dev)
	if err == nil {
		err = x.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("diffuse: Pipeline: initial noise: %w", err)
	}
	if !x.Shape().Equal(shape) {
		return nil, fmt.Errorf("diffuse: Pipeline: initial noise has shape %v, want %v", x.Shape(), shape)
	}
	if sigma := p.Scheduler.InitNoiseSigma(); sigma != 1 {
		x = mul(x, sigma)
	}
	return p.denoise(x, p.Scheduler.Timesteps(), noise)
}

// denoise runs the loop from x over timesteps ts.
func (p *Pipeline) denoise(x *core.Tensor, ts []float64, noise Noise) (*core.Tensor, error) {
	for i, t := range ts {
		in, err := p.Scheduler.ScaleModelInput(x, t)
		if err != nil {
			return nil, fmt.Errorf("diffuse: Pipeline: step %d (t=%v): %w", i, t, err)
		}
		out, err := p.Model.Forward(in, t)
		if err != nil {
			return nil, fmt.Errorf("diffuse: Pipeline: step %d (t=%v): %w", i, t, err)
		}
		if x, err = p.Scheduler.Step(out, t, x, noise); err != nil {
			return nil, fmt.Errorf("diffuse: Pipeline: step %d (t=%v): %w", i, t, err)
		}
	}
	return x, nil
}

// Generate is Sample mapped to images in [0, 1], as diffusers'
// pipelines return them (x/2 + 0.5, clamped), but (B, C, H, W) on the
// pipeline's device rather than NumPy's (B, H, W, C).
func (p *Pipeline) Generate(batch, steps int, noise Noise) (*core.Tensor, error) {
	x, err := p.Sample(batch, steps, noise)
	if err != nil {
		return nil, err
	}
	img := div(x, 2).Add(scalarLike(x, 0.5)).Clamp(core.Attrs{"min": 0.0, "max": 1.0})
	if err := img.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: Pipeline: %w", err)
	}
	return img, nil
}

// placement is a pipeline's dtype and device, F32 on the CPU when unset.
func placement(dtype core.DType, dev core.Device) (core.DType, core.Device) {
	if dtype == core.Invalid {
		dtype = core.F32
	}
	if dev.Kind == "" {
		dev = core.CPU
	}
	return dtype, dev
}
