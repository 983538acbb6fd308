package webgpu

import (
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

func unaryKernel(op string, expr lower.UnaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		inT, ct := physical(in.DType()), physical(out.DType())
		if out.DType() == core.Bool {
			ct = inT
		}
		var sc lower.Scalars
		x := lower.Conv("x0", inT, ct)
		e := expr(x, ct, k.Attrs, &sc)
		if out.DType() != core.Bool {
			e = lower.Conv(e, ct, physical(out.DType()))
		}
		set := func(p *params) { p.setScalars(&sc) }
		return gpuOf(k).mapRunGuarded(op, k.Inputs[:1], out, e, i64UnaryGuards(op, in, out, x, k.Attrs), set)
	}
}

// castKernel converts between dtypes by core's rule: floats to integers
// truncate toward zero and saturate at the target's range, NaN to 0
// (core.FloatToInt); integers to narrower integers wrap (storeExpr);
// anything to bool tests nonzero. An i64 target is held in i32, so a value
// past i32 fails the cast.
func castKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	inT, outT := physical(in.DType()), physical(out.DType())
	e := lower.Conv("x0", inT, outT)
	var guards []guard
	switch {
	case out.DType() == core.Bool:
		e = lower.BoolOf(lower.Truthy("x0", inT))
	case inT == "f32" && outT != "f32":
		lo, hi := core.IntRange(out.DType())
		if out.DType() == core.I64 {
			lo, hi = math.MinInt32, math.MaxInt32
			guards = []guard{{"!is_nan(x0) && !(x0 >= -2147483648.0 && x0 < 2147483648.0)", errI64Range}}
		}
		e = lower.FloatToInt("x0", "f32", outT, lo, hi)
	case out.DType() == core.I64 && inT == "u32":
		guards = []guard{{"x0 > 2147483647u", errI64Range}}
	}
	return gpuOf(k).mapRunGuarded("cast", k.Inputs[:1], out, e, guards, nil)
}

// i64UnaryGuards fail a unary op whose i64 result leaves the i32 the GPU
// holds it in, given x, the input in the compute type (none when it
// cannot).
func i64UnaryGuards(op string, in, out *core.Tensor, x string, a core.Attrs) []guard {
	if out.DType() != core.I64 {
		return nil
	}
	var g string
	switch op {
	case "neg", "abs":
		g = x + " == i32(-2147483648)"
	case "square":
		g = "i_mul_ovf(" + x + ", " + x + ")"
	case "clamp":
		// A bound past i32 that takes effect makes every element that bound
		// (the slot holds it saturated at i32).
		if (a.Has("min") && a.Float("min") > math.MaxInt32) || (a.Has("max") && a.Float("max") < math.MinInt32) {
			g = "true"
		}
	}
	if physical(in.DType()) == "u32" { // a u32 past 2^31 is no i32
		g = joinGuards("x0 > 2147483647u", g)
	}
	if g == "" {
		return nil
	}
	return []guard{{g, errI64Range}}
}

// joinGuards is "a || b", either possibly empty.
func joinGuards(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return "(" + a + ") || (" + b + ")"
}

func init() {
	for op, e := range lower.Unary {
		register(op, unaryKernel(op, e))
	}
	register("cast", castKernel)
}
