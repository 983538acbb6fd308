package core

import (
	"fmt"
)

// The array API's n-dimensional transforms (fftn, ifftn, rfftn, irfftn) and
// the Hermitian pair (hfft, ihfft), composed of the one-axis transforms of
// ops_spectral.go. A transform over several axes is the product of one-axis
// transforms, which commute, and each one-axis norm scales by its own
// length, so applying fft with the same norm along every axis gives the
// n-dimensional norm (1/prod(n) split as the norm says). Every backend then
// runs the existing kernels and autograd goes through their backward rules:
// no kernel and no gradient of their own.
//
// Axes count over the complex dims of a pair tensor, as the one-axis ops'
// "axis" does: the trailing pair dim is never an array axis.

// fftnAttrs are the attributes of the n-dimensional transforms, the array
// API's s, axes and norm.
func fftnAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "s", Kind: AttrInts, Doc: "transform length per axis of axes (zero-pads or trims; -1 keeps the input's); absent keeps every length; without axes, s applies to the last len(s) axes"},
		{Name: "axes", Kind: AttrInts, Doc: "axes to transform, in order (over the complex dims for complex-pair tensors), no repeats; absent means every axis, or the last len(s) when s is given"},
		{Name: "norm", Kind: AttrString, Default: "backward", Enum: fftNorms, Doc: "which direction is scaled: backward (inverse by 1/n), ortho (both by 1/sqrt(n)) or forward, n the product of the lengths"},
	}
}

// fftnPlan resolves s and axes over shape (a pair tensor's complex dims, or
// a real tensor's dims for rfftn) by the array API's rules: the axes in the
// order given, and the length each is transformed at. lastLen is the
// default length of the last axis of the plan from its input length (the
// input's own, or 2*(m-1) for irfftn); every other axis keeps its length
// unless s says otherwise.
func fftnPlan(shape Shape, a Attrs, lastLen func(m int) int) (axes, lens []int, err error) {
	rank := len(shape)
	s := a.Ints("s")
	hasS := a.Has("s")
	switch {
	case a.Has("axes"):
		if axes, err = orderedAxes(a.Ints("axes"), rank); err != nil {
			return nil, nil, err
		}
		if hasS && len(s) != len(axes) {
			return nil, nil, fmt.Errorf("s %v and axes %v differ in length (%d and %d)", s, a.Ints("axes"), len(s), len(axes))
		}
	case hasS:
		if len(s) > rank {
			return nil, nil, fmt.Errorf("s %v has %d lengths but the input has %d axes (shape %v)", s, len(s), rank, shape)
		}
		for ax := rank - len(s); ax < rank; ax++ {
			axes = append(axes, ax)
		}
	default:
		for ax := range rank {
			axes = append(axes, ax)
		}
	}
	lens = make([]int, len(axes))
	for i, ax := range axes {
		n := shape[ax]
		if i == len(axes)-1 {
			n = lastLen(n)
		}
		if hasS && s[i] != -1 {
			if s[i] < 1 {
				return nil, nil, fmt.Errorf("s[%d] is %d: lengths must be positive, or -1 for the input's length (s %v)", i, s[i], s)
			}
			n = s[i]
		}
		if n < 1 {
			return nil, nil, fmt.Errorf("transform length must be at least 1, got %d (axis %d of shape %v); give s", n, ax, shape)
		}
		lens[i] = n
	}
	return axes, lens, nil
}

// orderedAxes normalises axes keeping their order (NormAxes sorts, but the
// order pairs each axis with its s entry and picks rfftn's last axis) and
// refuses a repeated one, as torch.fft does: numpy would transform it twice.
func orderedAxes(axes []int, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make(map[int]int, len(axes))
	for i, ax := range axes {
		n, err := NormAxis(ax, rank)
		if err != nil {
			return nil, fmt.Errorf("axes %v: %w", axes, err)
		}
		if j, dup := seen[n]; dup {
			return nil, fmt.Errorf("axes %v repeat axis %d (entries %d and %d); each axis may be transformed once", axes, n, j, i)
		}
		seen[n] = i
		out[i] = n
	}
	return out, nil
}

