package core

import (
	"fmt"
	"math"
)

// The array API's frequency helpers: the sample frequencies of the bins
// (fftfreq, rfftfreq) and the shifts that move the zero frequency to the
// middle and back (fftshift, ifftshift). All four are compositions of
// arange, roll and mul, so they run wherever those do, on the device the
// caller names, and the shifts differentiate through roll.
//
// fftshift and ifftshift take any tensor, so they cannot tell a complex-pair
// tensor from a real one whose last dim happens to be 2: the "pairs"
// attribute says which. With pairs, axes count over the complex dims (as
// the transforms' axis does), absent axes mean every complex dim, and the
// trailing pair dim never moves; without it every dim is an array axis.

// freqAttrs are fftfreq's and rfftfreq's attributes; numpy's and
// torch's signature plus the device every creation op takes.
func freqAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "n", Kind: AttrInt, Required: true, Doc: "window length: the number of samples of the transformed signal"},
		{Name: "d", Kind: AttrFloat, Default: 1.0, Doc: "sample spacing (the inverse of the sampling rate); not zero"},
		{Name: "dtype", Kind: AttrDType, Default: F32, Doc: "floating-point element type"},
		{Name: "device", Kind: AttrString, Default: "", Doc: "device; empty means the default device"},
	}
}

// checkFreq refuses what has no frequencies: numpy divides by n*d and
// raises on zero; torch would return inf and NaN.
func checkFreq(a Attrs) error {
	if n := a.Int("n"); n < 1 {
		return fmt.Errorf("n must be at least 1, got %d", n)
	}
	if d := a.Float("d"); d == 0 || math.IsNaN(d) {
		return fmt.Errorf("d must be a nonzero sample spacing, got %v", d)
	}
	if dt := a.DType("dtype"); !dt.IsFloat() {
		return fmt.Errorf("dtype must be a floating-point type, got %s", dt)
	}
	return nil
}

// freqInfer is the shape rule of fftfreq (bins(n) = n) and rfftfreq
// (n/2+1).
func freqInfer(bins func(n int) int) func([]Meta, Attrs) ([]Meta, error) {
	return func(_ []Meta, a Attrs) ([]Meta, error) {
		if err := checkFreq(a); err != nil {
			return nil, err
		}
		return []Meta{{Shape: Shape{bins(a.Int("n"))}, DType: a.DType("dtype")}}, nil
	}
}

// scaledRange is arange(start, stop) in the requested dtype on the
// requested device, times 1/(n*d): numpy and torch multiply by that
// reciprocal rather than divide, so the rounding is theirs.
func scaledRange(a Attrs, start, stop int, reorder func(*Tensor) *Tensor) *Tensor {
	n, dt := a.Int("n"), a.DType("dtype")
	ints := reorder(call1("arange", Attrs{"start": start, "stop": stop, "dtype": dt, "device": a.String("device")}))
	if ints.err != nil {
		return ints
	}
	return call1("mul", nil, ints, Scalar(1/(float64(n)*a.Float("d")), dt, ints.Device()))
}

// composeFFTFreq: the bins are 0, 1, ..., then the negative frequencies
// from -(n/2): the centred range -(n/2) .. n-n/2-1 rolled left by n/2,
// which is ifftshift of that range.
func composeFFTFreq(_ []*Tensor, a Attrs) ([]*Tensor, error) {
	h := a.Int("n") / 2
	out := scaledRange(a, -h, a.Int("n")-h, func(t *Tensor) *Tensor {
		return call1("roll", Attrs{"shifts": []int{-h}, "axes": []int{0}}, t)
	})
	return []*Tensor{out}, out.Err()
}

func composeRFFTFreq(_ []*Tensor, a Attrs) ([]*Tensor, error) {
	out := scaledRange(a, 0, a.Int("n")/2+1, func(t *Tensor) *Tensor { return t })
	return []*Tensor{out}, out.Err()
}

// shiftAttrs are fftshift's and ifftshift's attributes.
func shiftAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "axes", Kind: AttrInts, Doc: "axes to shift (a repeated axis shifts twice, as in numpy and torch); absent means every axis"},
		{Name: "pairs", Kind: AttrBool, Default: false, Doc: "x is complex pairs [..., 2]: axes count over the complex dims and the pair dim stays in place"},
	}
}

// shiftAxes are the axes fftshift moves, normalised over the array dims
// (every dim, or the complex dims of a pair tensor), in the order given.
func shiftAxes(shape Shape, a Attrs) ([]int, error) {
	rank := len(shape)
	if a.Bool("pairs") {
		cs, err := complexDims(Meta{Shape: shape})
		if err != nil {
			return nil, fmt.Errorf("pairs is set, so %w", err)
		}
		rank = len(cs)
	}
	if !a.Has("axes") {
		axes := make([]int, rank)
		for i := range axes {
			axes[i] = i
		}
		return axes, nil
	}
	axes := make([]int, len(a.Ints("axes")))
	for i, ax := range a.Ints("axes") {
		n, err := NormAxis(ax, rank)
		if err != nil {
			return nil, fmt.Errorf("axes %v: %w", a.Ints("axes"), err)
		}
		axes[i] = n
	}
	return axes, nil
}

