//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Integer division by zero fails the op, as on the CPU: x // 0, x % 0 and
// 0 ** -n (lower.IntDivisionByZero states the one rule).
func divisionByZero(op, a, b, ct string) *guard {
	cond := lower.IntDivisionByZero(op, a, b, ct)
	if cond == "" || lower.IsFloat(ct) {
		return nil
	}
	msg := "integer division by zero"
	if op == "pow" {
		msg += ": 0 to a negative power has no integer value"
	}
	return &guard{cond: cond, msg: func(uint32, int64, int64) string { return msg }}
}

func binaryKernel(op string, expr lower.BinaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		ct := computeType(out.DType())
		ta, tb := computeType(a.DType()), computeType(b.DType())
		x0, x1 := lower.Conv("x0", ta, ct), lower.Conv("x1", tb, ct)
		return cudaOf(k).mapRunGuarded(op, k.Inputs[:2], out, expr(x0, x1, ct), nil, divisionByZero(op, x0, x1, ct))
	}
}

func whereKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ct := computeType(out.DType())
	ta, tb := computeType(k.Inputs[1].DType()), computeType(k.Inputs[2].DType())
	return cudaOf(k).mapRun("where", k.Inputs[:3], out, lower.Where("x0", "x1", ta, "x2", tb, ct), nil)
}

func init() {
	for op, e := range lower.Binary {
		register(op, binaryKernel(op, e))
	}
	register("where", whereKernel)
}