// needAxes refuses an empty plan for the real transforms, which have no
// identity case: their output has a different kind than their input.
func needAxes(axes []int) error {
	if len(axes) == 0 {
		return fmt.Errorf("must transform at least one axis (axes is empty)")
	}
	return nil
}

func inferFFTN(in []Meta, a Attrs) ([]Meta, error) {
	cs, err := complexDims(in[0])
	if err != nil {
		return nil, err
	}
	axes, lens, err := fftnPlan(cs, a, fftKeepLen)
	if err != nil {
		return nil, err
	}
	out := in[0].Shape.Clone()
	for i, ax := range axes {
		out[ax] = lens[i]
	}
	return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
}

func inferRFFTN(in []Meta, a Attrs) ([]Meta, error) {
	axes, lens, err := fftnPlan(in[0].Shape, a, fftKeepLen)
	if err != nil {
		return nil, err
	}
	if err := needAxes(axes); err != nil {
		return nil, err
	}
	out := append(in[0].Shape.Clone(), 2)
	for i, ax := range axes {
		out[ax] = lens[i]
	}
	last := len(axes) - 1
	out[axes[last]] = lens[last]/2 + 1
	return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
}

// irfftnLastLen is irfft's default output length for m input bins.
func irfftnLastLen(m int) int { return 2 * (m - 1) }

func inferIRFFTN(in []Meta, a Attrs) ([]Meta, error) {
	cs, err := complexDims(in[0])
	if err != nil {
		return nil, err
	}
	axes, lens, err := fftnPlan(cs, a, irfftnLastLen)
	if err != nil {
		return nil, err
	}
	if err := needAxes(axes); err != nil {
		return nil, err
	}
	out := cs.Clone()
	for i, ax := range axes {
		out[ax] = lens[i]
	}
	return []Meta{{Shape: out, DType: in[0].DType}}, out.Validate()
}

// composeFFTN is fftn (op "fft") or ifftn (op "ifft"): the one-axis
// transform along every axis of the plan. With no axes the result is a
// copy, as torch.fft.fftn(x, dim=[]) gives.
func composeFFTN(op string) func(in []*Tensor, a Attrs) ([]*Tensor, error) {
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		x := in[0]
		axes, lens, err := fftnPlan(x.shape[:x.Rank()-1], a, fftKeepLen)
		if err != nil {
			return nil, err
		}
		if len(axes) == 0 {
			x = call1("contiguous", nil, x)
		}
		for i, ax := range axes {
			x = fftCall(op, x, ax, lens[i], a.String("norm"))
		}
		return []*Tensor{x}, x.Err()
	}
}

// composeRFFTN: rfft along the last axis of the plan (which halves it),
// then fft along the others, as numpy and torch order them.
func composeRFFTN(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x := in[0]
	axes, lens, err := fftnPlan(x.shape, a, fftKeepLen)
	if err != nil {
		return nil, err
	}
	last, norm := len(axes)-1, a.String("norm")
	x = fftCall("rfft", x, axes[last], lens[last], norm)
	for i, ax := range axes[:last] {
		x = fftCall("fft", x, ax, lens[i], norm)
	}
	return []*Tensor{x}, x.Err()
}

// composeIRFFTN: ifft along every axis of the plan but the last, on the
// half spectrum, then irfft along the last, the inverse of rfftn's order.
func composeIRFFTN(in []*Tensor, a Attrs) ([]*Tensor, error) {
	x := in[0]
	axes, lens, err := fftnPlan(x.shape[:x.Rank()-1], a, irfftnLastLen)
	if err != nil {
		return nil, err
	}
	last, norm := len(axes)-1, a.String("norm")
	for i, ax := range axes[:last] {
		x = fftCall("ifft", x, ax, lens[i], norm)
	}
	x = fftCall("irfft", x, axes[last], lens[last], norm)
	return []*Tensor{x}, x.Err()
}

// conjPairs is the complex conjugate of a pair tensor: the imaginary
// halves negated, by a broadcast product so that autograd sees a mul.
func conjPairs(x *Tensor) *Tensor {
	if x.err != nil {
		return x
	}
	return call1("mul", nil, x, FromFloat64s(x.dtype, Shape{2}, []float64{1, -1}, x.Device()))
}

