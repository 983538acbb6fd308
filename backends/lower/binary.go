package lower

import "fmt"

// BinaryExpr builds an op's expression from a and b, both already in the
// compute type ct.
type BinaryExpr func(a, b, ct string) string

func infix(op string) BinaryExpr {
	return func(a, b, _ string) string { return "(" + a + " " + op + " " + b + ")" }
}

// Binary maps each arithmetic binary op to its expression.
var Binary = map[string]BinaryExpr{
	"add":   infix("+"),
	"sub":   infix("-"),
	"mul":   infix("*"),
	"div":   infix("/"),
	"atan2": func(a, b, _ string) string { return "m_atan2(" + a + ", " + b + ")" },
	"maximum": func(a, b, ct string) string {
		return fmt.Sprintf("select(%s, %s, %s > %s || %s)", a, b, b, a, IsNaN(b, ct))
	},
	"minimum": func(a, b, ct string) string {
		return fmt.Sprintf("select(%s, %s, %s < %s || %s)", a, b, b, a, IsNaN(b, ct))
	},
	"pow": func(a, b, ct string) string {
		switch {
		case IsFloat(ct):
			return "f_pow(" + a + ", " + b + ")"
		case IsSigned(ct):
			return "i_pow(" + a + ", " + b + ")"
		}
		return "bitcast<u32>(i_pow(bitcast<i32>(" + a + "), bitcast<i32>(" + b + ")))"
	},
	"floor_divide": func(a, b, ct string) string {
		switch {
		case IsFloat(ct):
			return "f_floordiv(" + a + ", " + b + ")"
		case IsSigned(ct):
			return "i_floordiv(" + a + ", " + b + ")"
		}
		return "(" + a + " / " + b + ")"
	},
	"remainder": func(a, b, ct string) string {
		switch {
		case IsFloat(ct):
			return "f_rem(" + a + ", " + b + ")"
		case IsSigned(ct):
			return "i_rem(" + a + ", " + b + ")"
		}
		return "(" + a + " % " + b + ")"
	},
	"bitwise_and":         infix("&"),
	"bitwise_or":          infix("|"),
	"bitwise_xor":         infix("^"),
	"bitwise_left_shift":  shiftLeft,
	"bitwise_right_shift": shiftRight,
}

// shiftCount is b as the unsigned count a shift of compute type ct takes,
// and the width of ct in bits. i64 exists on CUDA only, where u64 does too.
func shiftCount(b, ct string) (count string, bits int) {
	if ct == I64 {
		return "u64(" + b + ")", 64
	}
	return "u32(" + b + ")", 32
}

// shiftLeft is a << b as the CPU computes it: 0 for a count outside
// [0, bits) (WGSL would take the count modulo the width, C++ leaves it
// undefined, so the shifted count is masked and the result selected), and
// a signed value shifted as its unsigned bits, which C++ defines.
func shiftLeft(a, b, ct string) string {
	c, bits := shiftCount(b, ct)
	shifted := fmt.Sprintf("(%s << (%s & %du))", a, c, bits-1)
	if IsSigned(ct) {
		ut := map[string]string{I32: U32, I64: "u64"}[ct]
		shifted = fmt.Sprintf("%s(%s(%s) << (%s & %du))", ct, ut, a, c, bits-1)
	}
	return fmt.Sprintf("select(%s, %s, %s < %du)", Zero(ct), shifted, c, bits)
}

// shiftRight is a >> b as the CPU computes it: a count outside [0, bits)
// shifts every bit out, leaving the sign fill of a signed a and 0 of an
// unsigned one.
func shiftRight(a, b, ct string) string {
	c, bits := shiftCount(b, ct)
	if IsSigned(ct) {
		return fmt.Sprintf("(%s >> select(%s, %du, %s > %du))", a, c, bits-1, c, bits-1)
	}
	return fmt.Sprintf("select(%s, (%s >> (%s & %du)), %s < %du)", Zero(ct), a, c, bits-1, c, bits)
}

// IntDivisionByZero is the condition, over a and b in integer compute type
// ct, under which op has no integer result and fails as an integer division
// by zero: x // 0, x % 0 and 0 ** -n (which is 1 / 0^n); "" for an op that
// always has one. One rule for the three ops, on every backend (see
// core's floor_divide, remainder and pow).
func IntDivisionByZero(op, a, b, ct string) string {
	switch op {
	case "floor_divide", "remainder":
		return b + " == " + Zero(ct)
	case "pow":
		if IsSigned(ct) {
			return a + " == " + Zero(ct) + " && " + b + " < " + Zero(ct)
		}
	}
	return ""
}

// Compare maps the comparison ops to their infix operators.
var Compare = map[string]string{"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

// CompareExpr is the comparison op of a and b as an expression. ne is
// !(a == b), not a != b: Naga lowers != on floats to SPIR-V's ordered
// not-equal, which lavapipe (and any driver keeping the SPIR-V meaning)
// makes false when an operand is NaN, where IEEE 754, NumPy and the CPU
// say true; == is false on NaN everywhere, so its negation is the IEEE
// !=. In CUDA C the two spellings are the same.
func CompareExpr(op, a, b string) string {
	if op == "ne" {
		return "(!(" + a + " == " + b + "))"
	}
	return "(" + a + " " + Compare[op] + " " + b + ")"
}

// Logical maps the logical binary ops to the operator joining their
// operands' truth values.
var Logical = map[string]string{"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}

// CompareType is the type two operands are compared in: their own when
// they share it, else f32 (f64 when either is f64).
func CompareType(ta, tb string) string {
	switch {
	case ta == tb:
		return ta
	case ta == F64 || tb == F64:
		return F64
	}
	return F32
}

// Where picks a (of type ta) where cond (a u32 bool) is set, else b, in
// the compute type ct.
func Where(cond, a, ta, b, tb, ct string) string {
	return fmt.Sprintf("select(%s, %s, %s != 0u)", Conv(b, tb, ct), Conv(a, ta, ct), cond)
}