func inferShift(in []Meta, a Attrs) ([]Meta, error) {
	if _, err := shiftAxes(in[0].Shape, a); err != nil {
		return nil, err
	}
	return InferSame(in, a)
}

// composeShift rolls every axis by half its length: floor(n/2) forward for
// fftshift (dir 1), back for ifftshift (dir -1), so that for odd n one
// undoes the other. No axes leaves a copy, as roll over no axes does.
func composeShift(dir int) func([]*Tensor, Attrs) ([]*Tensor, error) {
	return func(in []*Tensor, a Attrs) ([]*Tensor, error) {
		x := in[0]
		axes, err := shiftAxes(x.shape, a)
		if err != nil {
			return nil, err
		}
		shifts := make([]int, len(axes))
		for i, ax := range axes {
			shifts[i] = dir * (x.shape[ax] / 2)
		}
		out := call1("roll", Attrs{"shifts": shifts, "axes": axes}, x)
		return []*Tensor{out}, out.Err()
	}
}

func shiftSamples() []Sample {
	return []Sample{
		{Name: "odd", Inputs: []Gen{G(F32, 5)}},
		{Name: "all_axes", Inputs: []Gen{G(F32, 4, 5)}},
		{Name: "one_axis", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"axes": []int{-1}}},
		{Name: "repeated_axis", Inputs: []Gen{G(F32, 5, 2)}, Attrs: Attrs{"axes": []int{0, 0}}},
		{Name: "i64", Inputs: []Gen{GI(I64, -50, 50, 3, 4)}},
		{Name: "pairs", Inputs: []Gen{G(F32, 3, 4, 2)}, Attrs: Attrs{"pairs": true}},
		{Name: "pairs_axis", Inputs: []Gen{G(F32, 2, 5, 2)}, Attrs: Attrs{"pairs": true, "axes": []int{-1}}},
		{Name: "strided_f64", Inputs: []Gen{G(F64, 3, 6).AsStrided()}, Attrs: Attrs{"axes": []int{1, 0}}},
	}
}

func init() {
	MustRegister(
		&OpDef{
			Name: "fftfreq", Category: "spectral", Doc: "Sample frequencies of fft's n bins for spacing d: 0, 1, ..., then the negative ones, all over n*d (1-D).",
			Attrs: freqAttrs(), Infer: freqInfer(func(n int) int { return n }), Compose: composeFFTFreq,
			Samples: []Sample{
				{Name: "odd", Attrs: Attrs{"n": 5}},
				{Name: "even_d", Attrs: Attrs{"n": 8, "d": 0.5}},
				{Name: "one", Attrs: Attrs{"n": 1}},
				{Name: "f64_negative_d", Attrs: Attrs{"n": 7, "d": -0.1, "dtype": F64}},
				{Name: "f16", Attrs: Attrs{"n": 10, "d": 0.25, "dtype": F16}},
			},
		},
		&OpDef{
			Name: "rfftfreq", Category: "spectral", Doc: "Sample frequencies of rfft's n/2+1 bins for spacing d: 0, 1, ..., n/2, over n*d (1-D).",
			Attrs: freqAttrs(), Infer: freqInfer(func(n int) int { return n/2 + 1 }), Compose: composeRFFTFreq,
			Samples: []Sample{
				{Name: "odd", Attrs: Attrs{"n": 5}},
				{Name: "even_d", Attrs: Attrs{"n": 8, "d": 2}},
				{Name: "one", Attrs: Attrs{"n": 1}},
				{Name: "f64", Attrs: Attrs{"n": 11, "d": 0.3, "dtype": F64}},
			},
		},
		&OpDef{
			Name: "fftshift", Category: "spectral", Doc: "Roll each axis by half its length so that the zero frequency is in the middle (pairs: over the complex dims).",
			Inputs: []InputSpec{{Name: "x"}}, Attrs: shiftAttrs(), Infer: inferShift, Compose: composeShift(1), Samples: shiftSamples(),
		},
		&OpDef{
			Name: "ifftshift", Category: "spectral", Doc: "Inverse of fftshift: roll each axis back by half its length (pairs: over the complex dims).",
			Inputs: []InputSpec{{Name: "x"}}, Attrs: shiftAttrs(), Infer: inferShift, Compose: composeShift(-1), Samples: shiftSamples(),
		},
	)
}
