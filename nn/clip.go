package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// ClipGradNorm scales the gradients of params so that their total 2-norm
// (the norm of all gradients concatenated) is at most maxNorm, as torch's
// clip_grad_norm_ does, and returns the total norm before clipping (read
// back from the device; ClipGradNormP does not wait). Parameters without a
// gradient are skipped. A NaN or infinite total propagates into the
// gradients, as in torch.
func ClipGradNorm(params []*Parameter, maxNorm float64) (float64, error) {
	total, err := ClipGradNormP(params, maxNorm, 2)
	if err != nil {
		return 0, err
	}
	v, err := total.Item()
	if err != nil {
		return 0, fmt.Errorf("nn: clip grad norm: %w", err)
	}
	return v, nil
}

// ClipGradNormP is torch.nn.utils.clip_grad_norm_ with any norm type (p > 0,
// or math.Inf(1) for the largest |g|): every gradient is multiplied by
// min(1, maxNorm/(total+1e-6)), where total is the p-norm of the gradients'
// p-norms. Everything happens on the device - the total norm is a 0-d
// tensor on the first gradient's device, in f32 (f64 when a gradient is
// f64, since f16 norms overflow early) - so a training step does not wait
// for the GPU here. Without gradients the total is a zero on the CPU.
func ClipGradNormP(params []*Parameter, maxNorm, normType float64) (*core.Tensor, error) {
	if maxNorm < 0 || math.IsNaN(maxNorm) {
		return nil, fmt.Errorf("nn: clip grad norm: max norm must be >= 0, got %v", maxNorm)
	}
	if !(normType > 0) {
		return nil, fmt.Errorf("nn: clip grad norm: norm type must be > 0 or inf, got %v", normType)
	}
	grads := withGrads(params)
	if len(grads) == 0 {
		return core.Scalar(0, core.F32, core.CPU), nil
	}
	acc := core.F32
	for _, p := range grads {
		if p.Grad().DType() == core.F64 {
			acc = core.F64
		}
	}
	dev := grads[0].Grad().Device()
	ord := core.Attrs{"ord": normType}
	var total *core.Tensor
	scaled := make([]*core.Tensor, len(grads))
	core.NoGrad(func() {
		norms := make([]*core.Tensor, len(grads))
		for i, p := range grads {
			norms[i] = op("norm", ord, p.Grad().Cast(acc)).To(dev)
		}
		total = op("norm", ord, op("stack", nil, norms...))
		coef := op("clamp", core.Attrs{"max": 1.0}, div(core.Scalar(maxNorm, acc, dev), addScalar(total, 1e-6)))
		for i, p := range grads {
			g := p.Grad()
			scaled[i] = mul(g, coef.Cast(g.DType()).To(g.Device()))
		}
	})
	if err := firstErr(append(scaled, total)...); err != nil {
		return nil, fmt.Errorf("nn: clip grad norm: %w", err)
	}
	for i, p := range grads {
		p.SetGrad(scaled[i])
	}
	return total, nil
}

// withGrads lists the parameters that have a gradient.
func withGrads(params []*Parameter) []*Parameter {
	var out []*Parameter
	for _, p := range params {
		if p != nil && p.Grad() != nil {
			out = append(out, p)
		}
	}
	return out
}

// ClipGradValue clamps every gradient element of params into [-clip, clip]
// (torch's clip_grad_value_). Parameters without a gradient are skipped.
func ClipGradValue(params []*Parameter, clip float64) error {
	if clip < 0 || math.IsNaN(clip) {
		return fmt.Errorf("nn: clip grad value: clip must be >= 0, got %v", clip)
	}
	withGrad := withGrads(params)
	clamped := make([]*core.Tensor, len(withGrad))
	core.NoGrad(func() {
		for i, p := range withGrad {
			clamped[i] = op("clamp", core.Attrs{"min": -clip, "max": clip}, p.Grad())
		}
	})
	if err := firstErr(clamped...); err != nil {
		return fmt.Errorf("nn: clip grad value: %w", err)
	}
	for i, p := range withGrad {
		p.SetGrad(clamped[i])
	}
	return nil
}
