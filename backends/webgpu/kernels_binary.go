package webgpu

import (
	"errors"
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

func binaryKernel(op string, expr lower.BinaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		ct := physical(out.DType())
		ta, tb := physical(a.DType()), physical(b.DType())
		x, y := lower.Conv("x0", ta, ct), lower.Conv("x1", tb, ct)
		e := expr(x, y, ct)
		var guards []guard
		if ct != "f32" {
			guards = append(guards, intDivisionGuards(op, x, y, ct)...)
		}
		if g := i64BinaryGuard(op, a, b, out, x, y); g != "" {
			guards = append(guards, guard{g, errI64Range})
		}
		return gpuOf(k).mapRunGuarded(op, k.Inputs[:2], out, e, guards, nil)
	}
}

// errIntDivisionByZero is the CPU backend's error for an integer division
// with no integer result.
var errIntDivisionByZero = errors.New("integer division by zero")

// intDivisionGuards fail the integer divisions that have no integer
// result (lower.IntDivisionByZero): x // 0, x % 0 and 0 ** -n.
func intDivisionGuards(op, x, y, ct string) []guard {
	cond := lower.IntDivisionByZero(op, x, y, ct)
	switch {
	case cond == "":
		return nil
	case op == "pow":
		return []guard{{cond, errZeroToNegativePower}}
	}
	return []guard{{cond, errIntDivisionByZero}}
}

// errZeroToNegativePower is 0 ** -n on integers.
var errZeroToNegativePower = errors.New("integer division by zero: 0 to a negative power has no integer value")

// i64BinaryGuard is the condition under which a binary op's i64 result
// (res) leaves the i32 the GPU holds it in, given its operands x and y in
// the compute type; "" when it cannot.
func i64BinaryGuard(op string, a, b, out *core.Tensor, x, y string) string {
	if out.DType() != core.I64 {
		return ""
	}
	var g string
	switch op {
	case "add":
		g = "i_add_ovf(" + x + ", " + y + ", res)"
	case "sub":
		g = "i_sub_ovf(" + x + ", " + y + ", res)"
	case "mul":
		g = "i_mul_ovf(" + x + ", " + y + ")"
	case "pow":
		g = "i_pow_ovf(" + x + ", " + y + ")"
	case "floor_divide":
		g = x + " == i32(-2147483648) && " + y + " == -1"
	case "bitwise_left_shift":
		// Bits shifted past the i32 the GPU holds (a count of 32 to 63, or
		// a shift that does not undo); counts outside [0, 64) give 0.
		g = fmt.Sprintf("%s != 0 && u32(%s) < 64u && (u32(%s) > 31u || (res >> u32(%s)) != %s)", x, y, y, y, x)
	}
	for i, t := range []*core.Tensor{a, b} { // a u32 past 2^31 is no i32
		if physical(t.DType()) == "u32" {
			g = joinGuards(fmt.Sprintf("x%d > 2147483647u", i), g)
		}
	}
	return g
}

// whereKernel picks a where cond is true, else b.
func whereKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ct := physical(out.DType())
	ta, tb := physical(k.Inputs[1].DType()), physical(k.Inputs[2].DType())
	e := lower.Where("x0", "x1", ta, "x2", tb, ct)
	return gpuOf(k).mapRun(k.Inputs[:3], out, e, nil)
}

func init() {
	for op, e := range lower.Binary {
		register(op, binaryKernel(op, e))
	}
	register("where", whereKernel)
}
