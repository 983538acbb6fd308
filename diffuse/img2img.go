package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// img2img: diffusers' StableDiffusionImg2ImgPipeline semantics. strength
// in (0, 1] picks how much of the schedule runs: of n steps the last
// int(n·strength) do, the starting image is noised to the first of them by
// the scheduler's add_noise, and the loop denoises from there. strength 1
// starts from (almost) pure noise; small strengths keep the image.

// img2imgSchedule is get_timesteps: the loop's timesteps and the index of
// the first in the scheduler's schedule, after SetTimesteps(steps); the
// scheduler is placed there (set_begin_index).
func img2imgSchedule(s Scheduler, steps int, strength float64) ([]float64, error) {
	if !(strength > 0 && strength <= 1) {
		return nil, fmt.Errorf("strength %v is outside (0, 1]", strength)
	}
	if err := s.SetTimesteps(steps); err != nil {
		return nil, err
	}
	all := s.Timesteps()
	// Python's int(num_inference_steps * strength) truncates the float64 product.
	keep := min(int(float64(steps)*strength), steps)
	start := max(steps-keep, 0)
	// Every scheduler here has order 1 (diffusers' scheduler.order), so
	// the step index is the timestep index.
	if keep == 0 || start >= len(all) {
		return nil, fmt.Errorf("strength %v of %d steps leaves no step to run (it keeps int(%d·%v) = %d)", strength, steps, steps, strength, keep)
	}
	if b, ok := s.(interface{ setBegin(int) error }); ok {
		if err := b.setBegin(start); err != nil {
			return nil, err
		}
	}
	return all[start:], nil
}

