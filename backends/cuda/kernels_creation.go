//go:build linux && cgo

package cuda

import (
	"math"
	"strconv"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Creation and random ops: map kernels with no inputs, written from the
// element index i. The random ops draw the CPU backend's Philox4x32-10
// stream (core/rng.go) with 64-bit integers and f64 arithmetic, so a seed
// gives the same tensor on both devices.

// toStorage is the expression that stores the f64 value v into dtype d as
// the CPU does (core.PutF64): integers through i64, truncating and
// saturating, then wrapping to their width.
func toStorage(d core.DType, v string) string {
	if d.IsFloat() || d == core.Bool {
		return v
	}
	return "i64(" + v + ")"
}

func fillKernel(value func(core.Attrs) float64) core.Kernel {
	return func(k *core.KernelCall) error {
		out := k.Outputs[0]
		var sc lower.Scalars
		sc.SetF(0, value(k.Attrs))
		return cudaOf(k).mapRun(k.Op.Name, nil, out, toStorage(out.DType(), "pf(0u)"), &sc)
	}
}

// arangeKernel is start + i*step: in i64 when start, stop and step are
// whole numbers (exact past 2^53, wrapping as the CPU's does), else in f64.
func arangeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	var sc lower.Scalars
	var e string
	if start, step, ok := core.ArangeInts(k.Attrs); ok {
		sc.SetI(0, start)
		sc.SetI(1, step)
		e = "i64(u64(pi(0u)) + u64(i) * u64(pi(1u)))"
		if out.DType().IsFloat() {
			e = "f64(" + e + ")"
		}
	} else {
		sc.SetF(0, k.Attrs.Float("start"))
		sc.SetF(1, k.Attrs.Float("step"))
		e = toStorage(out.DType(), "(pf(0u) + f64(i) * pf(1u))")
	}
	return cudaOf(k).mapRun("arange", nil, out, e, &sc)
}

// linspaceKernel fills from both ends towards the middle, as PyTorch does,
// so the last value is exactly stop; integer dtypes truncate the bounds.
func linspaceKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	n := out.Numel()
	start, stop := k.Attrs.Float("start"), k.Attrs.Float("stop")
	if !out.DType().IsFloat() {
		start, stop = math.Trunc(start), math.Trunc(stop)
	}
	step := 0.0
	if n > 1 {
		step = (stop - start) / float64(n-1)
	}
	var sc lower.Scalars
	sc.SetF(0, start)
	sc.SetF(1, stop)
	sc.SetF(2, step)
	sc.SetI(3, int64(n/2))
	sc.SetI(4, int64(n-1))
	e := "select(pf(1u) - pf(2u) * f64(pi(4u) - i), pf(0u) + pf(2u) * f64(i), i < pi(3u) || pi(4u) == 0)"
	return cudaOf(k).mapRun("linspace", nil, out, toStorage(out.DType(), e), &sc)
}

func eyeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	var sc lower.Scalars
	sc.SetI(0, int64(out.Shape()[1]))
	return cudaOf(k).mapRun("eye", nil, out, "select(0, 1, i / pi(0u) == i % pi(0u))", &sc)
}

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
	zero := func(core.Attrs) float64 { return 0 }
	one := func(core.Attrs) float64 { return 1 }
	value := func(a core.Attrs) float64 { return a.Float("value") }
	register("zeros", fillKernel(zero))
	register("zeros_like", fillKernel(zero))
	register("ones", fillKernel(one))
	register("ones_like", fillKernel(one))
	register("full", fillKernel(value))
	register("full_like", fillKernel(value))
	register("arange", arangeKernel)
	register("linspace", linspaceKernel)
	register("eye", eyeKernel)
	register("rand", uniformKernel)
	register("rand_like", uniformKernel)
	register("randn", normalKernel)
	register("randn_like", normalKernel)
	register("randint", randintKernel)
	register("bernoulli", bernoulliKernel)
	register("dropout", dropoutKernel)
}
