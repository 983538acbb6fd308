package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// CondDenoiser is the model a CondPipeline calls at every step:
// UNet2DConditionModel is one. Forward returns what the scheduler's
// prediction_type says the model predicts for sample at timestep t,
// conditioned on encoderHiddenStates (batch, sequence, width).
type CondDenoiser interface {
	Forward(sample *core.Tensor, t float64, encoderHiddenStates *core.Tensor) (*core.Tensor, error)
}

// Prompts are the text conditioning of a CondPipeline run: encoder hidden
// states, e.g. a CLIP text encoder's last hidden state, for the prompts and
// for the negative (unconditional) prompts. webtensor's diffusion library
// takes them as tensors; the text encoder is another library's.
type Prompts struct {
	// Embeds is (P, sequence, width): one row per prompt.
	Embeds *core.Tensor
	// Negative is the same shape, or (1, sequence, width) for one negative
	// prompt (typically the empty prompt's embedding) shared by all P. It
	// may be nil when GuidanceScale <= 1.
	Negative *core.Tensor
	// GuidanceScale is classifier-free guidance's s: each step predicts
	// uncond + s·(cond - uncond). At s <= 1 diffusers skips guidance and
	// runs the prompts alone; so does CondPipeline.
	GuidanceScale float64
	// ImagesPerPrompt repeats each prompt (diffusers' num_images_per_prompt);
	// 0 means 1. The batch is P·ImagesPerPrompt, each prompt's images
	// adjacent.
	ImagesPerPrompt int
}

// CondPipeline is text-conditioned sampling with classifier-free guidance,
// the denoising loop of diffusers' StableDiffusionPipeline for any
// Scheduler: noise scaled by init_noise_sigma, then for every timestep the
// model on the batch doubled as [negative, positive] (scaled by the
// scheduler), the guided prediction, and a scheduler step. It returns the
// final latents; decoding them to images is the VAE's work. All of it runs
// on Device in DType, and with SeededNoise the latents are bit-identical
// from run to run on one device.
type CondPipeline struct {
	Model     CondDenoiser
	Scheduler Scheduler
	// Channels, Height and Width are one latent's shape.
	Channels, Height, Width int
	DType                   core.DType
	Device                  core.Device
	// Control, when set, steers every run (Sample and SampleFrom) with a
	// ControlNet; the Model must then be a ControlledDenoiser.
	Control *Control
}

// NewUNet2DConditionPipeline makes the pipeline of m: latents of its
// in_channels and sample_size, on its device, in its dtype.
func NewUNet2DConditionPipeline(m *UNet2DConditionModel, s Scheduler) *CondPipeline {
	n := m.Config.SampleSize
	return &CondPipeline{Model: m, Scheduler: s, Channels: m.Config.InChannels, Height: n, Width: n,
		DType: m.DType(), Device: m.Device()}
}

