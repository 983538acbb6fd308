package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Control steers a CondPipeline with a ControlNet, as diffusers'
// StableDiffusionControlNetPipeline and
// StableDiffusionControlNetImg2ImgPipeline do (guess mode off): at every
// step inside the control window the ControlNet runs on the same scaled,
// guidance-doubled latents and encoder states as the UNet, and its
// residuals, times Scale, are added to the UNet's.
type Control struct {
	Net *ControlNetModel
	// Image is the control image (N, conditioning_channels, h·s, w·s) for
	// latents of h×w, s = Net.Config.ControlScale(), already in the range
	// the ControlNet expects (diffusers' pipelines pass [0, 1] images
	// unnormalised). N is 1 (shared by every image) or the number of
	// prompts (each prompt's images take its control image).
	Image *core.Tensor
	// Scale is controlnet_conditioning_scale (diffusers' default 1).
	Scale float64
	// Start and End are control_guidance_start and control_guidance_end,
	// the fractions of the loop's steps the ControlNet acts in (diffusers'
	// defaults 0 and 1): step i of n runs it unless i/n < Start or
	// (i+1)/n > End.
	Start, End float64
}

// NewControl is a Control with diffusers' defaults: scale 1 over the whole
// loop.
func NewControl(net *ControlNetModel, image *core.Tensor) *Control {
	return &Control{Net: net, Image: image, Scale: 1, Start: 0, End: 1}
}

// ControlledDenoiser is a CondDenoiser that takes a ControlNet's residuals:
// UNet2DConditionModel is one.
type ControlledDenoiser interface {
	CondDenoiser
	ForwardControlled(sample *core.Tensor, t float64, encoderHiddenStates *core.Tensor, res *ControlResiduals) (*core.Tensor, error)
}

// controlRun is a Control prepared for one run: the control image repeated
// to the model's batch.
type controlRun struct {
	c     *Control
	model ControlledDenoiser
	image *core.Tensor
}

// prepare checks the control against the pipeline and the prompts and
// repeats the image as diffusers' prepare_image does: a single image for
// every latent, or each prompt's image for its images; doubled for
// guidance. prompts is the number of prompts, per their images each.
func (c *Control) prepare(model CondDenoiser, prompts, per int, guided bool, dtype core.DType, dev core.Device) (*controlRun, error) {
	cm, ok := model.(ControlledDenoiser)
	switch {
	case !ok:
		return nil, fmt.Errorf("control: the model (%T) takes no ControlNet residuals (it has no ForwardControlled)", model)
	case c.Net == nil:
		return nil, fmt.Errorf("control: Control.Net is nil")
	case c.Image == nil:
		return nil, fmt.Errorf("control: Control.Image is nil")
	case c.Start < 0 || c.End > 1 || !(c.Start < c.End):
		// diffusers' check_inputs refuses these too.
		return nil, fmt.Errorf("control: guidance window [%v, %v] must satisfy 0 <= Start < End <= 1", c.Start, c.End)
	case c.Net.DType() != dtype || c.Net.Device() != dev:
		return nil, fmt.Errorf("control: the ControlNet is %s on %s, the pipeline %s on %s", c.Net.DType(), c.Net.Device(), dtype, dev)
	}
	img := c.Image
	if err := img.Err(); err != nil {
		return nil, fmt.Errorf("control image: %w", err)
	}
	if img.Rank() != 4 {
		return nil, fmt.Errorf("control image has shape %v, want (images, channels, height, width)", img.Shape())
	}
	if img.DType() != dtype || img.Device() != dev {
		return nil, fmt.Errorf("control image is %s on %s, the pipeline %s on %s", img.DType(), img.Device(), dtype, dev)
	}
	switch n := dimOf(img, 0); {
	case n == 1:
		img = repeatRows(img, prompts*per)
	case n == prompts:
		img = repeatRows(img, per)
	default:
		return nil, fmt.Errorf("control image batch is %d; want 1 or the number of prompts, %d", n, prompts)
	}
	if guided {
		img = core.Concat([]*core.Tensor{img, img}, core.Attrs{"axis": 0})
	}
	if err := img.Err(); err != nil {
		return nil, fmt.Errorf("control image: %w", err)
	}
	return &controlRun{c: c, model: cm, image: img}, nil
}

// active is diffusers' controlnet_keep: whether step i of n runs the
// ControlNet (in Python float arithmetic).
func (r *controlRun) active(i, n int) bool {
	return !(float64(i)/float64(n) < r.c.Start || float64(i+1)/float64(n) > r.c.End)
}

// forward is the model's prediction at step i of n: with the ControlNet's
// residuals inside the window, without them outside. diffusers runs the
// ControlNet outside the window too, at scale 0, which adds zeros: the
// same sums, so it is skipped here.
func (r *controlRun) forward(in *core.Tensor, t float64, ctx *core.Tensor, i, n int) (*core.Tensor, error) {
	if !r.active(i, n) {
		return r.model.Forward(in, t, ctx)
	}
	res, err := r.c.Net.Forward(in, t, ctx, r.image, r.c.Scale)
	if err != nil {
		return nil, err
	}
	return r.model.ForwardControlled(in, t, ctx, res)
}
