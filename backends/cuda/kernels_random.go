//go:build linux && cgo

package cuda

import (
	"math"
	"strconv"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Random ops and dropout: map kernels written from the element index i.
// They draw the CPU backend's Philox4x32-10 stream (core/numerics/philox.go) with
// 64-bit integers and f64 arithmetic, so a seed gives the same tensor on
// both devices.

// philoxScalars puts the seed and offset of a random op in slots 0 and 1.
func philoxScalars(a core.Attrs, sc *lower.Scalars) {
	sc.SetI(0, int64(a.Int("seed")))
	sc.SetI(1, int64(a.Int("offset")))
}

// uniformKernel keeps as many top bits as the output has significand bits,
// as the CPU does, so rounding to the dtype never reaches 1.
func uniformKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	digits := 24
	switch out.DType() {
	case core.F16:
		digits = 11
	case core.BF16:
		digits = 8
	}
	var sc lower.Scalars
	philoxScalars(k.Attrs, &sc)
	sc.SetI(2, int64(32-digits))
	sc.SetF(3, math.Ldexp(1, -digits))
	return cudaOf(k).mapRun(k.Op.Name, nil, out, "f64(philox_bits(A, i, 0u) >> u32(pi(2u))) * pf(3u)", &sc)
}

func normalKernel(k *core.KernelCall) error {
	var sc lower.Scalars
	philoxScalars(k.Attrs, &sc)
	return cudaOf(k).mapRun(k.Op.Name, nil, k.Outputs[0], "philox_normal(A, i)", &sc)
}

// randintKernel is low + bits mod (high-low) in u64 arithmetic, as the CPU.
func randintKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	low, high := int64(k.Attrs.Int("low")), int64(k.Attrs.Int("high"))
	var sc lower.Scalars
	philoxScalars(k.Attrs, &sc)
	sc.SetI(2, low)
	sc.SetI(3, int64(uint64(high)-uint64(low)))
	e := "i64(u64(pi(2u)) + u64(philox_bits(A, i, 0u)) % u64(pi(3u)))"
	if out.DType().IsFloat() {
		e = "f64(" + e + ")"
	}
	return cudaOf(k).mapRun("randint", nil, out, e, &sc)
}

// bernoulliKernel compares each 24-bit uniform with p (x0, read through
// its strides); a probability outside [0, 1] fails the op at the next read.
func bernoulliKernel(k *core.KernelCall) error {
	var sc lower.Scalars
	philoxScalars(k.Attrs, &sc)
	ct := computeType(k.Inputs[0].DType())
	p := lower.Conv("x0", ct, lower.F64)
	g := &guard{cond: "!(" + p + " >= 0.0 && " + p + " <= 1.0)", msg: func(_ uint32, i, _ int64) string {
		return "a probability at flat index " + strconv.FormatInt(i, 10) + " is outside [0, 1]"
	}}
	e := "select(0.0, 1.0, f64(philox_bits(A, i, 0u) >> 8u) * (1.0 / 16777216.0) < " + p + ")"
	return cudaOf(k).mapRunGuarded("bernoulli", k.Inputs[:1], k.Outputs[0], e, &sc, g)
}

// dropoutKernel keeps element i when its 24-bit uniform is >= p, tested
// exactly as bits >= ceil(p*2^24) like the CPU, and scales kept values by
// 1/(1-p) in f64, rounding once; dropped values are multiplied by 0 so NaN
// and inf propagate.
func dropoutKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	if !k.Attrs.Bool("training") {
		return cudaOf(k).mapRun("dropout", k.Inputs[:1], out, "x0", nil)
	}
	p := k.Attrs.Float("p")
	var thr uint32
	switch {
	case p != p || p >= 1:
		thr = 1 << 24
	case p <= 0:
		thr = 0
	default:
		thr = uint32(min(math.Ceil(p*(1<<24)), 1<<24))
	}
	var sc lower.Scalars
	philoxScalars(k.Attrs, &sc)
	sc.SetU(2, thr)
	sc.SetF(3, 1/(1-p))
	x := lower.Conv("x0", computeType(in.DType()), lower.F64)
	e := x + " * select(0.0, pf(3u), (philox_bits(A, i, 0u) >> 8u) >= pu(2u))"
	return cudaOf(k).mapRun("dropout", k.Inputs[:1], out, e, &sc)
}

func init() {
	register("rand", uniformKernel)
	register("rand_like", uniformKernel)
	register("randn", normalKernel)
	register("randn_like", normalKernel)
	register("randint", randintKernel)
	register("bernoulli", bernoulliKernel)
	register("dropout", dropoutKernel)
}
