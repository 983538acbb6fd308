package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// unaryExpr builds an op's WGSL expression from v, the input already in the
// compute type ct ("f32", "i32" or "u32"); it may put attributes in scalar
// slots through p.
type unaryExpr func(v, ct string, a core.Attrs, p *params) string

// floatOnly applies f to floats and leaves integers unchanged.
func floatOnly(f func(v string) string) unaryExpr {
	return func(v, ct string, _ core.Attrs, _ *params) string {
		if ct != "f32" {
			return v
		}
		return f(v)
	}
}

func fn(name string) unaryExpr {
	return func(v, _ string, _ core.Attrs, _ *params) string { return name + "(" + v + ")" }
}

var unaryExprs = map[string]unaryExpr{
	"neg": func(v, ct string, _ core.Attrs, _ *params) string {
		if ct == "u32" {
			return "(0u - " + v + ")"
		}
		return "(-" + v + ")"
	},
	"abs": func(v, ct string, _ core.Attrs, _ *params) string {
		if ct == "u32" {
			return v
		}
		return "abs(" + v + ")"
	},
	"sign": func(v, ct string, _ core.Attrs, _ *params) string {
		z := zeroOf(ct)
		one := map[string]string{"f32": "1.0", "i32": "1", "u32": "1u"}[ct]
		neg := map[string]string{"f32": "-1.0", "i32": "-1", "u32": "0u"}[ct]
		return fmt.Sprintf("select(select(%s, %s, %s < %s), %s, %s > %s)", z, neg, v, z, one, v, z)
	},
	"exp":        fn("m_exp"),
	"expm1":      fn("m_expm1"),
	"log":        fn("m_log"),
	"log1p":      fn("m_log1p"),
	"sqrt":       fn("m_sqrt"),
	"rsqrt":      func(v, _ string, _ core.Attrs, _ *params) string { return "(1.0 / m_sqrt(" + v + "))" },
	"square":     func(v, _ string, _ core.Attrs, _ *params) string { return "(" + v + " * " + v + ")" },
	"reciprocal": func(v, _ string, _ core.Attrs, _ *params) string { return "(1.0 / " + v + ")" },
	"sin":        func(v, _ string, _ core.Attrs, _ *params) string { return trig("sin", v) },
	"cos":        func(v, _ string, _ core.Attrs, _ *params) string { return trig("cos", v) },
	"tan":        func(v, _ string, _ core.Attrs, _ *params) string { return trig("tan", v) },
	"tanh":       fn("m_tanh"),
	"erf":        fn("m_erf"),
	"sigmoid":    fn("m_sigmoid"),
	"relu": func(v, ct string, _ core.Attrs, _ *params) string {
		z := zeroOf(ct)
		return fmt.Sprintf("select(%s, %s, %s > %s || %s)", z, v, v, z, isNaN(v, ct))
	},
	"leaky_relu": func(v, _ string, a core.Attrs, p *params) string {
		p.setF(0, a.Float("negative_slope"))
		return fmt.Sprintf("select(pf(0u) * %s, %s, %s > 0.0)", v, v, v)
	},
	"elu": func(v, _ string, a core.Attrs, p *params) string {
		p.setF(0, a.Float("alpha"))
		return fmt.Sprintf("select(pf(0u) * m_expm1(%s), %s, %s > 0.0 || is_nan(%s))", v, v, v, v)
	},
	"gelu": func(v, _ string, a core.Attrs, _ *params) string {
		if a.String("approximate") == "tanh" {
			return fmt.Sprintf("(%s * m_sigmoid(1.5957691216 * (%s + 0.044715 * %s * %s * %s)))", v, v, v, v, v)
		}
		return fmt.Sprintf("(0.5 * %s * m_erfc(-%s * 0.70710678118))", v, v)
	},
	"silu": func(v, _ string, _ core.Attrs, _ *params) string { return "(" + v + " * m_sigmoid(" + v + "))" },
	"softplus": func(v, _ string, a core.Attrs, p *params) string {
		p.setF(0, a.Float("beta"))
		p.setF(1, a.Float("threshold"))
		return fmt.Sprintf("select(m_log1p(m_exp(%s * pf(0u))) / pf(0u), %s, %s * pf(0u) > pf(1u))", v, v, v)
	},
	"floor": floatOnly(func(v string) string { return "floor(" + v + ")" }),
	"ceil":  floatOnly(func(v string) string { return "ceil(" + v + ")" }),
	"round": floatOnly(func(v string) string { return "round(" + v + ")" }),
	"clamp": clampExpr,
	"nan_to_num": func(v, ct string, a core.Attrs, p *params) string {
		if ct != "f32" {
			return v
		}
		p.setF(0, a.Float("nan"))
		p.setF(1, math.MaxFloat32)
		p.setF(2, -math.MaxFloat32)
		if a.Has("posinf") {
			p.setF(1, a.Float("posinf"))
		}
		if a.Has("neginf") {
			p.setF(2, a.Float("neginf"))
		}
		return fmt.Sprintf("select(select(select(%s, pf(2u), is_inf(%s) && %s < 0.0), pf(1u), is_inf(%s) && %s > 0.0), pf(0u), is_nan(%s))", v, v, v, v, v, v)
	},
	"logical_not": func(v, ct string, _ core.Attrs, _ *params) string { return boolOf("!" + truthy(v, ct)) },
	"isnan":       func(v, ct string, _ core.Attrs, _ *params) string { return boolOf(isNaN(v, ct)) },
	"isinf": func(v, ct string, _ core.Attrs, _ *params) string {
		if ct != "f32" {
			return "0u"
		}
		return boolOf("is_inf(" + v + ")")
	},
	"contiguous": func(v, _ string, _ core.Attrs, _ *params) string { return v },
}

