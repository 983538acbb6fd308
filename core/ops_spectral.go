package core

import (
	"fmt"
)

// Discrete Fourier transforms along one axis, with torch.fft's conventions.
// Complex tensors travel as real tensors whose last dim of size 2 holds
// (re, im): a complex array of shape S is a real tensor of shape S+[2], and
// "axis" counts over S. Norm "backward" leaves the forward transform
// unscaled and divides the inverse by n, "forward" does the opposite and
// "ortho" scales both by 1/sqrt(n).
//
// The backward rules are transforms too. For the real-pair view of a
// complex linear map y = s*W*x, the gradient is s*conj(W)^T g, which is the
// opposite transform with the dual norm (backward <-> forward), followed by
// undoing the zero-padding or trimming that "n" applied.

var fftNorms = []string{"backward", "ortho", "forward"}

func fftAttrs(nDoc string) []AttrSpec {
	return []AttrSpec{
		{Name: "n", Kind: AttrInt, Doc: nDoc},
		{Name: "axis", Kind: AttrInt, Default: -1, Doc: "axis of the transform (over the complex dims for complex-pair tensors)"},
		{Name: "norm", Kind: AttrString, Default: "backward", Enum: fftNorms, Doc: "which direction is scaled: backward (inverse by 1/n), ortho (both by 1/sqrt(n)) or forward"},
	}
}

func dualNorm(norm string) string {
	switch norm {
	case "backward":
		return "forward"
	case "forward":
		return "backward"
	}
	return norm
}

// complexDims checks that m is a complex-pair tensor and returns its complex
// shape (the shape without the trailing pair dim).
func complexDims(m Meta) (Shape, error) {
	r := len(m.Shape)
	if r < 2 || m.Shape[r-1] != 2 {
		return nil, fmt.Errorf("input must be complex pairs: shape [..., n, 2] with rank >= 2, got %v", m.Shape)
	}
	return m.Shape[:r-1], nil
}

// fftLength normalises the axis and resolves the transform length: n when
// given, else def.
func fftLength(shape Shape, a Attrs, def func(l int) int) (axis, n int, err error) {
	if axis, err = NormAxis(a.Int("axis"), len(shape)); err != nil {
		return 0, 0, err
	}
	n = def(shape[axis])
	if a.Has("n") {
		n = a.Int("n")
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("transform length must be at least 1, got %d (axis %d of shape %v)", n, axis, shape)
	}
	return axis, n, nil
}

func fftKeepLen(l int) int { return l }

func inferComplexFFT(in []Meta, a Attrs) ([]Meta, error) {
	cs, err := complexDims(in[0])
	if err != nil {
		return nil, err
	}
	axis, n, err := fftLength(cs, a, fftKeepLen)
	if err != nil {
		return nil, err
	}
	out := in[0].Shape.Clone()
	out[axis] = n
	return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
}

func inferRFFT(in []Meta, a Attrs) ([]Meta, error) {
	if len(in[0].Shape) == 0 {
		return nil, fmt.Errorf("input must have at least one dim, got a scalar")
	}
	axis, n, err := fftLength(in[0].Shape, a, fftKeepLen)
	if err != nil {
		return nil, err
	}
	out := append(in[0].Shape.Clone(), 2)
	out[axis] = n/2 + 1
	return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
}

func inferIRFFT(in []Meta, a Attrs) ([]Meta, error) {
	cs, err := complexDims(in[0])
	if err != nil {
		return nil, err
	}
	axis, n, err := fftLength(cs, a, func(m int) int { return 2 * (m - 1) })
	if err != nil {
		return nil, err
	}
	out := cs.Clone()
	out[axis] = n
	return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
}

// irfftLength is the output length of irfft for a complex-pair input shape.
func irfftLength(shape Shape, a Attrs) (axis, n int, err error) {
	cs, err := complexDims(Meta{Shape: shape})
	if err != nil {
		return 0, 0, err
	}
	return fftLength(cs, a, func(m int) int { return 2 * (m - 1) })
}

// resizeAxis zero-pads or trims t along axis to length n.
func resizeAxis(t *Tensor, axis, n int) *Tensor {
	if t.err == nil && t.shape[axis] == n {
		return t
	}
	return call1("_resize_axis", Attrs{"axis": axis, "n": n}, t)
}

func fftCall(op string, x *Tensor, axis, n int, norm string) *Tensor {
	return call1(op, Attrs{"axis": axis, "n": n, "norm": norm}, x)
}