// swappedNormAttrs are hfft's and ihfft's attributes with the norm swapped
// for the real transform they are made of.
func swappedNormAttrs(a Attrs) Attrs {
	b := Attrs{"axis": a.Int("axis"), "norm": dualNorm(a.String("norm"))}
	if a.Has("n") {
		b["n"] = a.Int("n")
	}
	return b
}

// composeHFFT: a Hermitian-symmetric signal given by its first half has a
// real spectrum, which is irfft of the conjugate read as a forward
// transform: irfft's scaling applies to the direction opposite to norm's
// (numpy's _swap_direction).
func composeHFFT(in []*Tensor, a Attrs) ([]*Tensor, error) {
	out := call1("irfft", swappedNormAttrs(a), conjPairs(in[0]))
	return []*Tensor{out}, out.Err()
}

// composeIHFFT is the inverse of hfft: the conjugate of rfft with the norm
// swapped.
func composeIHFFT(in []*Tensor, a Attrs) ([]*Tensor, error) {
	out := conjPairs(call1("rfft", swappedNormAttrs(a), in[0]))
	return []*Tensor{out}, out.Err()
}

// fftnSamples serve fftn and ifftn: every axis, s alone (the last axes),
// axes out of order with an s of -1, one axis, no axis, strided, f64.
func fftnSamples() []Sample {
	return []Sample{
		{Name: "all_axes", Inputs: []Gen{G(F32, 3, 4, 2)}},
		{Name: "s_last_axes", Inputs: []Gen{G(F32, 2, 3, 5, 2)}, Attrs: Attrs{"s": []int{4, 3}}},
		{Name: "axes_order_ortho", Inputs: []Gen{G(F32, 3, 2, 4, 2)}, Attrs: Attrs{"axes": []int{2, 0}, "s": []int{5, -1}, "norm": "ortho"}},
		{Name: "one_axis_forward", Inputs: []Gen{G(F32, 3, 5, 2)}, Attrs: Attrs{"axes": []int{-2}, "norm": "forward"}},
		{Name: "no_axes", Inputs: []Gen{G(F32, 2, 3, 2)}, Attrs: Attrs{"axes": []int{}}},
		{Name: "strided", Inputs: []Gen{G(F32, 4, 3, 2).AsStrided()}},
		{Name: "f64_3d", Inputs: []Gen{G(F64, 2, 3, 2, 2)}, Attrs: Attrs{"norm": "ortho"}},
	}
}

