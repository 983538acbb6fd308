package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// ClipGradNorm scales the gradients of params so that their total 2-norm
// (the norm of all gradients concatenated) is at most maxNorm, as torch's
// clip_grad_norm_ does: each gradient is multiplied by
// min(1, maxNorm/(total+1e-6)). It returns the total norm before clipping;
// parameters without a gradient are skipped. A NaN or infinite total
// propagates into the gradients, as in torch.
func ClipGradNorm(params []*Parameter, maxNorm float64) (float64, error) {
	if maxNorm < 0 || math.IsNaN(maxNorm) {
		return 0, fmt.Errorf("nn: clip grad norm: max norm must be >= 0, got %g", maxNorm)
	}
	var grads []*Parameter
	for _, p := range params {
		if p != nil && p.Grad() != nil {
			grads = append(grads, p)
		}
	}
	if len(grads) == 0 {
		return 0, nil
	}
	var total float64
	var err error
	core.NoGrad(func() { total, err = totalNorm(grads) })
	if err != nil {
		return 0, err
	}
	coef := maxNorm / (total + 1e-6)
	if coef >= 1 {
		return total, nil
	}
	scaled := make([]*core.Tensor, len(grads))
	core.NoGrad(func() {
		for i, p := range grads {
			scaled[i] = mulScalar(p.Grad(), coef)
		}
	})
	if err := firstErr(scaled...); err != nil {
		return 0, fmt.Errorf("nn: clip grad norm: %w", err)
	}
	for i, p := range grads {
		p.SetGrad(scaled[i])
	}
	return total, nil
}

// totalNorm is sqrt(Σ‖g‖²). The squares are summed on the device, in f32
// (f64 when any gradient is f64, since f16 squares overflow early), and
// only the final sum is read back.
func totalNorm(params []*Parameter) (float64, error) {
	acc := core.F32
	for _, p := range params {
		if p.Grad().DType() == core.F64 {
			acc = core.F64
		}
	}
	var sumSq *core.Tensor
	for _, p := range params {
		g := p.Grad().Cast(acc)
		s := op("sum", nil, mul(g, g))
		if sumSq == nil {
			sumSq = s
		} else {
			sumSq = add(sumSq, s)
		}
	}
	v, err := sumSq.Item()
	if err != nil {
		return 0, fmt.Errorf("nn: clip grad norm: %w", err)
	}
	return math.Sqrt(v), nil
}

// ClipGradValue clamps every gradient element of params into [-clip, clip]
// (torch's clip_grad_value_). Parameters without a gradient are skipped.
func ClipGradValue(params []*Parameter, clip float64) error {
	if clip < 0 || math.IsNaN(clip) {
		return fmt.Errorf("nn: clip grad value: clip must be >= 0, got %g", clip)
	}
	var withGrad []*Parameter
	var clamped []*core.Tensor
	core.NoGrad(func() {
		for _, p := range params {
			if p == nil || p.Grad() == nil {
				continue
			}
			withGrad = append(withGrad, p)
			clamped = append(clamped, op("clamp", core.Attrs{"min": -clip, "max": clip}, p.Grad()))
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
