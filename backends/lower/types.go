package lower

import (
	"math"
	"strconv"
	"strings"
)

// Compute types of the dialect.
const (
	F32 = "f32"
	F64 = "f64"
	I32 = "i32"
	I64 = "i64"
	U32 = "u32"
)

// IsFloat reports whether ct is a floating-point compute type.
func IsFloat(ct string) bool { return ct == F32 || ct == F64 }

// IsSigned reports whether ct is a signed integer compute type.
func IsSigned(ct string) bool { return ct == I32 || ct == I64 }

// Conv converts the value v of compute type from to type to.
func Conv(v, from, to string) string {
	if from == to {
		return v
	}
	return to + "(" + v + ")"
}

// BoolOf turns a dialect bool expression into the u32 that stores a bool.
func BoolOf(cond string) string { return "select(0u, 1u, " + cond + ")" }

// Truthy is the condition "v is nonzero" for a compute type (NaN is
// nonzero, like Python's bool(float('nan'))).
func Truthy(v, ct string) string {
	switch {
	case IsFloat(ct):
		return "(" + v + " != 0.0 || is_nan(" + v + "))"
	case IsSigned(ct):
		return "(" + v + " != 0)"
	}
	return "(" + v + " != 0u)"
}

// Zero is the literal zero of a compute type.
func Zero(ct string) string { return literal(ct, 0) }

// One is the literal one of a compute type.
func One(ct string) string { return literal(ct, 1) }

// literal writes a small whole number n in type ct.
func literal(ct string, n int) string {
	s := strconv.Itoa(n)
	switch {
	case IsFloat(ct):
		return s + ".0"
	case IsSigned(ct):
		return s
	}
	if n < 0 {
		return "(0u - " + strconv.Itoa(-n) + "u)"
	}
	return s + "u"
}

// IsNaN is the condition "v is NaN" (always false for integers).
func IsNaN(v, ct string) string {
	if !IsFloat(ct) {
		return "false"
	}
	return "is_nan(" + v + ")"
}

// F32Literal writes a constant as an f32 expression.
func F32Literal(v float64) string {
	switch {
	case math.IsNaN(v):
		return "f_nan()"
	case math.IsInf(v, 1):
		return "f_inf()"
	case math.IsInf(v, -1):
		return "(-f_inf())"
	}
	s := strconv.FormatFloat(float64(float32(v)), 'g', -1, 32)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return "f32(" + s + ")"
}