// drawNoise draws shape from noise and checks what comes back.
func drawNoise(noise Noise, what string, shape core.Shape, dtype core.DType, dev core.Device) (*core.Tensor, error) {
	x, err := noise(shape, dtype, dev)
	if err == nil {
		err = x.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !x.Shape().Equal(shape) {
		return nil, fmt.Errorf("%s has shape %v, want %v", what, x.Shape(), shape)
	}
	return x, nil
}

// checkStart checks a starting image or latents against the pipeline's
// dtype, device and channels.
func checkStart(what string, x *core.Tensor, channels int, dtype core.DType, dev core.Device) error {
	if x == nil {
		return fmt.Errorf("no %s (nil)", what)
	}
	if err := x.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	s := x.Shape()
	if len(s) != 4 || s[0] < 1 || s[1] != channels || s[2] < 1 || s[3] < 1 {
		return fmt.Errorf("%s have shape %v, want (batch, %d, height, width)", what, s, channels)
	}
	if x.DType() != dtype || x.Device() != dev {
		return fmt.Errorf("%s are %s on %s, the pipeline %s on %s", what, x.DType(), x.Device(), dtype, dev)
	}
	return nil
}

// SampleFrom is img2img in the model's own space (pixels for a
// UNet2DModel): images (B, Channels, H, W) in the model's range (about
// [-1, 1]) are noised to the strength's starting timestep and denoised
// over the rest of a steps-step schedule. noise draws the added noise
// first, then whatever the scheduler's steps draw.
func (p *Pipeline) SampleFrom(images *core.Tensor, strength float64, steps int, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: Pipeline.SampleFrom"
	if p.Model == nil || p.Scheduler == nil {
		return nil, fmt.Errorf("%s: Model and Scheduler must be set", op)
	}
	if noise == nil {
		return nil, fmt.Errorf("%s: no Noise (use diffuse.SeededNoise(seed))", op)
	}
	dtype, dev := placement(p.DType, p.Device)
	if err := checkStart("images", images, p.Channels, dtype, dev); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ts, err := img2imgSchedule(p.Scheduler, steps, strength)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	z, err := drawNoise(noise, "noise", images.Shape(), dtype, dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	x, err := p.Scheduler.AddNoise(images, z, ts[:1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return p.denoise(x, ts, noise)
}

// SampleFrom is img2img on latents: latents (B, Channels, h, w), already
// multiplied by the VAE's scaling factor, are noised to the strength's
// starting timestep and denoised with guidance over the rest of a
// steps-step schedule, as StableDiffusionImg2ImgPipeline does. When the
// prompts ask for more images (P·ImagesPerPrompt) than latents, a batch
// that divides it is repeated whole, as diffusers does; the result has
// P·ImagesPerPrompt latents. noise draws the added noise first, then
// whatever the scheduler's steps draw.
func (p *CondPipeline) SampleFrom(latents *core.Tensor, strength float64, pr Prompts, steps int, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: CondPipeline.SampleFrom"
	switch {
	case p.Model == nil || p.Scheduler == nil:
		return nil, fmt.Errorf("%s: Model and Scheduler must be set", op)
	case noise == nil:
		return nil, fmt.Errorf("%s: no Noise (use diffuse.SeededNoise(seed))", op)
	case pr.ImagesPerPrompt < 0:
		return nil, fmt.Errorf("%s: ImagesPerPrompt %d, want >= 1 (or 0 for 1)", op, pr.ImagesPerPrompt)
	}
	dtype, dev := placement(p.DType, p.Device)
	if err := checkStart("latents", latents, p.Channels, dtype, dev); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ctx, batch, guided, err := pr.context(dtype, dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ctrl, err := p.control(pr, guided, dtype, dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	n := dimOf(latents, 0)
	switch {
	case batch%n != 0 || batch < n:
		return nil, fmt.Errorf("%s: %d latents cannot be repeated to the prompts' batch of %d", op, n, batch)
	case batch > n:
		copies := make([]*core.Tensor, batch/n)
		for i := range copies {
			copies[i] = latents
		}
		latents = core.Concat(copies, core.Attrs{"axis": 0})
	}
	ts, err := img2imgSchedule(p.Scheduler, steps, strength)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	z, err := drawNoise(noise, "noise", latents.Shape(), dtype, dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	x, err := p.Scheduler.AddNoise(latents, z, ts[:1])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return p.denoise(x, ts, ctx, batch, guided, pr.GuidanceScale, ctrl, noise)
}

// Img2ImgPipeline is StableDiffusionImg2ImgPipeline without its text
// encoder: a VAE and a CondPipeline. Generate encodes images in [0, 1]
// (mapped to [-1, 1] as diffusers' image processor does), samples the
// posterior and scales it by scaling_factor, runs CondPipeline.SampleFrom,
// and decodes the latents back to images in [0, 1].
type Img2ImgPipeline struct {
	VAE  *AutoencoderKL
	Cond *CondPipeline
}

// Generate returns (P·ImagesPerPrompt, out_channels, H', W') images in [0,
// 1] for images (B, in_channels, H, W) in [0, 1]. noise draws the
// posterior's sample first, then the added noise, then the scheduler's.
func (p *Img2ImgPipeline) Generate(images *core.Tensor, strength float64, pr Prompts, steps int, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: Img2ImgPipeline"
	if p.VAE == nil || p.Cond == nil {
		return nil, fmt.Errorf("%s: VAE and Cond must be set", op)
	}
	if noise == nil {
		return nil, fmt.Errorf("%s: no Noise (use diffuse.SeededNoise(seed))", op)
	}
	if images == nil {
		return nil, fmt.Errorf("%s: no images (nil)", op)
	}
	post, err := p.VAE.Encode(mul(images, 2).Sub(scalarLike(images, 1)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	eps, err := drawNoise(noise, "posterior noise", post.Mean.Shape(), post.Mean.DType(), post.Mean.Device())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	z, err := post.Sample(eps)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	sf := p.VAE.Config.ScalingFactor
	latents, err := p.Cond.SampleFrom(mul(z, sf), strength, pr, steps, noise)
	if err != nil {
		return nil, err
	}
	img, err := p.VAE.Decode(div(latents, sf))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out := div(img, 2).Add(scalarLike(img, 0.5)).Clamp(core.Attrs{"min": 0.0, "max": 1.0})
	if err := out.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}
