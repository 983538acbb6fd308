package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// unaryFns are the scalar functions of one elementwise unary op. f is
// required; i (exact integer math, for ops whose integer inputs give integer
// outputs) and f32 (the float32 path, also taken by f16 and bf16) are
// optional, f32Loop replaces the per-element f32 call for ops so cheap that
// the call would dominate, and vec names the op's vector kernel, which
// replaces both where the CPU has it (ew_simd.go). cost is the work per
// element relative to an add: it decides when splitting over cores pays.
// u is i for a u64 input (binaryFns.u says when it is needed).
type unaryFns struct {
	f       func(x float64) float64
	i       func(x int64) int64
	u       func(x uint64) uint64
	f32     func(x float32) float32
	f32Loop func(dst, src []float32)
	vec     ewUn
	cost    int
}

// vectorised is fns with the vector kernel v.
func vectorised(v ewUn, fns unaryFns) unaryFns {
	fns.vec = v
	return fns
}

// unaryKernel runs the functions build returns for the call's attributes and
// output dtype. f32, f16 and bf16 in and out run in float32 (ew_plan.go),
// through the vector kernel where there is one; integer in and out uses
// int64 math; everything else reads float64 in logical order, so every
// dtype and layout rounds once, on the final write.
func unaryKernel(build func(a core.Attrs, out core.DType) unaryFns) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		fns := build(k.Attrs, out.DType())
		if unaryFloat(fns, in, out) {
			return nil
		}
		if fns.i != nil && !in.DType().IsFloat() && !out.DType().IsFloat() {
			v := readI64(in)
			if fns.u != nil && in.DType().IsUnsigned64() {
				for i, x := range v {
					v[i] = int64(fns.u(uint64(x)))
				}
			} else {
				for i, x := range v {
					v[i] = fns.i(x)
				}
			}
			writeI64(out, v)
			return nil
		}
		v := readF64(in)
		parallelFor(out.Numel(), max(fns.cost, 1), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v[i] = fns.f(v[i])
			}
		})
		writeF64(out, v)
		return nil
	}
}

// ewUnaryFns and ewBinaryFns are the elementwise ops' functions by op
// name, for the fused loops (fused_map.go), which must round exactly as
// the ops' kernels do.
var (
	ewUnaryFns  = map[string]func(core.Attrs, core.DType) unaryFns{}
	ewBinaryFns = map[string]binaryFns{}
	// ewBinaryAttrFns are the binary ops whose functions depend on their
	// attributes (gelu's gradient, by approximation).
	ewBinaryAttrFns = map[string]func(core.Attrs) binaryFns{}
)

// registerUnary registers op's unaryKernel and keeps its functions.
func registerUnary(op string, build func(a core.Attrs, out core.DType) unaryFns) {
	ewUnaryFns[op] = build
	register(op, unaryKernel(build))
}

// registerFixedUnary is registerUnary for ops without attributes.
func registerFixedUnary(op string, fns unaryFns) {
	registerUnary(op, func(core.Attrs, core.DType) unaryFns { return fns })
}

// registerBinary registers op's binaryKernel and keeps its functions.
func registerBinary(op string, fns binaryFns) {
	ewBinaryFns[op] = fns
	register(op, binaryKernel(fns))
}

// registerBinaryAttrs registers a binary op whose functions its
// attributes choose, and keeps them.
func registerBinaryAttrs(op string, build func(core.Attrs) binaryFns) {
	ewBinaryAttrFns[op] = build
	register(op, func(k *core.KernelCall) error { return binaryKernel(build(k.Attrs))(k) })
}

// ewThrough64 gives the float32 path of a float64 function: the result is the
// f64 result rounded once, exactly what the generic path writes.
func ewThrough64(f func(float64) float64) func(float32) float32 {
	return func(x float32) float32 { return float32(f(float64(x))) }
}

// ewTranscendental is the unaryFns of a float-result function.
func ewTranscendental(f func(float64) float64) unaryFns {
	return unaryFns{f: f, f32: ewThrough64(f), cost: 8}
}

func ewBool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func ewIdentityI64(x int64) int64 { return x }

func ewSignF64(x float64) float64 { return ewBool01(x > 0) - ewBool01(x < 0) }

func ewSignI64(x int64) int64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// ewMaxFinite is the largest finite value of a float dtype (nan_to_num's
// replacement for +inf).
func ewMaxFinite(d core.DType) float64 {
	switch d {
	case core.F16:
		return 65504
	case core.BF16:
		return 3.3895313892515355e38
	case core.F32:
		return math.MaxFloat32
	}
	return math.MaxFloat64
}

