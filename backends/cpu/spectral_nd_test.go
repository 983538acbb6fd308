package cpu_test

import (
	"math"
	"math/cmplx"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/core"
)

// The array API fft extension's composed ops (core/ops_spectral_nd.go,
// ops_spectral_freq.go). Their reference vectors hold them to torch.fft;
// these tests hold them to the definitions and to each other, and check
// the errors name the values at fault.

// naiveDFT2 is the 2-D DFT of a rows x cols complex array, summed term by
// term: the definition fftn must agree with.
func naiveDFT2(x []complex128, rows, cols int) []complex128 {
	out := make([]complex128, len(x))
	for k := range rows {
		for l := range cols {
			for r := range rows {
				for c := range cols {
					phase := -2 * math.Pi * (float64(k*r%rows)/float64(rows) + float64(l*c%cols)/float64(cols))
					out[k*cols+l] += x[r*cols+c] * cmplx.Rect(1, phase)
				}
			}
		}
	}
	return out
}

func TestSpectralFFTNIsTheTwoDimensionalDFT(t *testing.T) {
	x := make([]complex128, 12)
	for i := range x {
		x[i] = complex(math.Sin(float64(i)), math.Cos(float64(3*i)))
	}
	want := miscPairs(naiveDFT2(x, 3, 4))
	in := miscF64(miscPairs(x), 3, 4, 2)
	assert.InDeltaSlice(t, want, miscVals(t, miscCall(t, "fftn", nil, in)), 1e-12)
	// Both axes named, in either order, are the same transform.
	assert.InDeltaSlice(t, want, miscVals(t, miscCall(t, "fftn", core.Attrs{"axes": []int{1, 0}}, in)), 1e-12)
	// ortho scales by 1/sqrt(3*4), forward by 1/12.
	ortho := miscVals(t, miscCall(t, "fftn", core.Attrs{"norm": "ortho"}, in))
	for i := range want {
		assert.InDelta(t, want[i]/math.Sqrt(12), ortho[i], 1e-12)
	}
	// ifftn undoes fftn under every norm.
	for _, norm := range []string{"backward", "ortho", "forward"} {
		a := core.Attrs{"norm": norm}
		back := miscCall(t, "ifftn", a, miscCall(t, "fftn", a, in))
		assert.InDeltaSlice(t, miscPairs(x), miscVals(t, back), 1e-12, norm)
	}
}

func TestSpectralRealAndHermitianRoundTrips(t *testing.T) {
	sig := []float64{0.5, -1, 2, 3, 0.25, 1.5, -0.75, 4, 1, -2, 0, 0.125, 3, -1, 2}
	x := miscF64(sig, 3, 5)
	spec := miscCall(t, "rfftn", nil, x)
	assert.Equal(t, core.Shape{3, 3, 2}, spec.Shape())
	// An odd last length cannot be recovered from the default 2*(m-1) = 4: s says 5.
	assert.Equal(t, core.Shape{3, 4}, miscCall(t, "irfftn", nil, spec).Shape())
	assert.InDeltaSlice(t, sig, miscVals(t, miscCall(t, "irfftn", core.Attrs{"s": []int{-1, 5}}, spec)), 1e-12)
	// rfftn is the first half of fftn of the signal as complex pairs.
	pairs := make([]float64, 0, 2*len(sig))
	for _, v := range sig {
		pairs = append(pairs, v, 0)
	}
	full := miscVals(t, miscCall(t, "fftn", nil, miscF64(pairs, 3, 5, 2)))
	half := miscVals(t, spec)
	for r := range 3 {
		assert.InDeltaSlice(t, full[r*10:r*10+6], half[r*6:r*6+6], 1e-12, "row %d", r)
	}
	// hfft inverts ihfft for the signal's length, under every norm.
	for _, norm := range []string{"backward", "ortho", "forward"} {
		a := core.Attrs{"norm": norm, "axis": 0}
		h := miscCall(t, "ihfft", a, x)
		a["n"] = 3
		assert.InDeltaSlice(t, sig, miscVals(t, miscCall(t, "hfft", a, h)), 1e-12, norm)
	}
	// ihfft is the conjugate of the inverse rfft: for a real signal that is
	// ifft's first n/2+1 bins.
	inv := miscVals(t, miscCall(t, "ifft", nil, miscF64(pairs[:10], 5, 2)))
	assert.InDeltaSlice(t, inv[:6], miscVals(t, miscCall(t, "ihfft", nil, miscF64(sig[:5], 5))), 1e-12)
}

