package cpu

import (
	"math"
	"math/bits"
	"math/cmplx"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// FFT kernels: an iterative radix-2 transform for powers of two and
// Bluestein's chirp-z algorithm (a power-of-two convolution) for every
// other length, all in complex128 whatever the tensor dtype.

func init() {
	register("fft", complexFFTKernel(false))
	register("ifft", complexFFTKernel(true))
	register("rfft", rfftKernel)
	register("irfft", irfftKernel)
	register("_resize_axis", resizeAxisKernel)
}

// fftPlan holds what a transform of length n precomputes. Plans are
// read-only once built, so one plan serves concurrent transforms.
type fftPlan struct {
	n       int
	twiddle []complex128 // e^{-2 pi i k/n} for k < n/2 (radix-2 only)
	chirp   []complex128 // e^{-i pi k^2/n} for k < n (Bluestein only)
	filter  []complex128 // FFT of the conjugate chirp, divided by sub.n
	sub     *fftPlan     // power-of-two plan for the Bluestein convolution
}

var fftPlans sync.Map // int -> *fftPlan

func planFFT(n int) *fftPlan {
	if p, ok := fftPlans.Load(n); ok {
		return p.(*fftPlan)
	}
	p := &fftPlan{n: n}
	if n&(n-1) == 0 {
		p.twiddle = make([]complex128, n/2)
		for k := range p.twiddle {
			s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
			p.twiddle[k] = complex(c, s)
		}
	} else {
		m := 1 << bits.Len(uint(2*n-2))
		p.sub = planFFT(m)
		p.chirp = make([]complex128, n)
		for k := range p.chirp {
			// k^2 mod 2n keeps the angle small, so large k lose no accuracy.
			s, c := math.Sincos(-math.Pi * float64((k*k)%(2*n)) / float64(n))
			p.chirp[k] = complex(c, s)
		}
		p.filter = make([]complex128, m)
		p.filter[0] = cmplx.Conj(p.chirp[0])
		for k := 1; k < n; k++ {
			p.filter[k] = cmplx.Conj(p.chirp[k])
			p.filter[m-k] = cmplx.Conj(p.chirp[k])
		}
		p.sub.forward(p.filter, nil)
		for k := range p.filter {
			p.filter[k] /= complex(float64(m), 0)
		}
	}
	actual, _ := fftPlans.LoadOrStore(n, p)
	return actual.(*fftPlan)
}

// scratchLen is the scratch a transform of this plan needs.
func (p *fftPlan) scratchLen() int {
	if p.sub == nil {
		return 0
	}
	return p.sub.n
}

// forward computes the unnormalised DFT of x in place (sign -1).
func (p *fftPlan) forward(x, scratch []complex128) {
	if p.sub == nil {
		fftRadix2(x, p.twiddle)
		return
	}
	// Bluestein: kt = (k^2 + t^2 - (k-t)^2)/2 turns the DFT into a
	// convolution of x*chirp with the conjugate chirp.
	a := scratch[:p.sub.n]
	for t := range a {
		if t < p.n {
			a[t] = x[t] * p.chirp[t]
		} else {
			a[t] = 0
		}
	}
	p.sub.forward(a, nil)
	for j := range a {
		a[j] *= p.filter[j]
	}
	p.sub.inverse(a, nil)
	for k := range x {
		x[k] = a[k] * p.chirp[k]
	}
}

// inverse is the unnormalised inverse DFT (sign +1): conj(DFT(conj(x))).
func (p *fftPlan) inverse(x, scratch []complex128) {
	for i := range x {
		x[i] = cmplx.Conj(x[i])
	}
	p.forward(x, scratch)
	for i := range x {
		x[i] = cmplx.Conj(x[i])
	}
}

func fftRadix2(x, twiddle []complex128) {
	n := len(x)
	if n < 2 {
		return
	}
	shift := 64 - bits.Len(uint(n-1))
	for i := range x {
		if j := int(bits.Reverse64(uint64(i)) >> shift); j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				a, b := x[start+k], x[start+k+half]*twiddle[k*step]
				x[start+k], x[start+k+half] = a+b, a-b
			}
		}
	}
}

// fftLineLayout describes a tensor as [outer, length, inner] around one axis.
type fftLineLayout struct{ outer, inner int }

func fftLayoutAround(shape core.Shape, axis int) fftLineLayout {
	return fftLineLayout{outer: shape[:axis].Numel(), inner: shape[axis+1:].Numel()}
}

// fftForEachLine runs fn for every (outer, inner) line, in parallel, giving each
// worker its own line buffer of length n and scratch for the plan.
func fftForEachLine(l fftLineLayout, p *fftPlan, fn func(o, i int, buf, scratch []complex128)) {
	lines := l.outer * l.inner
	cost := p.n * (bits.Len(uint(p.n)) + 1)
	parallelFor(lines, cost, func(lo, hi int) {
		buf := make([]complex128, p.n)
		scratch := make([]complex128, p.scratchLen())
		for line := lo; line < hi; line++ {
			fn(line/l.inner, line%l.inner, buf, scratch)
		}
	})
}