// ewBoundToI64 converts an integer-valued bound to int64, saturating.
func ewBoundToI64(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// clampFns limits to [min, max] with NaN propagating from x and from the
// bounds; min > max gives max. Integer tensors use the bounds rounded
// inward, which selects the same integers as the real-valued bounds.
func clampFns(a core.Attrs, _ core.DType) unaryFns {
	hasLo, hasHi := a.Has("min"), a.Has("max")
	lo, hi := a.Float("min"), a.Float("max")
	f := func(x float64) float64 {
		if hasLo && (x < lo || lo != lo) {
			x = lo
		}
		if hasHi && (x > hi || hi != hi) {
			x = hi
		}
		return x
	}
	loI, hiI := ewBoundToI64(math.Ceil(lo)), ewBoundToI64(math.Floor(hi))
	i := func(x int64) int64 {
		if hasLo && x < loI {
			x = loI
		}
		if hasHi && x > hiI {
			x = hiI
		}
		return x
	}
	// u64 bounds saturate into its range (a negative max gives 0).
	loU, hiU := uint64(numerics.FloatToInt(core.U64, math.Ceil(lo))), uint64(numerics.FloatToInt(core.U64, math.Floor(hi)))
	u := func(x uint64) uint64 {
		if hasLo && x < loU {
			x = loU
		}
		if hasHi && x > hiU {
			x = hiU
		}
		return x
	}
	lo32, hi32 := float32(lo), float32(hi)
	f32 := func(x float32) float32 {
		if hasLo && (x < lo32 || lo32 != lo32) {
			x = lo32
		}
		if hasHi && (x > hi32 || hi32 != hi32) {
			x = hi32
		}
		return x
	}
	return unaryFns{f: f, i: i, u: u, f32: f32}
}

func nanToNumFns(a core.Attrs, d core.DType) unaryFns {
	nan, posinf, neginf := a.Float("nan"), ewMaxFinite(d), -ewMaxFinite(d)
	if a.Has("posinf") {
		posinf = a.Float("posinf")
	}
	if a.Has("neginf") {
		neginf = a.Float("neginf")
	}
	f := func(x float64) float64 {
		switch {
		case x != x:
			return nan
		case math.IsInf(x, 1):
			return posinf
		case math.IsInf(x, -1):
			return neginf
		}
		return x
	}
	return unaryFns{f: f, i: ewIdentityI64, f32: ewThrough64(f)}
}

func init() {
	registerFixedUnary("neg", unaryFns{vec: unNeg, f: func(x float64) float64 { return -x },
		i: func(x int64) int64 { return -x }, f32: func(x float32) float32 { return -x }})
	registerFixedUnary("abs", unaryFns{vec: unAbs, f: math.Abs,
		i: func(x int64) int64 {
			if x < 0 {
				return -x
			}
			return x
		},
		u:   func(x uint64) uint64 { return x },
		f32: func(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }})
	registerFixedUnary("sign", unaryFns{f: ewSignF64, i: ewSignI64, f32: ewThrough64(ewSignF64),
		u: func(x uint64) uint64 { return uint64(min(x, 1)) }})
	registerFixedUnary("square", unaryFns{vec: unSquare, f: func(x float64) float64 { return x * x },
		i: func(x int64) int64 { return x * x }, f32: func(x float32) float32 { return x * x }})
	registerFixedUnary("exp", vectorised(unExp, ewTranscendental(math.Exp)))
	registerFixedUnary("expm1", ewTranscendental(math.Expm1))
	registerFixedUnary("log", vectorised(unLog, ewTranscendental(numerics.Log)))
	registerFixedUnary("log1p", ewTranscendental(math.Log1p))
	registerFixedUnary("sqrt", vectorised(unSqrt, ewTranscendental(math.Sqrt)))
	registerFixedUnary("rsqrt", ewTranscendental(func(x float64) float64 { return 1 / math.Sqrt(x) }))
	registerFixedUnary("reciprocal", ewTranscendental(func(x float64) float64 { return 1 / x }))
	registerFixedUnary("sin", vectorised(unSin, ewTranscendental(math.Sin)))
	registerFixedUnary("cos", vectorised(unCos, ewTranscendental(math.Cos)))
	registerFixedUnary("tan", ewTranscendental(math.Tan))
	registerFixedUnary("tanh", vectorised(unTanh, ewTranscendental(math.Tanh)))
	registerFixedUnary("erf", vectorised(unErf, ewTranscendental(math.Erf)))
	registerFixedUnary("floor", unaryFns{f: math.Floor, i: ewIdentityI64, f32: ewThrough64(math.Floor)})
	registerFixedUnary("ceil", unaryFns{f: math.Ceil, i: ewIdentityI64, f32: ewThrough64(math.Ceil)})
	registerFixedUnary("round", unaryFns{f: math.RoundToEven, i: ewIdentityI64, f32: ewThrough64(math.RoundToEven)})
	registerUnary("clamp", clampFns)
	registerUnary("nan_to_num", nanToNumFns)
}
