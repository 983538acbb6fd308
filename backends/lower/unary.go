package lower

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// UnaryExpr builds an op's expression from v, the input already in the
// compute type ct; it may put attributes in scalar slots through s.
type UnaryExpr func(v, ct string, a core.Attrs, s *Scalars) string

// floatOnly applies f to floats and leaves integers unchanged.
func floatOnly(f func(v string) string) UnaryExpr {
	return func(v, ct string, _ core.Attrs, _ *Scalars) string {
		if !IsFloat(ct) {
			return v
		}
		return f(v)
	}
}

func call(name string) UnaryExpr {
	return func(v, _ string, _ core.Attrs, _ *Scalars) string { return name + "(" + v + ")" }
}

// Unary maps each unary and activation op to its expression.
var Unary = map[string]UnaryExpr{
	"neg": func(v, ct string, _ core.Attrs, _ *Scalars) string {
		if ct == U32 {
			return "(0u - " + v + ")"
		}
		return "(-" + v + ")"
	},
	"abs": func(v, ct string, _ core.Attrs, _ *Scalars) string {
		if ct == U32 {
			return v
		}
		return "abs(" + v + ")"
	},
	"sign": func(v, ct string, _ core.Attrs, _ *Scalars) string {
		if IsFloat(ct) {
			// m_sgn reads the bits, where lavapipe turned the select chain
			// below into its sign instruction, which gave sign(+0) = -0;
			// NaN gives 0, as PyTorch's sign.
			return fmt.Sprintf("select(m_sgn(%s), %s, %s)", v, Zero(ct), IsNaN(v, ct))
		}
		z, one := Zero(ct), One(ct)
		neg := literal(ct, -1)
		if ct == U32 {
			neg = z
		}
		return fmt.Sprintf("select(select(%s, %s, %s < %s), %s, %s > %s)", z, neg, v, z, one, v, z)
	},
	"exp":        call("m_exp"),
	"expm1":      call("m_expm1"),
	"log":        call("m_log"),
	"log1p":      call("m_log1p"),
	"sqrt":       call("m_sqrt"),
	"rsqrt":      func(v, _ string, _ core.Attrs, _ *Scalars) string { return "(1.0 / m_sqrt(" + v + "))" },
	"square":     func(v, _ string, _ core.Attrs, _ *Scalars) string { return "(" + v + " * " + v + ")" },
	"reciprocal": func(v, _ string, _ core.Attrs, _ *Scalars) string { return "(1.0 / " + v + ")" },
	"sin":        func(v, _ string, _ core.Attrs, _ *Scalars) string { return trig("sin", v) },
	"cos":        func(v, _ string, _ core.Attrs, _ *Scalars) string { return trig("cos", v) },
	"tan":        func(v, _ string, _ core.Attrs, _ *Scalars) string { return trig("tan", v) },
	"tanh":       call("m_tanh"),
	"erf":        call("m_erf"),
	"sigmoid":    call("m_sigmoid"),
	"relu": func(v, ct string, _ core.Attrs, _ *Scalars) string {
		z := Zero(ct)
		return fmt.Sprintf("select(%s, %s, %s > %s || %s)", z, v, v, z, IsNaN(v, ct))
	},
	"gelu": func(v, _ string, a core.Attrs, _ *Scalars) string {
		if a.String("approximate") == "tanh" {
			return fmt.Sprintf("(%s * m_sigmoid(1.5957691216 * (%s + 0.044715 * %s * %s * %s)))", v, v, v, v, v)
		}
		return fmt.Sprintf("(0.5 * %s * m_erfc(-%s * 0.70710678118))", v, v)
	},
	"silu":  func(v, _ string, _ core.Attrs, _ *Scalars) string { return "(" + v + " * m_sigmoid(" + v + "))" },
	"floor": floatOnly(func(v string) string { return "floor(" + v + ")" }),
	"ceil":  floatOnly(func(v string) string { return "ceil(" + v + ")" }),
	"round": floatOnly(func(v string) string { return "round(" + v + ")" }),
	"clamp": clampExpr,
	"nan_to_num": func(v, ct string, a core.Attrs, s *Scalars) string {
		if !IsFloat(ct) {
			return v
		}
		big := math.MaxFloat32
		if ct == F64 {
			big = math.MaxFloat64
		}
		s.SetF(0, a.Float("nan"))
		s.SetF(1, big)
		s.SetF(2, -big)
		if a.Has("posinf") {
			s.SetF(1, a.Float("posinf"))
		}
		if a.Has("neginf") {
			s.SetF(2, a.Float("neginf"))
		}
		return fmt.Sprintf("select(select(select(%s, pf(2u), is_inf(%s) && %s < 0.0), pf(1u), is_inf(%s) && %s > 0.0), pf(0u), is_nan(%s))", v, v, v, v, v, v)
	},
	"logical_not": func(v, ct string, _ core.Attrs, _ *Scalars) string { return BoolOf("!" + Truthy(v, ct)) },
	"isnan":       func(v, ct string, _ core.Attrs, _ *Scalars) string { return BoolOf(IsNaN(v, ct)) },
	"isinf": func(v, ct string, _ core.Attrs, _ *Scalars) string {
		if !IsFloat(ct) {
			return "0u"
		}
		return BoolOf("is_inf(" + v + ")")
	},
	"contiguous": func(v, _ string, _ core.Attrs, _ *Scalars) string { return v },
}

func trig(f, v string) string {
	return fmt.Sprintf("select(m_%s(%s), f_nan(), m_trig_arg(%s))", f, v, v)
}

// clampExpr limits to [min, max]; NaN in x or a bound propagates, and
// integer tensors use the bounds rounded inward (as the CPU kernel does),
// limited to the compute type's range.
func clampExpr(v, ct string, a core.Attrs, s *Scalars) string {
	e := v
	if IsFloat(ct) {
		if a.Has("min") {
			s.SetF(0, a.Float("min"))
			e = fmt.Sprintf("select(%s, pf(0u), %s < pf(0u) || is_nan(pf(0u)))", e, e)
		}
		if a.Has("max") {
			s.SetF(1, a.Float("max"))
			e = fmt.Sprintf("select(%s, pf(1u), %s > pf(1u) || is_nan(pf(1u)))", e, e)
		}
		return e
	}
	bound := func(slot int, f float64) {
		switch ct {
		case U32:
			s.SetU(slot, uint32(max(0, min(f, math.MaxUint32))))
		case I64:
			// float64 cannot hold MaxInt64; 2^63 itself is out of range.
			switch {
			case f >= math.MaxInt64:
				s.SetI(slot, math.MaxInt64)
			case f <= math.MinInt64:
				s.SetI(slot, math.MinInt64)
			default:
				s.SetI(slot, int64(f))
			}
		default:
			s.SetI(slot, int64(max(math.MinInt32, min(f, math.MaxInt32))))
		}
	}
	get := "pi"
	if ct == U32 {
		get = "pu"
	}
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

// GeluGrad is g * gelu'(x) over the expressions g and x.
func GeluGrad(g, x string, a core.Attrs) string {
	if a.String("approximate") == "tanh" {
		return "(" + g + " * m_gelu_tanh_grad(" + x + "))"
	}
	return "(" + g + " * (0.5 * m_erfc(-(" + x + ") * 0.70710678118) + (" + x + ") * m_exp(-0.5 * (" + x + ") * (" + x + ")) * 0.3989422804))"
}
