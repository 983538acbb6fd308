package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// DiTPipeline is diffusers' DiTPipeline: class-conditional sampling with
// a DiTTransformer2DModel. With guidance (GuidanceScale > 1) the batch is
// doubled as [labels, null class], the guided noise is uncond + s·(cond -
// uncond) on the noise channels only (the learned-variance channels pass
// through), and, as diffusers does, the scheduler steps the doubled batch
// (so a stochastic scheduler draws noise for both halves) and the first
// half is the result. The initial latents are not scaled by the
// scheduler's init_noise_sigma, as DiTPipeline does not; use a scheduler
// whose init_noise_sigma is 1 (DDPM, DDIM, DPM-Solver), as DiT's are.
type DiTPipeline struct {
	Model     *DiTTransformer2DModel
	Scheduler Scheduler
	// VAE decodes the latents in Generate (DiT's is sd-vae-ft-ema).
	VAE *AutoencoderKL
	// GuidanceScale is classifier-free guidance's s; <= 1 runs the labels
	// alone. diffusers' default is 4.
	GuidanceScale float64
}

// Sample runs the loop for one image per class label and returns the
// latents (len(labels), in_channels, sample_size, sample_size). noise
// draws the initial latents, then whatever the scheduler's steps draw.
// The null class diffusers' pipeline conditions on is 1000, DiT's class
// count; here it is num_embeds_ada_norm, which is 1000 in DiT's
// checkpoints.
func (p *DiTPipeline) Sample(labels []int, steps int, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: DiTPipeline"
	switch {
	case p.Model == nil || p.Scheduler == nil:
		return nil, fmt.Errorf("%s: Model and Scheduler must be set", op)
	case noise == nil:
		return nil, fmt.Errorf("%s: no Noise (use diffuse.SeededNoise(seed))", op)
	case len(labels) == 0:
		return nil, fmt.Errorf("%s: no class labels", op)
	}
	m := p.Model
	c := m.Config
	b := len(labels)
	guided := p.GuidanceScale > 1
	if err := p.Scheduler.SetTimesteps(steps); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	x, err := drawNoise(noise, "initial noise", core.Shape{b, c.InChannels, c.SampleSize, c.SampleSize}, m.DType(), m.Device())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	in := labels
	if guided {
		x = core.Concat([]*core.Tensor{x, x}, core.Attrs{"axis": 0})
		in = append(append([]int(nil), labels...), make([]int, b)...)
		for i := range b {
			in[b+i] = c.NumEmbedsAdaNorm
		}
	}
	for i, t := range p.Scheduler.Timesteps() {
		if guided {
			half := x.Slice(core.Attrs{"axis": 0, "start": 0, "stop": b})
			x = core.Concat([]*core.Tensor{half, half}, core.Attrs{"axis": 0})
		}
		scaled, err := p.Scheduler.ScaleModelInput(x, t)
		if err != nil {
			return nil, fmt.Errorf("%s: step %d (t=%v): %w", op, i, t, err)
		}
		out, err := m.Forward(scaled, []float64{t}, in)
		if err != nil {
			return nil, fmt.Errorf("%s: step %d (t=%v): %w", op, i, t, err)
		}
		eps := out.Slice(core.Attrs{"axis": 1, "start": 0, "stop": c.InChannels})
		if guided {
			cond := eps.Slice(core.Attrs{"axis": 0, "start": 0, "stop": b})
			uncond := eps.Slice(core.Attrs{"axis": 0, "start": b, "stop": 2 * b})
			g := uncond.Add(mul(cond.Sub(uncond), p.GuidanceScale))
			eps = core.Concat([]*core.Tensor{g, g}, core.Attrs{"axis": 0})
		}
		// diffusers keeps the first in_channels channels when out_channels
		// // 2 is in_channels (learned sigma), else the whole output with
		// the guided noise in front.
		if c.OutChannels/2 != c.InChannels && c.OutChannels != c.InChannels {
			rest := out.Slice(core.Attrs{"axis": 1, "start": c.InChannels, "stop": c.OutChannels})
			eps = core.Concat([]*core.Tensor{eps, rest}, core.Attrs{"axis": 1})
		}
		if x, err = p.Scheduler.Step(eps, t, x, noise); err != nil {
			return nil, fmt.Errorf("%s: step %d (t=%v): %w", op, i, t, err)
		}
	}
	if guided {
		x = x.Slice(core.Attrs{"axis": 0, "start": 0, "stop": b})
	}
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return x, nil
}

// Generate is Sample decoded by the VAE (latents divided by its
// scaling_factor) to images in [0, 1], (len(labels), out_channels, H, W).
func (p *DiTPipeline) Generate(labels []int, steps int, noise Noise) (*core.Tensor, error) {
	if p.VAE == nil {
		return nil, fmt.Errorf("diffuse: DiTPipeline: Generate needs a VAE (Sample returns latents without one)")
	}
	x, err := p.Sample(labels, steps, noise)
	if err != nil {
		return nil, err
	}
	img, err := p.VAE.Decode(mul(x, 1/p.VAE.Config.ScalingFactor))
	if err != nil {
		return nil, fmt.Errorf("diffuse: DiTPipeline: %w", err)
	}
	out := div(img, 2).Add(scalarLike(img, 0.5)).Clamp(core.Attrs{"min": 0.0, "max": 1.0})
	if err := out.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: DiTPipeline: %w", err)
	}
	return out, nil
}