func init() {
	floatIn := []InputSpec{{Name: "x", DTypes: []DType{F32, F64}}}
	MustRegister(
		&OpDef{
			Name: "fftn", Category: "spectral", Doc: "n-dimensional discrete Fourier transform of complex pairs [..., 2] over axes (default: every axis).",
			Inputs: floatIn, Attrs: fftnAttrs(), Infer: inferFFTN, Compose: composeFFTN("fft"), Samples: fftnSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "ifftn", Category: "spectral", Doc: "n-dimensional inverse discrete Fourier transform of complex pairs [..., 2] over axes (default: every axis).",
			Inputs: floatIn, Attrs: fftnAttrs(), Infer: inferFFTN, Compose: composeFFTN("ifft"), Samples: fftnSamples(), TolScale: 2,
		},
		&OpDef{
			Name: "rfftn", Category: "spectral", Doc: "n-dimensional Fourier transform of a real signal: the last of axes keeps its s/2+1 non-negative bins; complex pairs out.",
			Inputs: floatIn, Attrs: fftnAttrs(), Infer: inferRFFTN, Compose: composeRFFTN, TolScale: 2,
			Samples: []Sample{
				{Name: "all_axes", Inputs: []Gen{G(F32, 4, 6)}},
				{Name: "axes_ortho", Inputs: []Gen{G(F32, 3, 5, 4)}, Attrs: Attrs{"axes": []int{0, 1}, "norm": "ortho"}},
				{Name: "s_pad_trim", Inputs: []Gen{G(F32, 2, 4, 7)}, Attrs: Attrs{"s": []int{6, 5}}},
				{Name: "last_axis_first", Inputs: []Gen{G(F32, 5, 3)}, Attrs: Attrs{"axes": []int{1, 0}, "norm": "forward"}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}},
				{Name: "f64_odd", Inputs: []Gen{G(F64, 3, 5)}, Attrs: Attrs{"s": []int{-1, 9}}},
			},
		},
		&OpDef{
			Name: "irfftn", Category: "spectral", Doc: "Inverse of rfftn: complex pairs of the half spectrum to a real signal; the last of axes has length s[-1], by default 2*(m-1).",
			Inputs: floatIn, Attrs: fftnAttrs(), Infer: inferIRFFTN, Compose: composeIRFFTN, TolScale: 2,
			Samples: []Sample{
				{Name: "all_axes", Inputs: []Gen{G(F32, 4, 3, 2)}},
				{Name: "s_odd", Inputs: []Gen{G(F32, 2, 4, 4, 2)}, Attrs: Attrs{"s": []int{5, 7}}},
				{Name: "axes_ortho", Inputs: []Gen{G(F32, 3, 4, 2, 2)}, Attrs: Attrs{"axes": []int{0, 1}, "norm": "ortho"}},
				{Name: "s_keep_forward", Inputs: []Gen{G(F32, 3, 3, 2)}, Attrs: Attrs{"s": []int{-1, 5}, "norm": "forward"}},
				{Name: "last_axis_first", Inputs: []Gen{G(F32, 4, 3, 2)}, Attrs: Attrs{"axes": []int{1, 0}}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 3, 2).AsStrided()}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 5, 2)}, Attrs: Attrs{"axes": []int{-1}, "s": []int{8}}},
			},
		},
		&OpDef{
			Name: "hfft", Category: "spectral", Doc: "Fourier transform of a Hermitian-symmetric signal given by its first half (complex pairs): real, length n (default 2*(m-1)).",
			Inputs: floatIn, Attrs: fftAttrs("output length; absent means 2*(m-1) for m input points"),
			Infer: inferIRFFT, Compose: composeHFFT, TolScale: 2,
			Samples: []Sample{
				{Name: "even", Inputs: []Gen{G(F32, 5, 2)}},
				{Name: "odd_n", Inputs: []Gen{G(F32, 2, 4, 2)}, Attrs: Attrs{"n": 7}},
				{Name: "axis0", Inputs: []Gen{G(F32, 4, 3, 2)}, Attrs: Attrs{"axis": 0, "norm": "ortho"}},
				{Name: "pad_forward", Inputs: []Gen{G(F32, 3, 2)}, Attrs: Attrs{"n": 10, "norm": "forward"}},
				{Name: "strided", Inputs: []Gen{G(F32, 4, 2).AsStrided()}},
				{Name: "f64_trim", Inputs: []Gen{G(F64, 9, 2)}, Attrs: Attrs{"n": 6}},
			},
		},
		&OpDef{
			Name: "ihfft", Category: "spectral", Doc: "Inverse of hfft: the n/2+1 non-negative bins (complex pairs) of a real signal's inverse transform.",
			Inputs: floatIn, Attrs: fftAttrs("signal length: zero-pads or trims the input; absent keeps it"),
			Infer: inferRFFT, Compose: composeIHFFT, TolScale: 2,
			Samples: []Sample{
				{Name: "even", Inputs: []Gen{G(F32, 8)}},
				{Name: "odd_forward", Inputs: []Gen{G(F32, 2, 7)}, Attrs: Attrs{"norm": "forward"}},
				{Name: "axis0", Inputs: []Gen{G(F32, 6, 3)}, Attrs: Attrs{"axis": 0, "norm": "ortho"}},
				{Name: "pad_odd", Inputs: []Gen{G(F32, 4)}, Attrs: Attrs{"n": 9}},
				{Name: "strided", Inputs: []Gen{G(F32, 5, 4).AsStrided()}},
				{Name: "f64", Inputs: []Gen{G(F64, 3, 6)}},
			},
		},
	)
}
