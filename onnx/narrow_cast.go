package onnx

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// Conversions onto the narrow types (narrow.go), written with registry
// ops so they run on any device and a traced graph keeps them: the
// rounding onto a float8 or float4 grid is exact arithmetic on powers of
// two (comparisons, a division and a multiplication by the grid's step,
// round-half-even), never a read of the values on the host.

// castTo converts x, a tensor holding values of any element type, to
// element type to, as ONNX's Cast does: saturate (float8 only) and
// roundMode (FLOAT8E8M0 only) are Cast's attributes.
func castTo(x *core.Tensor, to elemType, saturate bool, roundMode string) (*core.Tensor, error) {
	nt := narrowOf(to)
	if nt == nil {
		dt, err := dtypeOf(int32(to))
		if err != nil {
			return nil, err
		}
		return x.Cast(dt), nil
	}
	if x.Err() != nil {
		return x, nil
	}
	switch {
	case nt.float != nil && nt.float.kind == exponentOnly:
		y, err := roundE8M0(workFloat(x), nt.float, saturate, roundMode)
		if err != nil {
			return nil, err
		}
		return y.Cast(core.F32), nil
	case nt.float != nil:
		// FLOAT4E2M1 has no NaN or infinity to overflow to: it always
		// saturates (ONNX's float4.md), whatever the attribute says.
		return roundFloat(workFloat(x), nt.float, saturate || nt.float.kind == finiteOnly).Cast(core.F32), nil
	case x.DType().IsFloat():
		return floatToNarrowInt(x, nt), nil
	}
	return wrapInt(x, nt), nil
}

// conform brings an operator's result back onto the narrow type its
// inputs had (uint16 sums wrap at 2^16); values already of the type are
// unchanged.
func conform(t *core.Tensor, et elemType) (*core.Tensor, error) {
	nt := narrowOf(et)
	if nt == nil || t.Err() != nil {
		return t, nil
	}
	if t.DType() != nt.held {
		return nil, fmt.Errorf("a %s value is held as %s, want %s", typeName(et), t.DType(), nt.held)
	}
	if nt.bits == 64 {
		return t, nil // uint64 wraps at 2^64 as i64 does: the same bits
	}
	return castTo(t, et, true, "up")
}

// workFloat is x in the float dtype the rounding runs in: f64 for f64 and,
// on the CPU, for integers wider than f32's 24-bit significand (so the
// rounding is done once, on the exact value); f32 otherwise (the GPU has
// no f64; f16 and bf16 widen to f32 exactly).
func workFloat(x *core.Tensor) *core.Tensor {
	switch d := x.DType(); {
	case d == core.F64:
		return x
	case (d == core.I64 || d == core.I32 || d == core.U32) && x.Device() == core.CPU:
		return x.Cast(core.F64)
	}
	return x.Cast(core.F32)
}

// binade is, elementwise, the largest power of two 2^e <= a with e in
// [lo, hi], clamped to those ends: a binary search over the exponent (one
// comparison and select per bit of hi-lo), exact since every step is a
// multiplication by a power of two. Steps above 2^64 are taken as two
// multiplications, so their constant is finite in f32.
func binade(a *core.Tensor, lo, hi int) *core.Tensor {
	p := like(a, math.Ldexp(1, lo))
	step := 1
	for step*2 <= hi-lo {
		step *= 2
	}
	for ; step >= 1; step /= 2 {
		thr := p
		for left := step; left > 0; left -= min(left, 64) {
			thr = call("mul", nil, thr, like(a, math.Ldexp(1, min(left, 64))))
		}
		p = call("where", nil, call("ge", nil, a, thr), thr, p)
	}
	return call("minimum", nil, p, like(a, math.Ldexp(1, hi)))
}

