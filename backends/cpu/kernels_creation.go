package cpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels for ranges, identity matrices and the Philox-based random ops.

func init() {
	register("arange", arangeKernel)
	register("linspace", linspaceKernel)
	register("eye", eyeKernel)
	register("rand", randomFloatKernel(uniformOf))
	register("rand_like", randomFloatKernel(uniformOf))
	register("randn", randomFloatKernel(normalOf))
	register("randn_like", randomFloatKernel(normalOf))
	register("randint", randintKernel)
	register("bernoulli", bernoulliKernel)
}

// arangeKernel computes integer ranges in int64 (exact beyond 2^53, core
// checked that they fit the dtype) and others as start + i*step in float64,
// converted once.
func arangeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	if start, step, ok := oprules.ArangeInts(k.Attrs); ok {
		if out.DType().IsFloat() {
			vals := tempF64(out.Numel())
			for i := range vals {
				vals[i] = float64(oprules.ArangeAt(start, step, i))
			}
			writeF64(out, vals)
			return nil
		}
		b, d, off := host(out), out.DType(), out.Offset()
		for i := range out.Numel() {
			numerics.PutI64(d, b, off+i, oprules.ArangeAt(start, step, i))
		}
		return nil
	}
	start, step := k.Attrs.Float("start"), k.Attrs.Float("step")
	vals := tempF64(out.Numel())
	for i := range vals {
		vals[i] = start + float64(i)*step
	}
	writeF64(out, vals)
	return nil
}

// linspaceKernel fills from both ends towards the middle, as PyTorch does, so
// the last value is exactly stop. Integer dtypes truncate the bounds first,
// also like PyTorch.
func linspaceKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	n := out.Numel()
	start, stop, step := kernelkit.LinspaceBounds(k.Attrs, n, !out.DType().IsFloat())
	vals := make([]float64, n)
	if n == 1 {
		vals[0] = start
	}
	if n > 1 {
		half := n / 2
		for i := range vals {
			if i < half {
				vals[i] = start + step*float64(i)
			} else {
				vals[i] = stop - step*float64(n-1-i)
			}
		}
	}
	writeF64(out, vals)
	return nil
}

func eyeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	s := out.Shape()
	clear(host(out))
	b, d := host(out), out.DType()
	for i := 0; i < min(s[0], s[1]); i++ {
		numerics.PutF64(d, b, out.Offset()+i*s[1]+i, 1)
	}
	return nil
}

// philoxKey reads the seed and offset attributes that core filled in. The
// seed travels as an int; converting back recovers the full 64 bits.
func philoxKey(a core.Attrs) (seed, offset uint64) {
	return uint64(a.Int("seed")), uint64(a.Int("offset"))
}

// philoxStream yields the raw bits of consecutive elements of one stream,
// running Philox once per block of four rather than once per element.
type philoxStream struct {
	key    [2]uint32
	offset uint64
	stream uint32
	block  uint64
	lanes  [4]uint32
	valid  bool
}

func newPhiloxStream(seed, offset uint64, stream uint32) *philoxStream {
	return &philoxStream{key: [2]uint32{uint32(seed), uint32(seed >> 32)}, offset: offset, stream: stream}
}

// bits returns element i's 32 bits; it must agree with numerics.PhiloxBits.
func (p *philoxStream) bits(i int) uint32 {
	block := p.offset + uint64(i)/4
	if !p.valid || block != p.block {
		p.lanes = numerics.Philox4x32(p.key, [4]uint32{uint32(block), uint32(block >> 32), p.stream, 0})
		p.block, p.valid = block, true
	}
	return p.lanes[i%4]
}

// drawFn turns element i's draws into a value of dtype d.
type drawFn func(d core.DType, u0, u1 *philoxStream, i int) float64

// uniformOf keeps as many of the top bits as d has significand bits (24
// for f32 and f64, as numerics.PhiloxUniform), so that rounding to the output
// dtype can never produce 1.
func uniformOf(d core.DType, u0, _ *philoxStream, i int) float64 {
	digits := 24
	switch d {
	case core.F16:
		digits = 11
	case core.BF16:
		digits = 8
	}
	return float64(u0.bits(i)>>(32-digits)) / float64(uint32(1)<<digits)
}

// normalOf is numerics.PhiloxNormal: Box-Muller over streams 0 and 1.
func normalOf(_ core.DType, u0, u1 *philoxStream, i int) float64 {
	a := float64(u0.bits(i)>>8) * (1.0 / (1 << 24))
	b := float64(u1.bits(i)>>8) * (1.0 / (1 << 24))
	return math.Sqrt(-2*math.Log(1-a)) * math.Cos(2*math.Pi*b)
}

// randomFloatKernel fills the output with draw in parallel; each chunk has
// its own stream cursors, and element i depends only on i.
func randomFloatKernel(draw drawFn) core.Kernel {
	return func(k *core.KernelCall) error {
		out := k.Outputs[0]
		seed, offset := philoxKey(k.Attrs)
		d := out.DType()
		vals := tempF64(out.Numel())
		parallelFor(len(vals), 32, func(lo, hi int) {
			u0, u1 := newPhiloxStream(seed, offset, 0), newPhiloxStream(seed, offset, 1)
			for i := lo; i < hi; i++ {
				vals[i] = draw(d, u0, u1, i)
			}
		})
		writeF64(out, vals)
		return nil
	}
}

// randintKernel maps 32 random bits to low + bits mod (high-low) in uint64
// arithmetic, so ranges up to the whole int64 span do not overflow.
func randintKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	seed, offset := philoxKey(k.Attrs)
	low, high := int64(k.Attrs.Int("low")), int64(k.Attrs.Int("high"))
	span := uint64(high) - uint64(low)
	vals := tempI64(out.Numel())
	parallelFor(len(vals), 32, func(lo, hi int) {
		s := newPhiloxStream(seed, offset, 0)
		for i := lo; i < hi; i++ {
			vals[i] = int64(uint64(low) + uint64(s.bits(i))%span)
		}
	})
	writeI64(out, vals)
	return nil
}

// bernoulliKernel compares each 24-bit uniform draw with p. Probabilities
// outside [0, 1] (or NaN) are an error, as in PyTorch.
func bernoulliKernel(k *core.KernelCall) error {
	p, out := k.Inputs[0], k.Outputs[0]
	seed, offset := philoxKey(k.Attrs)
	probs := readF64(p)
	for i, v := range probs {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("probability %v at flat index %d is outside [0, 1]", v, i)
		}
	}
	parallelFor(len(probs), 32, func(lo, hi int) {
		s := newPhiloxStream(seed, offset, 0)
		for i := lo; i < hi; i++ {
			u := float64(s.bits(i)>>8) * (1.0 / (1 << 24))
			if u < probs[i] {
				probs[i] = 1
			} else {
				probs[i] = 0
			}
		}
	})
	writeF64(out, probs)
	return nil
}