// Sample runs the loop with steps inference steps and returns the latents
// (P·ImagesPerPrompt, Channels, Height, Width). noise draws the initial
// latents first, then whatever the scheduler's steps draw: pass
// SeededNoise(seed) for reproducible latents.
func (p *CondPipeline) Sample(pr Prompts, steps int, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: CondPipeline"
	switch {
	case p.Model == nil || p.Scheduler == nil:
		return nil, fmt.Errorf("%s: Model and Scheduler must be set", op)
	case noise == nil:
		return nil, fmt.Errorf("%s: no Noise (use diffuse.SeededNoise(seed))", op)
	case p.Channels < 1 || p.Height < 1 || p.Width < 1:
		return nil, fmt.Errorf("%s: latent shape %d×%d×%d (channels×height×width) must be positive", op, p.Channels, p.Height, p.Width)
	case pr.ImagesPerPrompt < 0:
		return nil, fmt.Errorf("%s: ImagesPerPrompt %d, want >= 1 (or 0 for 1)", op, pr.ImagesPerPrompt)
	}
	dtype, dev := placement(p.DType, p.Device)
	ctx, batch, guided, err := pr.context(dtype, dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ctrl, err := p.control(pr, guided, dtype, dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := p.Scheduler.SetTimesteps(steps); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	shape := core.Shape{batch, p.Channels, p.Height, p.Width}
	x, err := noise(shape, dtype, dev)
	if err == nil {
		err = x.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: initial noise: %w", op, err)
	}
	if !x.Shape().Equal(shape) {
		return nil, fmt.Errorf("%s: initial noise has shape %v, want %v", op, x.Shape(), shape)
	}
	if sigma := p.Scheduler.InitNoiseSigma(); sigma != 1 {
		x = mul(x, sigma)
	}
	return p.denoise(x, p.Scheduler.Timesteps(), ctx, batch, guided, pr.GuidanceScale, ctrl, noise)
}

// control prepares p.Control for a run of pr, nil without one.
func (p *CondPipeline) control(pr Prompts, guided bool, dtype core.DType, dev core.Device) (*controlRun, error) {
	if p.Control == nil {
		return nil, nil
	}
	return p.Control.prepare(p.Model, dimOf(pr.Embeds, 0), max(pr.ImagesPerPrompt, 1), guided, dtype, dev)
}

// denoise runs the guided loop from latents x (batch) over timesteps ts,
// with the ControlNet of ctrl when it is not nil.
func (p *CondPipeline) denoise(x *core.Tensor, ts []float64, ctx *core.Tensor, batch int, guided bool, scale float64, ctrl *controlRun, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: CondPipeline"
	// ctx is one tensor for the whole run, so the models' cross-attention
	// keys and values are computed once (see CacheCrossAttention).
	if c, ok := p.Model.(interface{ CacheCrossAttention() func() }); ok {
		defer c.CacheCrossAttention()()
	}
	if ctrl != nil {
		defer ctrl.c.Net.CacheCrossAttention()()
	}
	for i, t := range ts {
		in := x
		if guided {
			in = core.Concat([]*core.Tensor{x, x}, core.Attrs{"axis": 0})
		}
		in, err := p.Scheduler.ScaleModelInput(in, t)
		if err != nil {
			return nil, fmt.Errorf("%s: step %d (t=%v): %w", op, i, t, err)
		}
		var out *core.Tensor
		if ctrl != nil {
			out, err = ctrl.forward(in, t, ctx, i, len(ts))
		} else {
			out, err = p.Model.Forward(in, t, ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: step %d (t=%v): %w", op, i, t, err)
		}
		if guided {
			uncond := out.Slice(core.Attrs{"axis": 0, "start": 0, "stop": batch})
			cond := out.Slice(core.Attrs{"axis": 0, "start": batch, "stop": 2 * batch})
			out = uncond.Add(mul(cond.Sub(uncond), scale))
		}
		if x, err = p.Scheduler.Step(out, t, x, noise); err != nil {
			return nil, fmt.Errorf("%s: step %d (t=%v): %w", op, i, t, err)
		}
	}
	return x, nil
}

// context checks the embeddings and builds the model's encoder states:
// [negative; positive] with each prompt repeated ImagesPerPrompt times
// (diffusers' order), or the positive alone without guidance. It returns
// them with the latent batch and whether the step is guided.
func (pr Prompts) context(dtype core.DType, dev core.Device) (*core.Tensor, int, bool, error) {
	per := max(pr.ImagesPerPrompt, 1)
	check := func(what string, t *core.Tensor) error {
		if err := t.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if t.Rank() != 3 || dimOf(t, 0) < 1 || dimOf(t, 1) < 1 || dimOf(t, 2) < 1 {
			return fmt.Errorf("%s have shape %v, want (prompts, sequence, width)", what, t.Shape())
		}
		if t.DType() != dtype || t.Device() != dev {
			return fmt.Errorf("%s are %s on %s, the pipeline %s on %s", what, t.DType(), t.Device(), dtype, dev)
		}
		return nil
	}
	if pr.Embeds == nil {
		return nil, 0, false, fmt.Errorf("Prompts.Embeds is nil")
	}
	if err := check("prompt embeddings", pr.Embeds); err != nil {
		return nil, 0, false, err
	}
	s := pr.Embeds.Shape()
	n := s[0]
	cond := repeatRows(pr.Embeds, per)
	// diffusers: do_classifier_free_guidance = guidance_scale > 1.
	if pr.GuidanceScale <= 1 {
		return cond, n * per, false, nil
	}
	if pr.Negative == nil {
		return nil, 0, false, fmt.Errorf("guidance scale %v needs negative embeddings (Prompts.Negative is nil)", pr.GuidanceScale)
	}
	if err := check("negative embeddings", pr.Negative); err != nil {
		return nil, 0, false, err
	}
	ns := pr.Negative.Shape()
	if (ns[0] != n && ns[0] != 1) || ns[1] != s[1] || ns[2] != s[2] {
		return nil, 0, false, fmt.Errorf("negative embeddings have shape %v; want %v or [1 %d %d], the prompt embeddings' shape", ns, s, s[1], s[2])
	}
	neg := pr.Negative
	if ns[0] == 1 && n > 1 {
		neg = repeatRows(neg, n)
	}
	ctx := core.Concat([]*core.Tensor{repeatRows(neg, per), cond}, core.Attrs{"axis": 0})
	if err := ctx.Err(); err != nil {
		return nil, 0, false, err
	}
	return ctx, n * per, true, nil
}

// repeatRows repeats each row of x (B, ...) k times, adjacent: (B·k, ...),
// as diffusers' repeat(1, k, 1).view(B·k, ...) does.
func repeatRows(x *core.Tensor, k int) *core.Tensor {
	if k == 1 {
		return x
	}
	s := x.Shape()
	withAxis := append(core.Shape{s[0], 1}, s[1:]...)
	copies := make([]*core.Tensor, k)
	for i := range copies {
		copies[i] = x.Reshape(withAxis)
	}
	return core.Concat(copies, core.Attrs{"axis": 1}).Reshape(append(core.Shape{s[0] * k}, s[1:]...))
}
