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

// registerUnary registers the kernels of lower.Unary's ops of one
// category; each category's file calls it for its own ops.
func registerUnary(category string) {
	for _, op := range lower.InCategory(lower.Unary, category) {
		register(op, unaryKernel(op, lower.Unary[op]))
	}
}

func init() { registerUnary("unary") }