func TestSpectralFrequenciesAndShifts(t *testing.T) {
	assert.InDeltaSlice(t, []float64{0, 0.2, 0.4, -0.4, -0.2}, miscVals(t, miscCall(t, "fftfreq", core.Attrs{"n": 5})), 1e-7)
	f := miscCall(t, "fftfreq", core.Attrs{"n": 4, "d": 0.5, "dtype": core.F64})
	assert.Equal(t, core.F64, f.DType())
	assert.Equal(t, []float64{0, 0.5, -1, -0.5}, miscVals(t, f))
	assert.Equal(t, []float64{0, 0.125, 0.25}, miscVals(t, miscCall(t, "rfftfreq", core.Attrs{"n": 4, "d": 2, "dtype": core.F64})))
	assert.Equal(t, core.F32, miscCall(t, "rfftfreq", core.Attrs{"n": 3}).DType())

	// fftshift puts fftfreq's bins in ascending order; ifftshift undoes it
	// for odd and even lengths.
	for _, n := range []int{5, 6} {
		freq := miscCall(t, "fftfreq", core.Attrs{"n": n, "dtype": core.F64})
		sorted := miscVals(t, miscCall(t, "fftshift", nil, freq))
		assert.True(t, slices.IsSorted(sorted), "fftshift(fftfreq(%d)) = %v", n, sorted)
		assert.Equal(t, miscVals(t, freq), miscVals(t, miscCall(t, "ifftshift", nil, miscCall(t, "fftshift", nil, freq))))
	}

	// With pairs, the trailing pair dim is not an axis: a [3] complex array
	// rolls its 3 points and keeps each (re, im) together.
	z := miscF64([]float64{1, 10, 2, 20, 3, 30}, 3, 2)
	assert.Equal(t, []float64{3, 30, 1, 10, 2, 20}, miscVals(t, miscCall(t, "fftshift", core.Attrs{"pairs": true}, z)))
	assert.Equal(t, []float64{2, 20, 3, 30, 1, 10}, miscVals(t, miscCall(t, "ifftshift", core.Attrs{"pairs": true, "axes": []int{-1}}, z)))
	// Without it the same tensor is a 3 x 2 real array and both dims roll.
	assert.Equal(t, []float64{30, 3, 10, 1, 20, 2}, miscVals(t, miscCall(t, "fftshift", nil, z)))

	// No axes: a copy, not the input itself.
	for _, c := range []struct {
		op string
		a  core.Attrs
		x  *core.Tensor
	}{
		{"fftn", core.Attrs{"axes": []int{}}, z},
		{"ifftn", core.Attrs{"s": []int{}}, z},
		{"fftshift", nil, miscF64([]float64{7})},
		{"ifftshift", core.Attrs{"axes": []int{}}, z},
	} {
		out := miscCall(t, c.op, c.a, c.x)
		assert.NotSame(t, c.x, out, c.op)
		assert.Equal(t, miscVals(t, c.x), miscVals(t, out), c.op)
	}
}

func TestSpectralErrorsNameTheValues(t *testing.T) {
	z := miscF64(make([]float64, 24), 3, 4, 2)
	r := miscF64(make([]float64, 12), 3, 4)
	for _, c := range []struct {
		op, want string
		a        core.Attrs
		x        *core.Tensor
	}{
		{"fftn", "fftn: axes [0 2]: axis 2 out of range for rank 2", core.Attrs{"axes": []int{0, 2}}, z},
		{"ifftn", "axes [0 -2] repeat axis 0 (entries 0 and 1)", core.Attrs{"axes": []int{0, -2}}, z},
		{"fftn", "s [4] and axes [0 1] differ in length (1 and 2)", core.Attrs{"s": []int{4}, "axes": []int{0, 1}}, z},
		{"rfftn", "s [2 2 2] has 3 lengths but the input has 2 axes (shape [3 4])", core.Attrs{"s": []int{2, 2, 2}}, r},
		{"irfftn", "s[1] is 0: lengths must be positive, or -1 for the input's length (s [3 0])", core.Attrs{"s": []int{3, 0}}, z},
		{"fftn", "s[0] is -2", core.Attrs{"s": []int{-2}}, z},
		{"rfftn", "rfftn: must transform at least one axis (axes is empty)", core.Attrs{"axes": []int{}}, r},
		{"irfftn", "must transform at least one axis", core.Attrs{"s": []int{}}, z},
		{"irfftn", "transform length must be at least 1, got 0 (axis 1 of shape [4 1]); give s", nil, miscF64(make([]float64, 8), 4, 1, 2)},
		{"fftn", "input must be complex pairs", nil, r},
		{"hfft", "at least 1, got 0", nil, miscF64(make([]float64, 2), 1, 2)},
		{"ihfft", "dtype", nil, miscI64([]int64{1, 2}, 2)},
		{"fftshift", "fftshift: pairs is set, so input must be complex pairs", core.Attrs{"pairs": true}, r},
		{"ifftshift", "axes [2]: axis 2 out of range for rank 2", core.Attrs{"pairs": true, "axes": []int{2}}, z},
	} {
		miscErr(t, c.want, c.op, c.a, c.x)
	}
	for _, c := range []struct {
		op, want string
		a        core.Attrs
	}{
		{"fftfreq", "fftfreq: d must be a nonzero sample spacing, got 0", core.Attrs{"n": 4, "d": 0}},
		{"rfftfreq", "d must be a nonzero sample spacing, got NaN", core.Attrs{"n": 4, "d": math.NaN()}},
		{"fftfreq", "n must be at least 1, got 0", core.Attrs{"n": 0}},
		{"rfftfreq", "dtype must be a floating-point type, got i32", core.Attrs{"n": 4, "dtype": core.I32}},
	} {
		miscErr(t, c.want, c.op, c.a)
	}
}
