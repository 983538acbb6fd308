package nn

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// LayerNorm is torch.nn.LayerNorm: normalises over the trailing
// NormalizedShape dimensions, then scales by weight and shifts by bias.
type LayerNorm struct {
	Base
	NormalizedShape core.Shape
	Eps             float64
	Weight          *Parameter // nil WithoutAffine
	Bias            *Parameter // nil WithoutAffine or WithoutBias
}

// NewLayerNorm makes a LayerNorm (eps 1e-5, weight 1, bias 0). Options:
// WithEps, WithoutAffine, WithoutBias, WithDType, WithDevice.
func NewLayerNorm(normalizedShape core.Shape, opts ...Option) (*LayerNorm, error) {
	c, err := buildConfig("LayerNorm", defaultConfig(), opts, optEps, optAffine, optBias, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if len(normalizedShape) == 0 || normalizedShape.Validate() != nil {
		return nil, fmt.Errorf("nn: LayerNorm: normalized shape must be a non-empty valid shape, got %v", normalizedShape)
	}
	l := &LayerNorm{NormalizedShape: normalizedShape.Clone(), Eps: c.eps}
	if l.Weight, l.Bias, err = affineParams(normalizedShape, c); err != nil {
		return nil, fmt.Errorf("nn: LayerNorm: %w", err)
	}
	registerWeightBias(&l.Base, l.Weight, l.Bias)
	return l, nil
}

// Forward normalises x, whose trailing dimensions must equal NormalizedShape.
func (l *LayerNorm) Forward(x *core.Tensor) *core.Tensor {
	return op("layer_norm", core.Attrs{"normalized_shape": []int(l.NormalizedShape), "eps": l.Eps},
		x, optionalTensor(l.Weight), optionalTensor(l.Bias))
}

// affineParams makes a norm layer's scale (ones) and shift (zeros).
func affineParams(shape core.Shape, c config) (w, b *Parameter, err error) {
	if !c.affine {
		return nil, nil, nil
	}
	if w, err = filled(shape, 1, c); err != nil || !c.bias {
		return w, nil, err
	}
	b, err = filled(shape, 0, c)
	return w, b, err
}

// RMSNorm is torch.nn.RMSNorm: x / sqrt(mean(x²) + eps) · weight over the
// trailing NormalizedShape dimensions.
type RMSNorm struct {
	Base
	NormalizedShape core.Shape
	Eps             float64    // 0 means torch's default, the machine epsilon of x's dtype
	Weight          *Parameter // nil WithoutAffine
}

// NewRMSNorm makes an RMSNorm (weight 1). Options: WithEps, WithoutAffine,
// WithDType, WithDevice.
func NewRMSNorm(normalizedShape core.Shape, opts ...Option) (*RMSNorm, error) {
	c, err := buildConfig("RMSNorm", defaultConfig(), opts, optEps, optAffine, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if len(normalizedShape) == 0 || normalizedShape.Validate() != nil {
		return nil, fmt.Errorf("nn: RMSNorm: normalized shape must be a non-empty valid shape, got %v", normalizedShape)
	}
	r := &RMSNorm{NormalizedShape: normalizedShape.Clone()}
	if c.epsSet {
		r.Eps = c.eps
	}
	if c.affine {
		if r.Weight, err = filled(normalizedShape, 1, c); err != nil {
			return nil, fmt.Errorf("nn: RMSNorm: %w", err)
		}
		r.addParam("weight", r.Weight)
	}
	return r, nil
}

// Forward normalises x, whose trailing dimensions must equal NormalizedShape.
func (r *RMSNorm) Forward(x *core.Tensor) *core.Tensor {
	eps := r.Eps
	if eps == 0 {
		eps = machineEpsilon(x.DType())
	}
	return op("rms_norm", core.Attrs{"normalized_shape": []int(r.NormalizedShape), "eps": eps},
		x, optionalTensor(r.Weight))
}

// machineEpsilon is torch.finfo(dtype).eps.
func machineEpsilon(d core.DType) float64 {
	switch d {
	case core.F64:
		return math.Nextafter(1, 2) - 1
	case core.F16:
		return 1.0 / 1024
	case core.BF16:
		return 1.0 / 128
	}
	return float64(math.Nextafter32(1, 2) - 1)
}

// GroupNorm is torch.nn.GroupNorm: splits the channels of (N, C, ...) into
// Groups groups, normalises each, then applies a per-channel scale and shift.
type GroupNorm struct {
	Base
	Groups, Channels int
	Eps              float64
	Weight, Bias     *Parameter // nil WithoutAffine
}

// NewGroupNorm makes a GroupNorm (eps 1e-5). Options: WithEps,
// WithoutAffine, WithDType, WithDevice.
func NewGroupNorm(groups, channels int, opts ...Option) (*GroupNorm, error) {
	c, err := buildConfig("GroupNorm", defaultConfig(), opts, optEps, optAffine, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if groups < 1 || channels < 1 || channels%groups != 0 {
		return nil, fmt.Errorf("nn: GroupNorm: channels (%d) must be a positive multiple of groups (%d)", channels, groups)
	}
	g := &GroupNorm{Groups: groups, Channels: channels, Eps: c.eps}
	if g.Weight, g.Bias, err = affineParams(core.Shape{channels}, c); err != nil {
		return nil, fmt.Errorf("nn: GroupNorm: %w", err)
	}
	registerWeightBias(&g.Base, g.Weight, g.Bias)
	return g, nil
}

// Forward normalises x of shape (N, Channels, ...).
func (g *GroupNorm) Forward(x *core.Tensor) *core.Tensor {
	return op("group_norm", core.Attrs{"num_groups": g.Groups, "eps": g.Eps},
		x, optionalTensor(g.Weight), optionalTensor(g.Bias))
}

// ForwardSiLU is SiLU(Forward(x)) in one pass over memory (the group_norm
// op's activation attribute): what diffusion and VAE ResNet blocks apply
// before each convolution.
func (g *GroupNorm) ForwardSiLU(x *core.Tensor) *core.Tensor {
	return op("group_norm", core.Attrs{"num_groups": g.Groups, "eps": g.Eps, "activation": "silu"},
		x, optionalTensor(g.Weight), optionalTensor(g.Bias))
}

// BatchNorm normalises each channel of (N, C, ...) with the batch's
// statistics in training mode and with running statistics in evaluation
// mode, like torch's BatchNorm1d/2d; NewBatchNorm1d and NewBatchNorm2d make
// one. The two differ only in the input rank they document: the op accepts
// any (N, C, ...). Without running statistics the batch's are used in both
// modes, as in torch. State: weight, bias, running_mean, running_var,
// num_batches_tracked.
type BatchNorm struct {
	Base
	Features     int
	Eps          float64
	Momentum     float64 // weight of the newest batch in the running statistics
	Cumulative   bool    // running statistics are a plain average instead (torch: momentum=None)
	Weight, Bias *Parameter
	RunningMean  *Buffer // nil WithoutRunningStats
	RunningVar   *Buffer
	BatchesSeen  *Buffer // i64 scalar, torch's num_batches_tracked
}

// NewBatchNorm1d makes a BatchNorm for (N, C) or (N, C, L) inputs.
// Options: WithEps, WithMomentum, WithCumulativeAverage,
// WithoutRunningStats, WithoutAffine, WithDType, WithDevice.
func NewBatchNorm1d(features int, opts ...Option) (*BatchNorm, error) {
	return newBatchNorm("BatchNorm1d", features, opts)
}

// NewBatchNorm2d makes a BatchNorm for (N, C, H, W) inputs; options as for
// NewBatchNorm1d.
func NewBatchNorm2d(features int, opts ...Option) (*BatchNorm, error) {
	return newBatchNorm("BatchNorm2d", features, opts)
}

func newBatchNorm(module string, features int, opts []Option) (*BatchNorm, error) {
	c, err := buildConfig(module, defaultConfig(), opts,
		optEps, optMomentum, optCumulative, optNoRunning, optAffine, optDType, optDevice)
	if err != nil {
		return nil, err
	}
	if features < 1 {
		return nil, fmt.Errorf("nn: %s: features must be >= 1, got %d", module, features)
	}
	bn := &BatchNorm{Features: features, Eps: c.eps, Momentum: c.momentum, Cumulative: c.cumulative}
	if bn.Weight, bn.Bias, err = affineParams(core.Shape{features}, c); err != nil {
		return nil, fmt.Errorf("nn: %s: %w", module, err)
	}
	registerWeightBias(&bn.Base, bn.Weight, bn.Bias)
	if !c.trackRunning {
		return bn, nil
	}
	dev, err := deviceOf(c)
	if err != nil {
		return nil, fmt.Errorf("nn: %s: %w", module, err)
	}
	if bn.RunningMean, err = NewBuffer(core.Zeros(core.Shape{features}, c.dtype, dev)); err != nil {
		return nil, fmt.Errorf("nn: %s: %w", module, err)
	}
	if bn.RunningVar, err = NewBuffer(core.Ones(core.Shape{features}, c.dtype, dev)); err != nil {
		return nil, fmt.Errorf("nn: %s: %w", module, err)
	}
	if bn.BatchesSeen, err = NewBuffer(core.Zeros(nil, core.I64, dev)); err != nil {
		return nil, fmt.Errorf("nn: %s: %w", module, err)
	}
	bn.addBuffer("running_mean", bn.RunningMean)
	bn.addBuffer("running_var", bn.RunningVar)
	bn.addBuffer("num_batches_tracked", bn.BatchesSeen)
	return bn, nil
}

// Forward normalises x. In training mode with running statistics it also
// folds the batch's statistics into them.
func (bn *BatchNorm) Forward(x *core.Tensor) *core.Tensor {
	attrs := core.Attrs{"training": true, "momentum": bn.Momentum, "eps": bn.Eps}
	w, b := optionalTensor(bn.Weight), optionalTensor(bn.Bias)
	switch {
	case bn.RunningMean == nil:
		return normalized(callMulti("batch_norm", attrs, 3, x, nil, nil, w, b))
	case !bn.Training():
		attrs["training"] = false
		return normalized(callMulti("batch_norm", attrs, 3, x, bn.RunningMean.t, bn.RunningVar.t, w, b))
	}
	count := add(bn.BatchesSeen.t, core.Scalar(1, core.I64, bn.BatchesSeen.t.Device()))
	if count.Err() != nil {
		return count
	}
	if bn.Cumulative {
		// With momentum 1 the op returns the batch's own statistics; the
		// average over all batches is folded in below on the device, so no
		// step waits to read the count.
		attrs["momentum"] = 1.0
	}
	outs, failed := callMulti("batch_norm", attrs, 3, x, bn.RunningMean.t, bn.RunningVar.t, w, b)
	if failed != nil {
		return failed
	}
	mean, variance := outs[1], outs[2]
	if bn.Cumulative {
		n := count.Cast(mean.DType())
		mean = add(bn.RunningMean.t, div(sub(mean, bn.RunningMean.t), n))
		variance = add(bn.RunningVar.t, div(sub(variance, bn.RunningVar.t), n))
		if f := firstFailed(mean, variance); f != nil {
			return f
		}
	}
	bn.BatchesSeen.t = count
	bn.RunningMean.t = mean.Detach()
	bn.RunningVar.t = variance.Detach()
	return outs[0]
}

// normalized picks batch_norm's first output, or the tensor carrying its failure.
func normalized(outs []*core.Tensor, failed *core.Tensor) *core.Tensor {
	if failed != nil {
		return failed
	}
	return outs[0]
}