// complexFFTGrad is the backward rule of fft and ifft: the opposite
// transform of the gradient with the dual norm, then undo the resize.
func complexFFTGrad(opposite string) func(*GradCtx) ([]*Tensor, error) {
	return func(g *GradCtx) ([]*Tensor, error) {
		x := g.Inputs[0]
		axis, _ := NormAxis(g.Attrs.Int("axis"), x.Rank()-1)
		n := g.Outputs[0].shape[axis]
		gx := fftCall(opposite, g.Grad(0), axis, n, dualNorm(g.Attrs.String("norm")))
		return []*Tensor{resizeAxis(gx, axis, x.shape[axis])}, nil
	}
}

// rfftGrad: y_k = s * sum_t x_t e^{-2pi i kt/n} for k <= n/2, so the
// gradient is s * Re(sum_k g_k e^{+2pi i kt/n}): the spectrum padded to n
// bins, inverse-transformed with the dual norm, real part.
func rfftGrad(g *GradCtx) ([]*Tensor, error) {
	x := g.Inputs[0]
	axis, n, err := fftLength(x.shape, g.Attrs, fftKeepLen)
	if err != nil {
		return nil, err
	}
	z := fftCall("ifft", resizeAxis(g.Grad(0), axis, n), axis, n, dualNorm(g.Attrs.String("norm")))
	re := resizeAxis(z, z.Rank()-1, 1)
	if re.err != nil {
		return nil, re.err
	}
	re = re.Reshape(re.shape[:re.Rank()-1])
	return []*Tensor{resizeAxis(re, axis, x.shape[axis])}, nil
}

// irfftGrad: the output is s * sum over the Hermitian-completed spectrum, in
// which every bin other than DC and (for even n) Nyquist appears twice. The
// gradient is the dual-norm rfft of g with those bins doubled; the imaginary
// parts of DC and Nyquist come out as zero since they do not influence y.
func irfftGrad(g *GradCtx) ([]*Tensor, error) {
	x := g.Inputs[0]
	axis, n, err := irfftLength(x.shape, g.Attrs)
	if err != nil {
		return nil, err
	}
	grad := g.Grad(0)
	spec := fftCall("rfft", grad, axis, n, dualNorm(g.Attrs.String("norm")))
	bins := n/2 + 1
	w := make([]float64, bins)
	for k := range w {
		w[k] = 2
	}
	w[0] = 1
	if n%2 == 0 {
		w[bins-1] = 1
	}
	wshape := make(Shape, x.Rank())
	for i := range wshape {
		wshape[i] = 1
	}
	wshape[axis] = bins
	weights := FromFloat64s(grad.dtype, wshape, w, grad.Device())
	return []*Tensor{resizeAxis(call1("mul", nil, spec, weights), axis, x.shape[axis])}, nil
}

func complexSamples() []Sample {
	return []Sample{
		{Name: "pow2", Inputs: []Gen{G(F32, 8, 2)}},
		{Name: "bluestein_batch", Inputs: []Gen{G(F32, 3, 5, 2)}},
		{Name: "axis0_prime", Inputs: []Gen{G(F32, 7, 2, 2)}, Attrs: Attrs{"axis": 0}},
		{Name: "pad", Inputs: []Gen{G(F32, 2, 5, 2)}, Attrs: Attrs{"n": 8, "norm": "ortho"}},
		{Name: "trim_forward", Inputs: []Gen{G(F32, 6, 2)}, Attrs: Attrs{"n": 3, "norm": "forward"}},
		{Name: "strided", Inputs: []Gen{G(F32, 6, 2).AsStrided()}},
		{Name: "f64_len1", Inputs: []Gen{G(F64, 3, 1, 2)}},
		{Name: "f64_12", Inputs: []Gen{G(F64, 12, 2)}, Attrs: Attrs{"norm": "ortho"}},
	}
}

