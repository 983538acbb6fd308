package multimodal

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// Resampling, as torchaudio.functional.resample with its defaults
// (sinc_interp_hann, lowpass_filter_width 6, rolloff 0.99): band-limited
// sinc interpolation whose low-pass sits at 0.99 of the lower rate's
// Nyquist frequency, windowed by a Hann window six zero crossings wide.
// After dividing both rates by their greatest common divisor (orig and
// up, torchaudio's orig_freq and new_freq), output sample j of every
// block of up is the same FIR filter applied to the input shifted by
// orig, so the whole resampling is one strided conv1d with up output
// channels: the kernel is built on the host and the convolution runs on
// the waveform's device.

const (
	resampleWidth   = 6    // lowpass_filter_width: zero crossings on each side
	resampleRolloff = 0.99 // rolloff: the cutoff as a fraction of the lower Nyquist
	// maxResampleTaps bounds the kernel (up × (2·width + orig) taps):
	// rates whose ratio reduces to large coprime numbers (44101 to 16000)
	// would need gigabytes.
	maxResampleTaps = 1 << 24
)

// resampleKernel is torchaudio's _get_sinc_resample_kernel for the
// reduced rates orig and up: (up, 2·width + orig) taps, row j the filter
// of output phase j, and width, the input samples the filter reaches
// before and after. torchaudio evaluates it in the waveform's dtype; with
// single every step is rounded to float32 as torch's float32 ops round it
// (sine and cosine within an ulp of torch's), which for float32
// waveforms moves the result by up to 5e-6 from the float64 filter's.
func resampleKernel(orig, up int, single bool) ([]float64, int) {
	r := func(v float64) float64 { return v }
	if single {
		r = func(v float64) float64 { return float64(float32(v)) }
	}
	base := float64(min(orig, up)) * resampleRolloff
	width := int(math.Ceil(float64(resampleWidth*orig) / base))
	taps := 2*width + orig
	// Python floats meet float32 tensors rounded to float32.
	baseT, pi, scale := r(base), r(math.Pi), r(base/float64(orig))
	kernel := make([]float64, up*taps)
	for j := range up {
		phase := r(float64(-j) / float64(up))
		for i := range taps {
			t := r(r(phase+r(float64(i-width)/float64(orig))) * baseT)
			t = math.Max(-resampleWidth, math.Min(resampleWidth, t))
			window := r(math.Cos(r(r(r(t*pi)/resampleWidth) / 2)))
			window = r(window * window)
			t = r(t * pi)
			sinc := 1.0
			if t != 0 {
				sinc = r(r(math.Sin(t)) / t)
			}
			kernel[j*taps+i] = r(sinc * r(window*scale))
		}
	}
	return kernel, width
}

// Resample resamples x (..., time), a float tensor of waveforms sampled
// at fromHz, to toHz on x's device: torchaudio.functional.resample(x,
// fromHz, toHz) with its default filter. The output has
// ceil(time · toHz / fromHz) samples; equal rates return x itself.
func Resample(x *core.Tensor, fromHz, toHz int) (*core.Tensor, error) {
	switch {
	case x == nil:
		return nil, fmt.Errorf("multimodal: Resample: the waveform is nil")
	case x.Err() != nil:
		return nil, fmt.Errorf("multimodal: Resample: %w", x.Err())
	case fromHz <= 0 || toHz <= 0:
		return nil, fmt.Errorf("multimodal: Resample: rates must be positive, got %d Hz to %d Hz", fromHz, toHz)
	case !x.DType().IsFloat():
		return nil, fmt.Errorf("multimodal: Resample: the waveform has dtype %s; want a float dtype", x.DType())
	case len(x.Shape()) == 0 || x.Shape()[len(x.Shape())-1] == 0:
		return nil, fmt.Errorf("multimodal: Resample: the waveform has shape %v; want (..., time) with at least one sample", x.Shape())
	}
	if fromHz == toHz {
		return x, nil
	}
	g := gcd(fromHz, toHz)
	orig, up := fromHz/g, toHz/g
	base := float64(min(orig, up)) * resampleRolloff
	if taps := int64(up) * int64(2*int(math.Ceil(float64(resampleWidth*orig)/base))+orig); taps > maxResampleTaps {
		return nil, fmt.Errorf("multimodal: Resample: %d Hz to %d Hz reduces to %d:%d, whose filter bank would hold %d taps (at most %d); resample through a rate sharing a larger divisor with both",
			fromHz, toHz, orig, up, taps, maxResampleTaps)
	}
	// torchaudio builds the taps in the waveform's dtype: float32 steps
	// for float32 and narrower (its float16 taps would be far coarser),
	// float64 for float64.
	kernel, width := resampleKernel(orig, up, x.DType() != core.F64)
	taps := 2*width + orig
	defer core.NoGradScope()()
	shape := x.Shape()
	length := shape[len(shape)-1]
	rows := 1
	for _, d := range shape[:len(shape)-1] {
		rows *= d
	}
	dev := x.Device()
	k := core.FromSlice(kernel, core.Shape{up, 1, taps}, core.CPU).Cast(x.DType()).To(dev)
	y := x.Reshape(core.Shape{rows, 1, length}).Pad(core.Attrs{"pads": []int{width, width + orig}})
	y = y.Conv1d(k, nil, core.Attrs{"stride": []int{orig}})
	frames := y.Shape()[2]
	y = y.Permute(core.Attrs{"dims": []int{0, 2, 1}}).Reshape(core.Shape{rows, frames * up})
	// ceil(up · length / orig) in integers; torchaudio divides in float64,
	// which gives the same while up · length stays below 2^53.
	target := (up*length + orig - 1) / orig
	out := append(shape[:len(shape)-1].Clone(), target)
	y = y.Slice(core.Attrs{"axis": 1, "start": 0, "stop": target}).Reshape(out)
	if err := y.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: Resample: %w", err)
	}
	return y, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