// roundFloat rounds x to the nearest value of format f, ties to even, with
// ONNX's Cast rules for what does not fit: with saturate, magnitudes past
// the largest finite value (infinities too) become it; without, they
// become infinity where f has one (E5M2) and NaN where it does not. NaN
// stays NaN, except in FLOAT4E2M1, which has none and maps it to +6 as
// ONNX's float4.md says. -0 becomes +0 in the FNUZ types, which have no
// negative zero.
func roundFloat(x *core.Tensor, f *floatFormat, saturate bool) *core.Tensor {
	a := call("abs", nil, x)
	step := call("mul", nil, binade(a, f.emin, f.emax), like(x, math.Ldexp(1, -f.mantBits)))
	r := call("mul", nil, call("round", nil, call("div", nil, a, step)), step)
	over := call("gt", nil, r, like(r, f.max))
	switch {
	case saturate:
		r = call("where", nil, over, like(r, f.max), r)
	case f.hasInf:
		r = call("where", nil, over, like(r, math.Inf(1)), r)
	default:
		r = call("where", nil, over, like(r, math.NaN()), r)
	}
	y := call("copysign", nil, r, x)
	if !f.neg {
		y = call("where", nil, call("eq", nil, y, like(y, 0)), like(y, 0), y)
	}
	if !f.hasNaN {
		y = call("where", nil, call("isnan", nil, x), like(y, f.max), y)
	}
	return y
}

// roundE8M0 rounds |x| to a power of two in [2^-127, 2^127] (FLOAT8E8M0
// has no sign and no zero; ONNX leaves negative inputs unspecified and its
// reference uses the magnitude): "up" to the next power at or above,
// "down" to the one at or below, "nearest" to the nearer one, ties up.
// Out of range (zero and tiny values, except where "up" reaches 2^-127;
// infinities and values rounding past 2^127) saturates to the nearer end
// with saturate and is NaN without, as Cast's E8M0 table gives.
func roundE8M0(x *core.Tensor, f *floatFormat, saturate bool, mode string) (*core.Tensor, error) {
	a := call("abs", nil, x)
	lowest, highest := math.Ldexp(1, f.emin), math.Ldexp(1, f.emax)
	p := binade(a, f.emin, f.emax)
	two := like(p, 2)
	var r, low *core.Tensor
	switch mode {
	case "up":
		r = call("where", nil, call("gt", nil, a, p), call("mul", nil, p, two), p)
		low = call("eq", nil, a, like(a, 0))
	case "down":
		r = p
		low = call("lt", nil, a, like(a, lowest))
	case "nearest":
		r = call("where", nil, call("ge", nil, a, call("mul", nil, p, like(p, 1.5))), call("mul", nil, p, two), p)
		low = call("lt", nil, a, like(a, lowest))
	default:
		return nil, fmt.Errorf("round_mode %q is not one of up, down, nearest", mode)
	}
	high := call("logical_or", nil, call("gt", nil, r, like(r, highest)), call("isinf", nil, a))
	if saturate {
		r = call("where", nil, low, like(r, lowest), r)
		r = call("where", nil, high, like(r, highest), r)
	} else {
		r = call("where", nil, call("logical_or", nil, low, high), like(r, math.NaN()), r)
	}
	return call("where", nil, call("isnan", nil, x), like(r, math.NaN()), r), nil
}

// floatToNarrowInt truncates toward zero. ONNX leaves out-of-range values
// undefined: uint16 saturates, as webtensor's float-to-integer casts do;
// the 4- and 2-bit types give 0, as ONNX's reference (ml_dtypes) does.
// NaN gives 0.
func floatToNarrowInt(x *core.Tensor, nt *narrowType) *core.Tensor {
	if nt.bits == 64 {
		return x.Cast(core.I64)
	}
	t := x.Cast(core.I32)
	if nt.bits == 16 {
		return call("clamp", core.Attrs{"min": float64(nt.lo), "max": float64(nt.hi)}, t).Cast(nt.held)
	}
	in := call("logical_and", nil, call("gt", nil, x, like(x, float64(nt.lo-1))), call("lt", nil, x, like(x, float64(nt.hi+1))))
	return call("where", nil, in, t, like(t, 0)).Cast(nt.held)
}

// wrapInt converts integers (and bools) to a narrow integer type by
// keeping the low bits, two's complement for the signed types, as ONNX's
// Cast does between fixed-point types.
func wrapInt(x *core.Tensor, nt *narrowType) *core.Tensor {
	if nt.bits == 64 {
		return x.Cast(core.I64)
	}
	w := x.Cast(core.I32)
	if nt.lo != 0 {
		w = call("sub", nil, w, like(w, float64(nt.lo)))
	}
	w = call("remainder", nil, w, like(w, float64(int64(1)<<nt.bits)))
	if nt.lo != 0 {
		w = call("add", nil, w, like(w, float64(nt.lo)))
	}
	return w.Cast(nt.held)
}