func fftAxis(k *core.KernelCall, rank int) int {
	axis, _ := core.NormAxis(k.Attrs.Int("axis"), rank)
	return axis
}

// complexFFTKernel runs fft or ifft on complex pairs: read (or zero-pad) the
// input line to the output length, transform, scale.
func complexFFTKernel(inverse bool) core.Kernel {
	return func(k *core.KernelCall) error {
		x, out := k.Inputs[0], k.Outputs[0]
		inShape := x.Shape()
		axis := fftAxis(k, len(inShape)-1)
		l, n := inShape[axis], out.Shape()[axis]
		layout := fftLayoutAround(inShape[:len(inShape)-1], axis)
		scale := complex(kernelkit.FFTScale(k.Attrs.String("norm"), n, inverse), 0)
		src, dst := readF64(x), tempF64(out.Numel())
		p := planFFT(n)
		fftForEachLine(layout, p, func(o, i int, buf, scratch []complex128) {
			for t := range buf {
				buf[t] = 0
				if t < l {
					at := 2 * ((o*l+t)*layout.inner + i)
					buf[t] = complex(src[at], src[at+1])
				}
			}
			if inverse {
				p.inverse(buf, scratch)
			} else {
				p.forward(buf, scratch)
			}
			for t, v := range buf {
				at := 2 * ((o*n+t)*layout.inner + i)
				v *= scale
				dst[at], dst[at+1] = real(v), imag(v)
			}
		})
		writeF64(out, dst)
		return nil
	}
}

// rfftKernel transforms real lines and keeps bins 0..n/2.
func rfftKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	inShape := x.Shape()
	axis := fftAxis(k, len(inShape))
	l := inShape[axis]
	bins := out.Shape()[axis]
	n := l
	if k.Attrs.Has("n") {
		n = k.Attrs.Int("n")
	}
	layout := fftLayoutAround(inShape, axis)
	scale := complex(kernelkit.FFTScale(k.Attrs.String("norm"), n, false), 0)
	src, dst := readF64(x), tempF64(out.Numel())
	p := planFFT(n)
	fftForEachLine(layout, p, func(o, i int, buf, scratch []complex128) {
		for t := range buf {
			buf[t] = 0
			if t < l {
				buf[t] = complex(src[(o*l+t)*layout.inner+i], 0)
			}
		}
		p.forward(buf, scratch)
		for f := 0; f < bins; f++ {
			at := 2 * ((o*bins+f)*layout.inner + i)
			v := buf[f] * scale
			dst[at], dst[at+1] = real(v), imag(v)
		}
	})
	writeF64(out, dst)
	return nil
}

// irfftKernel completes the n/2+1 bins to a Hermitian spectrum (dropping the
// imaginary parts of DC and, for even n, Nyquist, as pocketfft's c2r does)
// and takes the real part of its inverse transform.
func irfftKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	inShape := x.Shape()
	axis := fftAxis(k, len(inShape)-1)
	m, n := inShape[axis], out.Shape()[axis]
	bins := n/2 + 1
	layout := fftLayoutAround(inShape[:len(inShape)-1], axis)
	scale := kernelkit.FFTScale(k.Attrs.String("norm"), n, true)
	src, dst := readF64(x), tempF64(out.Numel())
	p := planFFT(n)
	fftForEachLine(layout, p, func(o, i int, buf, scratch []complex128) {
		for t := range buf {
			buf[t] = 0
		}
		for f := 0; f < min(bins, m); f++ {
			at := 2 * ((o*m+f)*layout.inner + i)
			v := complex(src[at], src[at+1])
			if f == 0 || 2*f == n {
				v = complex(src[at], 0)
			}
			buf[f] = v
			if f > 0 && 2*f != n {
				buf[n-f] = cmplx.Conj(v)
			}
		}
		p.inverse(buf, scratch)
		for t, v := range buf {
			dst[(o*n+t)*layout.inner+i] = real(v) * scale
		}
	})
	writeF64(out, dst)
	return nil
}

// resizeAxisKernel copies the common prefix of the axis and leaves the rest
// of the (zeroed) output as padding.
func resizeAxisKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	inShape := x.Shape()
	axis := fftAxis(k, len(inShape))
	l, n := inShape[axis], out.Shape()[axis]
	layout := fftLayoutAround(inShape, axis)
	src, dst := readF64(x), tempF64(out.Numel())
	keep := min(l, n) * layout.inner
	for o := 0; o < layout.outer; o++ {
		copy(dst[o*n*layout.inner:o*n*layout.inner+keep], src[o*l*layout.inner:o*l*layout.inner+keep])
	}
	writeF64(out, dst)
	return nil
}
