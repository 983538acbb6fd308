package nn

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// ConvGeometry is the shape of a convolution: one entry per spatial
// dimension in each list.
type ConvGeometry struct {
	In, Out       int
	Kernel        []int
	Stride        []int
	Padding       []int
	Dilation      []int
	OutputPadding []int // transposed convolutions only
	Groups        int
}

func (g ConvGeometry) attrs() core.Attrs {
	a := core.Attrs{"stride": g.Stride, "padding": g.Padding, "dilation": g.Dilation, "groups": g.Groups}
	if g.OutputPadding != nil {
		a["output_padding"] = g.OutputPadding
	}
	return a
}

// Conv1d is torch.nn.Conv1d over (N, C_in, L) inputs.
// State: weight (Out, In/Groups, K), bias (Out).
type Conv1d struct {
	Base
	ConvGeometry
	Weight *Parameter
	Bias   *Parameter // nil when built WithoutBias
}

// Conv2d is torch.nn.Conv2d over (N, C_in, H, W) inputs.
// State: weight (Out, In/Groups, KH, KW), bias (Out).
type Conv2d struct {
	Base
	ConvGeometry
	Weight *Parameter
	Bias   *Parameter // nil when built WithoutBias
}

// ConvTranspose2d is torch.nn.ConvTranspose2d, the gradient of Conv2d with
// respect to its input, used to upsample. State: weight (In, Out/Groups, KH,
// KW), bias (Out).
type ConvTranspose2d struct {
	Base
	ConvGeometry
	Weight *Parameter
	Bias   *Parameter // nil when built WithoutBias
}

var convOptions = []string{optStride, optPadding, optDilation, optGroups, optBias, optDType, optDevice}

// NewConv1d makes a Conv1d with kernel size k and torch's default
// initialisation. Options: WithStride, WithPadding, WithDilation,
// WithGroups, WithoutBias, WithDType, WithDevice.
func NewConv1d(in, out, k int, opts ...Option) (*Conv1d, error) {
	m := &Conv1d{}
	var err error
	m.ConvGeometry, m.Weight, m.Bias, err = newConv("Conv1d", &m.Base, in, out, []int{k}, false, opts,
		func(groups int) core.Shape { return core.Shape{out, in / groups, k} })
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Forward maps (N, In, L) to (N, Out, L_out).
func (m *Conv1d) Forward(x *core.Tensor) *core.Tensor {
	return op("conv1d", m.attrs(), x, m.Weight.Tensor(), optionalTensor(m.Bias))
}

// NewConv2d makes a Conv2d with a kh×kw kernel and torch's default
// initialisation. Options as for NewConv1d, with one value for both
// dimensions or one per dimension.
func NewConv2d(in, out, kh, kw int, opts ...Option) (*Conv2d, error) {
	m := &Conv2d{}
	var err error
	m.ConvGeometry, m.Weight, m.Bias, err = newConv("Conv2d", &m.Base, in, out, []int{kh, kw}, false, opts,
		func(groups int) core.Shape { return core.Shape{out, in / groups, kh, kw} })
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Forward maps (N, In, H, W) to (N, Out, H_out, W_out).
func (m *Conv2d) Forward(x *core.Tensor) *core.Tensor {
	return op("conv2d", m.attrs(), x, m.Weight.Tensor(), optionalTensor(m.Bias))
}

// NewConvTranspose2d makes a ConvTranspose2d with a kh×kw kernel and torch's
// default initialisation. Options as for NewConv2d plus WithOutputPadding.
func NewConvTranspose2d(in, out, kh, kw int, opts ...Option) (*ConvTranspose2d, error) {
	m := &ConvTranspose2d{}
	var err error
	m.ConvGeometry, m.Weight, m.Bias, err = newConv("ConvTranspose2d", &m.Base, in, out, []int{kh, kw}, true, opts,
		func(groups int) core.Shape { return core.Shape{in, out / groups, kh, kw} })
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Forward maps (N, In, H, W) to (N, Out, H_out, W_out) with
// H_out = (H-1)·stride - 2·padding + dilation·(KH-1) + output_padding + 1.
func (m *ConvTranspose2d) Forward(x *core.Tensor) *core.Tensor {
	return op("conv_transpose2d", m.attrs(), x, m.Weight.Tensor(), optionalTensor(m.Bias))
}

func convSetup(module string, in, out int, kernel []int, transposed bool, opts []Option) (ConvGeometry, config, error) {
	accepted := convOptions
	if transposed {
		accepted = append([]string{optOutputPadding}, convOptions...)
	}
	c, err := buildConfig(module, defaultConfig(), opts, accepted...)
	if err != nil {
		return ConvGeometry{}, c, err
	}
	n := len(kernel)
	g := ConvGeometry{In: in, Out: out, Kernel: kernel, Groups: c.groups}
	for _, k := range kernel {
		if k < 1 {
			return g, c, fmt.Errorf("nn: %s: kernel sizes must be >= 1, got %v", module, kernel)
		}
	}
	if in < 1 || out < 1 {
		return g, c, fmt.Errorf("nn: %s: channel counts must be >= 1, got in=%d out=%d", module, in, out)
	}
	if in%g.Groups != 0 || out%g.Groups != 0 {
		return g, c, fmt.Errorf("nn: %s: in (%d) and out (%d) channels must be divisible by groups (%d)", module, in, out, g.Groups)
	}
	if g.Stride, err = perDim(module, optStride, c.stride, 1, n); err != nil {
		return g, c, err
	}
	if g.Padding, err = perDim(module, optPadding, c.padding, 0, n); err != nil {
		return g, c, err
	}
	if g.Dilation, err = perDim(module, optDilation, c.dilation, 1, n); err != nil {
		return g, c, err
	}
	if !transposed {
		return g, c, nil
	}
	if g.OutputPadding, err = perDim(module, optOutputPadding, c.outputPadding, 0, n); err != nil {
		return g, c, err
	}
	for i, p := range g.OutputPadding {
		if p >= g.Stride[i] && p >= g.Dilation[i] {
			return g, c, fmt.Errorf("nn: %s: output padding %v must be smaller than stride %v or dilation %v", module, g.OutputPadding, g.Stride, g.Dilation)
		}
	}
	return g, c, nil
}

// newConv is what the conv constructors share: the geometry from the
// options, then a weight of the shape weight gives for the groups and a
// bias, with torch's initialisation, registered on base.
func newConv(module string, base *Base, in, out int, kernel []int, transposed bool, opts []Option,
	weight func(groups int) core.Shape) (g ConvGeometry, w, b *Parameter, err error) {
	g, c, err := convSetup(module, in, out, kernel, transposed, opts)
	if err != nil {
		return g, nil, nil, err
	}
	if w, b, err = defaultWeightAndBias(weight(g.Groups), out, c); err != nil {
		return g, nil, nil, fmt.Errorf("nn: %s: %w", module, err)
	}
	registerWeightBias(base, w, b)
	return g, w, b, nil
}

// registerWeightBias registers the parameters that exist (either may be
// nil: no bias, or no affine transform in a norm layer).
func registerWeightBias(base *Base, w, b *Parameter) {
	if w != nil {
		base.addParam("weight", w)
	}
	if b != nil {
		base.addParam("bias", b)
	}
}
