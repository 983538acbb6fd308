package cpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Kernels of the random ops: Philox-based draws (rand, randn, randint,
// bernoulli) and dropout.

func init() {
	register("rand", randomFloatKernel(uniformOf))
	register("rand_like", randomFloatKernel(uniformOf))
	register("randn", randomFloatKernel(normalOf))
	register("randn_like", randomFloatKernel(normalOf))
	register("randint", randintKernel)
	register("bernoulli", bernoulliKernel)
	register("dropout", dropoutKernel)
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

// dropoutKernel keeps element i (row-major) when its Philox uniform is at
// least p and scales it by 1/(1-p). Dropped elements are multiplied by 0, not
// set to 0, so NaN and inf propagate exactly as PyTorch's x*mask*scale does.
func dropoutKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	p := k.Attrs.Float("p")
	if !k.Attrs.Bool("training") {
		return copyKernel(k)
	}
	seed, offset := uint64(k.Attrs.Int("seed")), uint64(k.Attrs.Int("offset"))
	scale := 1 / (1 - p)
	// Element i is kept (times 1/(1-p)) when its uniform draw u, the top 24
	// bits of its Philox word over 2^24, is >= p - the stream every backend
	// and SDK shares, one block of four words per four elements. u is exact,
	// so the test is an integer one against ceil(p * 2^24), and branch-free:
	// kept or not is a coin flip, which a branch would mispredict half the
	// time. v>>8 - thr wraps around (bit 31 set) exactly when v>>8 < thr.
	thr := dropoutThreshold(p)
	factors := [2]float64{0, scale}
	key := [2]uint32{uint32(seed), uint32(seed >> 32)}
	n := in.Numel()
	if denseF32(in) && out.DType() == core.F32 {
		// f32 straight through: the product in float64 rounded once, as the
		// general path's write rounds it.
		x, y := f32s(in), f32s(out)
		philoxWords(n, key, offset, func(i int, words []uint32) {
			xs, ys := x[i:i+len(words)], y[i:i+len(words)]
			for l, v := range words {
				ys[l] = float32(float64(xs[l]) * factors[((v>>8-thr)>>31)^1])
			}
		})
		return nil
	}
	x := readF64(in)
	philoxWords(n, key, offset, func(i int, words []uint32) {
		xs := x[i : i+len(words)]
		for l, v := range words {
			xs[l] *= factors[((v>>8-thr)>>31)^1]
		}
	})
	writeF64(out, x)
	return nil
}

// philoxWordsChunk is how many elements' words philoxWords makes per call
// of its callback (a multiple of 8: two blocks per step).
const philoxWordsChunk = 1024

// philoxWords hands use the Philox words of n elements - element i's is
// word i%4 of the block at counter offset + i/4 under key, stream 0 - a
// chunk at a time with the chunk's first index, in parallel, two blocks per
// step (numerics.Philox4x32Pair).
func philoxWords(n int, key [2]uint32, offset uint64, use func(i int, words []uint32)) {
	ctr := func(b uint64) [4]uint32 { return [4]uint32{uint32(b), uint32(b >> 32), 0, 0} }
	chunks := (n + philoxWordsChunk - 1) / philoxWordsChunk
	parallelFor(chunks, 16*philoxWordsChunk, func(lo, hi int) {
		var words [philoxWordsChunk]uint32
		for c := lo; c < hi; c++ {
			i := c * philoxWordsChunk
			m := min(philoxWordsChunk, n-i)
			for j := 0; j < m; j += 8 {
				b := offset + uint64((i+j)/4)
				first, second := numerics.Philox4x32Pair(key, ctr(b), ctr(b+1))
				w := words[j : j+8 : j+8]
				w[0], w[1], w[2], w[3] = first[0], first[1], first[2], first[3]
				w[4], w[5], w[6], w[7] = second[0], second[1], second[2], second[3]
			}
			use(i, words[:m])
		}
	})
}

// dropoutThreshold is the least 24-bit draw k with k / 2^24 >= p (2^24,
// never, for p >= 1 or NaN; 0, always, for p <= 0).
func dropoutThreshold(p float64) uint32 {
	switch {
	case p != p || p >= 1:
		return 1 << 24
	case p <= 0:
		return 0
	}
	return uint32(math.Ceil(p * (1 << 24)))
}
