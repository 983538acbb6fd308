package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Option adjusts a module's construction, like a keyword argument of the
// torch.nn constructor. A module rejects options that do not apply to it, so
// WithStride on a Linear is an error rather than silently ignored.
type Option struct {
	name  string
	apply func(*config) error
}

// config is the union of every module's settings; each constructor seeds it
// with its own PyTorch defaults before applying options.
type config struct {
	bias          bool
	affine        bool
	dtype         core.DType
	device        string
	stride        []int
	padding       []int
	dilation      []int
	outputPadding []int
	groups        int
	eps           float64
	epsSet        bool
	momentum      float64
	cumulative    bool
	trackRunning  bool
	dropout       float64
	batchFirst    bool
	normFirst     bool
	activation    string
}

func defaultConfig() config {
	return config{bias: true, affine: true, dtype: core.F32, groups: 1, eps: 1e-5,
		momentum: 0.1, trackRunning: true, activation: "relu"}
}

// Option names, also used in error messages.
const (
	optBias          = "WithoutBias"
	optAffine        = "WithoutAffine"
	optDType         = "WithDType"
	optDevice        = "WithDevice"
	optStride        = "WithStride"
	optPadding       = "WithPadding"
	optDilation      = "WithDilation"
	optOutputPadding = "WithOutputPadding"
	optGroups        = "WithGroups"
	optEps           = "WithEps"
	optMomentum      = "WithMomentum"
	optCumulative    = "WithCumulativeAverage"
	optNoRunning     = "WithoutRunningStats"
	optDropout       = "WithDropout"
	optBatchFirst    = "WithBatchFirst"
	optNormFirst     = "WithNormFirst"
	optActivation    = "WithActivation"
)

// WithoutBias leaves out the additive bias (torch: bias=False).
func WithoutBias() Option {
	return Option{optBias, func(c *config) error { c.bias = false; return nil }}
}

// WithoutAffine leaves out a norm layer's learnable scale and shift
// (torch: elementwise_affine=False or affine=False).
func WithoutAffine() Option {
	return Option{optAffine, func(c *config) error { c.affine = false; return nil }}
}

// WithDType sets the parameters' element type (default f32).
func WithDType(d core.DType) Option {
	return Option{optDType, func(c *config) error {
		if !d.IsFloat() {
			return fmt.Errorf("parameters must be floating point, got %s", d)
		}
		c.dtype = d
		return nil
	}}
}

// WithDevice puts the parameters on dev (default: core.DefaultDevice).
func WithDevice(dev core.Device) Option {
	return Option{optDevice, func(c *config) error { c.device = dev.String(); return nil }}
}

// WithStride sets a convolution's stride: one value for every spatial
// dimension or one per dimension.
func WithStride(s ...int) Option {
	return intsOption(optStride, 1, s, func(c *config) *[]int { return &c.stride })
}

// WithPadding sets the zero padding added to both sides of each spatial dimension.
func WithPadding(p ...int) Option {
	return intsOption(optPadding, 0, p, func(c *config) *[]int { return &c.padding })
}

// WithDilation sets the spacing between kernel elements.
func WithDilation(d ...int) Option {
	return intsOption(optDilation, 1, d, func(c *config) *[]int { return &c.dilation })
}

// WithOutputPadding adds size to one side of a transposed convolution's output.
func WithOutputPadding(p ...int) Option {
	return intsOption(optOutputPadding, 0, p, func(c *config) *[]int { return &c.outputPadding })
}

func intsOption(name string, minimum int, vals []int, field func(*config) *[]int) Option {
	vals = slices.Clone(vals)
	return Option{name, func(c *config) error {
		if len(vals) == 0 {
			return fmt.Errorf("needs at least one value")
		}
		for _, v := range vals {
			if v < minimum {
				return fmt.Errorf("values must be >= %d, got %v", minimum, vals)
			}
		}
		*field(c) = vals
		return nil
	}}
}

// WithGroups splits a convolution's channels into groups convolved separately.
func WithGroups(g int) Option {
	return Option{optGroups, func(c *config) error {
		if g < 1 {
			return fmt.Errorf("groups must be >= 1, got %d", g)
		}
		c.groups = g
		return nil
	}}
}

// WithEps sets the value added to variances for numerical stability.
func WithEps(eps float64) Option {
	return Option{optEps, func(c *config) error {
		if eps < 0 {
			return fmt.Errorf("eps must be >= 0, got %g", eps)
		}
		c.eps, c.epsSet = eps, true
		return nil
	}}
}

// WithMomentum sets the weight of the newest batch in BatchNorm's running
// statistics (default 0.1).
func WithMomentum(m float64) Option {
	return Option{optMomentum, func(c *config) error {
		if m < 0 || m > 1 {
			return fmt.Errorf("momentum must be in [0, 1], got %g", m)
		}
		c.momentum = m
		return nil
	}}
}

// WithCumulativeAverage makes BatchNorm's running statistics a plain average
// over all batches seen (torch: momentum=None).
func WithCumulativeAverage() Option {
	return Option{optCumulative, func(c *config) error { c.cumulative = true; return nil }}
}

// WithoutRunningStats makes BatchNorm always normalise with the statistics of
// the current batch and keep no running statistics (torch: track_running_stats=False).
func WithoutRunningStats() Option {
	return Option{optNoRunning, func(c *config) error { c.trackRunning = false; return nil }}
}

// WithDropout sets a dropout probability (attention weights, transformer blocks).
func WithDropout(p float64) Option {
	return Option{optDropout, func(c *config) error {
		if p < 0 || p > 1 {
			return fmt.Errorf("dropout probability must be in [0, 1], got %g", p)
		}
		c.dropout = p
		return nil
	}}
}

// WithBatchFirst takes and returns (batch, sequence, feature) tensors instead
// of torch's default (sequence, batch, feature).
func WithBatchFirst() Option {
	return Option{optBatchFirst, func(c *config) error { c.batchFirst = true; return nil }}
}

// WithNormFirst applies layer norm before attention and feed-forward (pre-LN)
// rather than after the residual addition.
func WithNormFirst() Option {
	return Option{optNormFirst, func(c *config) error { c.normFirst = true; return nil }}
}

// WithActivation picks a transformer's feed-forward activation: "relu" or "gelu".
func WithActivation(name string) Option {
	return Option{optActivation, func(c *config) error {
		if name != "relu" && name != "gelu" {
			return fmt.Errorf("activation must be relu or gelu, got %q", name)
		}
		c.activation = name
		return nil
	}}
}

// buildConfig applies opts to base, rejecting options the module does not take.
func buildConfig(module string, base config, opts []Option, accepted ...string) (config, error) {
	for _, o := range opts {
		if o.apply == nil {
			return base, fmt.Errorf("nn: %s: zero Option value (use the With... functions)", module)
		}
		if !slices.Contains(accepted, o.name) {
			return base, fmt.Errorf("nn: %s does not take option %s (it takes %s)", module, o.name, strings.Join(accepted, ", "))
		}
		if err := o.apply(&base); err != nil {
			return base, fmt.Errorf("nn: %s: %s: %w", module, o.name, err)
		}
	}
	return base, nil
}

// perDim expands a one-value or per-dimension option to n dimensions.
func perDim(module, name string, vals []int, def, n int) ([]int, error) {
	switch len(vals) {
	case 0:
		return slices.Repeat([]int{def}, n), nil
	case 1:
		return slices.Repeat(vals[:1], n), nil
	case n:
		return slices.Clone(vals), nil
	}
	return nil, fmt.Errorf("nn: %s: %s takes 1 or %d values, got %v", module, name, n, vals)
}