func trig(f, v string) string {
	return fmt.Sprintf("select(m_%s(%s), f_nan(), m_trig_arg(%s))", f, v, v)
}

func isNaN(v, ct string) string {
	if ct != "f32" {
		return "false"
	}
	return "is_nan(" + v + ")"
}

// clampExpr limits to [min, max]; NaN in x or a bound propagates, and
// integer tensors use the bounds rounded inward (as the CPU kernel does).
func clampExpr(v, ct string, a core.Attrs, p *params) string {
	e := v
	if ct == "f32" {
		if a.Has("min") {
			p.setF(0, a.Float("min"))
			e = fmt.Sprintf("select(%s, pf(0u), %s < pf(0u) || is_nan(pf(0u)))", e, e)
		}
		if a.Has("max") {
			p.setF(1, a.Float("max"))
			e = fmt.Sprintf("select(%s, pf(1u), %s > pf(1u) || is_nan(pf(1u)))", e, e)
		}
		return e
	}
	bound := func(slot int, f float64) {
		if ct == "u32" {
			p.setU(slot, uint32(max(0, min(f, math.MaxUint32))))
		} else {
			p.setI(slot, int(max(math.MinInt32, min(f, math.MaxInt32))))
		}
	}
	get := map[string]string{"i32": "pi", "u32": "pu"}[ct]
	if a.Has("min") {
		bound(0, math.Ceil(a.Float("min")))
		e = fmt.Sprintf("max(%s, %s(0u))", e, get)
	}
	if a.Has("max") {
		bound(1, math.Floor(a.Float("max")))
		e = fmt.Sprintf("min(%s, %s(1u))", e, get)
	}
	return e
}

func unaryKernel(op string, expr unaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		inT, ct := physical(in.DType()), physical(out.DType())
		if out.DType() == core.Bool {
			ct = inT
		}
		var prm params
		e := expr(conv("x0", inT, ct), ct, k.Attrs, &prm)
		if out.DType() != core.Bool {
			e = conv(e, ct, physical(out.DType()))
		}
		return gpuOf(k).mapRun(k.Inputs[:1], out, e, func(p *params) { *p = prm })
	}
}

// castKernel converts between dtypes with NumPy's astype rules: floats to
// integers truncate toward zero, anything to bool tests nonzero, and narrow
// integer targets wrap (storeExpr).
func castKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	inT, outT := physical(in.DType()), physical(out.DType())
	e := conv("x0", inT, outT)
	switch {
	case out.DType() == core.Bool:
		e = boolOf(truthy("x0", inT))
	case inT == "f32" && outT == "u32":
		e = "select(u32(trunc(x0)), bitcast<u32>(i32(trunc(x0))), x0 < 0.0)"
	case inT == "f32" && outT == "i32":
		e = "i32(trunc(x0))"
	}
	return gpuOf(k).mapRun(k.Inputs[:1], out, e, nil)
}

func init() {
	for op, e := range unaryExprs {
		register(op, unaryKernel(op, e))
	}
	register("cast", castKernel)
}