func init() {
	MustRegister(
		&OpDef{
			Name: "fft", Category: "spectral", Doc: "Discrete Fourier transform of complex pairs [..., 2] along one axis (any length).",
			Inputs: []InputSpec{{Name: "x", DTypes: []DType{F32, F64}}}, Attrs: fftAttrs("transform length: zero-pads or trims the input; absent keeps it"),
			Infer: inferComplexFFT, Backward: complexFFTGrad("ifft"), Samples: complexSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "ifft", Category: "spectral", Doc: "Inverse discrete Fourier transform of complex pairs [..., 2] along one axis.",
			Inputs: []InputSpec{{Name: "x", DTypes: []DType{F32, F64}}}, Attrs: fftAttrs("transform length: zero-pads or trims the input; absent keeps it"),
			Infer: inferComplexFFT, Backward: complexFFTGrad("fft"), Samples: complexSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "rfft", Category: "spectral", Doc: "Fourier transform of a real signal: the n/2+1 non-negative frequency bins as complex pairs.",
			Inputs: []InputSpec{{Name: "x", DTypes: []DType{F32, F64}}}, Attrs: fftAttrs("signal length: zero-pads or trims the input; absent keeps it"),
			Infer: inferRFFT, Backward: rfftGrad, TolScale: 2,
			Samples: []Sample{
				{Name: "even", Inputs: []Gen{G(F32, 8)}},
				{Name: "odd_batch", Inputs: []Gen{G(F32, 2, 7)}},
				{Name: "axis0", Inputs: []Gen{G(F32, 6, 3)}, Attrs: Attrs{"axis": 0, "norm": "ortho"}},
				{Name: "pad_odd", Inputs: []Gen{G(F32, 4)}, Attrs: Attrs{"n": 9, "norm": "forward"}},
				{Name: "trim", Inputs: []Gen{G(F32, 3, 10)}, Attrs: Attrs{"n": 6}},
				{Name: "strided", Inputs: []Gen{G(F32, 5, 4).AsStrided()}},
				{Name: "f64_len1", Inputs: []Gen{G(F64, 4, 1)}},
			},
		},
		&OpDef{
			Name: "irfft", Category: "spectral", Doc: "Inverse of rfft: complex pairs of the non-negative bins to a real signal of length n.",
			Inputs: []InputSpec{{Name: "x", DTypes: []DType{F32, F64}}}, Attrs: fftAttrs("output length; absent means 2*(m-1) for m input bins"),
			Infer: inferIRFFT, Backward: irfftGrad, TolScale: 2,
			Samples: []Sample{
				{Name: "even", Inputs: []Gen{G(F32, 5, 2)}},
				{Name: "odd_n", Inputs: []Gen{G(F32, 2, 4, 2)}, Attrs: Attrs{"n": 7}},
				{Name: "axis0", Inputs: []Gen{G(F32, 4, 3, 2)}, Attrs: Attrs{"axis": 0, "norm": "ortho"}},
				{Name: "pad_bins", Inputs: []Gen{G(F32, 3, 2)}, Attrs: Attrs{"n": 10, "norm": "forward"}},
				{Name: "trim_bins", Inputs: []Gen{G(F32, 9, 2)}, Attrs: Attrs{"n": 6}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 2).AsStrided()}},
				{Name: "f64_n1", Inputs: []Gen{G(F64, 3, 2)}, Attrs: Attrs{"n": 1}},
			},
		},
		&OpDef{
			Name: "_resize_axis", Category: "spectral", Internal: true,
			Doc:    "Zero-pad or trim one axis to length n (the length adjustment of the FFT ops).",
			Inputs: []InputSpec{{Name: "x", DTypes: FloatDTypes}},
			Attrs: []AttrSpec{{Name: "axis", Kind: AttrInt, Required: true, Doc: "axis to resize"},
				{Name: "n", Kind: AttrInt, Required: true, Doc: "new length"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				axis, err := NormAxis(a.Int("axis"), len(in[0].Shape))
				if err != nil {
					return nil, err
				}
				if a.Int("n") < 0 {
					return nil, fmt.Errorf("n must be non-negative, got %d", a.Int("n"))
				}
				out := in[0].Shape.Clone()
				out[axis] = a.Int("n")
				return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
			},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				axis, _ := NormAxis(g.Attrs.Int("axis"), g.Inputs[0].Rank())
				return []*Tensor{resizeAxis(g.Grad(0), axis, g.Inputs[0].shape[axis])}, nil
			},
			Samples: []Sample{
				{Name: "pad", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"axis": 1, "n": 5}},
				{Name: "trim", Inputs: []Gen{G(F64, 4, 3).AsStrided()}, Attrs: Attrs{"axis": 0, "n": 2}},
				{Name: "to_empty", Inputs: []Gen{G(F32, 3)}, Attrs: Attrs{"axis": -1, "n": 0}},
			},
		},
	)
}
