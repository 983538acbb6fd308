package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// Random ops on the GPU draw the same Philox4x32-10 stream as the CPU
// backend (core/rng.go), so a seed gives the same tensor on either device.
// Uniforms, integers, Bernoulli masks and dropout masks are bit-identical;
// randn's Box-Muller runs in f32 (WGSL has no f64), so its values agree with
// the CPU's float64 transform to a few ulps rather than bit for bit.

// lpRandomWG is the workgroup size of the random kernels; each thread fills
// one Philox block of four elements.
const lpRandomWG = 64

// lpRandom runs random.wgsl in mode over out (and in, for bernoulli and
// dropout, read through its strides); set fills the mode's slots 4..6.
func lpRandom(k *core.KernelCall, mode string, in *core.Tensor, intConv string, set func(*params)) error {
	out := k.Outputs[0]
	n := out.Numel()
	if n == 0 {
		return nil
	}
	outT := physical(out.DType())
	data := map[string]any{"WG": lpRandomWG, "Mode": mode, "In": "", "Out": outT,
		"Store": storeExpr(out.DType(), "v"), "IntConv": intConv}
	key := "lp_random|" + mode + "|" + outT + "|" + data["Store"].(string) + "|" + intConv
	var prm params
	seed, offset := uint64(k.Attrs.Int("seed")), uint64(k.Attrs.Int("offset"))
	prm.setU(0, uint32(seed))
	prm.setU(1, uint32(seed>>32))
	prm.setU(2, uint32(offset))
	prm.setU(3, uint32(offset>>32))
	prm.setN(7, n)
	set(&prm)
	ts := []*core.Tensor{out}
	nIn := 0
	if in != nil {
		data["In"] = physical(in.DType())
		key += "|" + physical(in.DType())
		if err := newIteration(out.Shape(), in).write(&prm, n); err != nil {
			return err
		}
		ts, nIn = []*core.Tensor{in, out}, 1
	}
	blocks := (n + 3) / 4
	prm.setI(wgsl.SlotN, blocks)
	b := gpuOf(k)
	p, err := b.pipelineFor(key, nIn, 1, func() (string, error) { return wgsl.Render("random", data) })
	if err != nil {
		return err
	}
	bufs, err := buffers(ts...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, blocks, lpRandomWG, bufs...)
}

// lpUniform keeps as many top bits as the output dtype has significand
// bits, as the CPU does, so rounding to the dtype never reaches 1.
func lpUniform(k *core.KernelCall) error {
	digits := 24
	switch k.Outputs[0].DType() {
	case core.F16:
		digits = 11
	case core.BF16:
		digits = 8
	}
	return lpRandom(k, "uniform", nil, "", func(p *params) {
		p.setU(4, uint32(32-digits))
		p.setF(5, math.Ldexp(1, -digits))
	})
}

func lpNormal(k *core.KernelCall) error {
	return lpRandom(k, "normal", nil, "", func(*params) {})
}

// lpRandint computes low + bits mod (high-low) in wrapping 32-bit
// arithmetic, which equals the CPU's 64-bit result whenever that result is
// something the GPU can hold; ranges whose values may not fit 32 bits are
// refused, as uploading them would be.
func lpRandint(k *core.KernelCall) error {
	low, high := int64(k.Attrs.Int("low")), int64(k.Attrs.Int("high"))
	span := uint64(high) - uint64(low)
	last := high - 1
	if span > 1<<32 {
		last = low + (1<<32 - 1) // bits mod span is bits itself
	}
	fitsI32 := low >= math.MinInt32 && last <= math.MaxInt32
	fitsU32 := low >= 0 && last <= math.MaxUint32
	out := k.Outputs[0].DType()
	var conv string
	switch physical(out) {
	case "i32":
		conv = "bitcast<i32>(pu(6u) + r)"
		if !fitsI32 {
			return fmt.Errorf("webgpu: randint over [%d, %d) gives %v values outside i32, which is how the GPU holds them; use device cpu", low, high, out)
		}
	case "u32":
		conv = "pu(6u) + r"
	default:
		switch {
		case fitsI32:
			conv = "f32(bitcast<i32>(pu(6u) + r))"
		case fitsU32:
			conv = "f32(pu(6u) + r)"
		default:
			return fmt.Errorf("webgpu: randint over [%d, %d) has values beyond 32 bits; the GPU cannot draw them, use device cpu", low, high)
		}
	}
	return lpRandom(k, "randint", nil, conv, func(p *params) {
		if span < 1<<32 {
			p.setU(5, uint32(span)) // 0 means 2^32 or more: no modulus
		}
		p.setU(6, uint32(low))
	})
}

// lpBernoulli compares each 24-bit uniform with p. Probabilities outside
// [0, 1] are an error, as on the CPU; the GPU checks them (checkOnDevice)
// and p is read back only to word a failure.
func lpBernoulli(k *core.KernelCall) error {
	err := gpuOf(k).checkOnDevice("bernoulli", k.Inputs[0], "is_nan(x0) || x0 < 0.0 || x0 > 1.0", nil, func() error {
		probs, err := k.Inputs[0].Float64s()
		if err != nil {
			return err
		}
		for i, v := range probs {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("probability %v at flat index %d is outside [0, 1]", v, i)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return lpRandom(k, "bernoulli", k.Inputs[0], "", func(*params) {})
}

// lpDropout keeps element i when its 24-bit uniform u satisfies u >= p,
// tested exactly as bits >= ceil(p*2^24), so the mask is the CPU's bit for
// bit. Kept values are scaled by 1/(1-p) as a two-float product (see
// lp_scaled), which matches the CPU's float64 product in almost every
// element; Mesa's shader compiler reassociates some of the error terms, so
// a few kept values can land an ulp away. Dropped values are multiplied by
// 0 so NaN and inf propagate.
func lpDropout(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	if !k.Attrs.Bool("training") {
		return gpuOf(k).mapRun([]*core.Tensor{in}, out, "x0", nil)
	}
	p := k.Attrs.Float("p")
	scale := 1 / (1 - p)
	hi := float32(scale)
	lo := scale - float64(hi)
	if math.IsInf(scale, 0) {
		lo = 0 // p = 1 keeps nothing
	}
	hh := math.Float32frombits(math.Float32bits(hi) &^ 0xfff)
	return lpRandom(k, "dropout", in, "", func(prm *params) {
		prm.setU(4, uint32(min(math.Ceil(p*(1<<24)), 1<<24)))
		prm.setF(5, float64(hi))
		prm.setF(6, lo)
		prm.setF(40, float64(hh))
		prm.setF(41, float64(hi-hh))
	})
}

func init() {
	register("rand", lpUniform)
	register("rand_like", lpUniform)
	register("randn", lpNormal)
	register("randn_like", lpNormal)
	register("randint", lpRandint)
	register("bernoulli", lpBernoulli)
	register("dropout", lpDropout)
}
