//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// The elementwise ops take their expressions from backends/lower, where
// the WebGPU backend finds them too: one description, two targets.

func cudaOf(k *core.KernelCall) *Backend { return k.Backend.(*Backend) }

func unaryKernel(op string, expr lower.UnaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		inT, ct := computeType(in.DType()), computeType(out.DType())
		if out.DType() == core.Bool {
			ct = inT
		}
		var sc lower.Scalars
		e := expr(lower.Conv("x0", inT, ct), ct, k.Attrs, &sc)
		return cudaOf(k).mapRun(op, k.Inputs[:1], out, e, &sc)
	}
}

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

func compareKernel(op, sym string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := computeType(k.Inputs[0].DType()), computeType(k.Inputs[1].DType())
		ct := lower.CompareType(ta, tb)
		e := lower.BoolOf(lower.Conv("x0", ta, ct) + " " + sym + " " + lower.Conv("x1", tb, ct))
		return cudaOf(k).mapRun(op, k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func logicalKernel(op, sym string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := computeType(k.Inputs[0].DType()), computeType(k.Inputs[1].DType())
		e := lower.BoolOf(lower.Truthy("x0", ta) + " " + sym + " " + lower.Truthy("x1", tb))
		return cudaOf(k).mapRun(op, k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func whereKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ct := computeType(out.DType())
	ta, tb := computeType(k.Inputs[1].DType()), computeType(k.Inputs[2].DType())
	return cudaOf(k).mapRun("where", k.Inputs[:3], out, lower.Where("x0", "x1", ta, "x2", tb, ct), nil)
}

// castKernel converts by core's rule (core.FloatToInt): a float becomes
// an integer truncated toward zero and saturated at the target's range,
// NaN giving 0, written with lower.FloatToInt so that no conversion sees
// a value outside its type (C++ leaves that undefined); integers to
// narrower integers wrap like a C cast; anything to bool tests nonzero
// (NaN is nonzero).
func castKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	inT, ct := computeType(in.DType()), computeType(out.DType())
	e := "x0"
	if lower.IsFloat(inT) && !out.DType().IsFloat() && out.DType() != core.Bool {
		lo, hi := core.IntRange(out.DType())
		e = lower.FloatToInt("x0", inT, ct, lo, hi)
	}
	return cudaOf(k).mapRun("cast", k.Inputs[:1], out, e, nil)
}

func geluBackwardKernel(k *core.KernelCall) error {
	ct := computeType(k.Outputs[0].DType())
	g := lower.Conv("x0", computeType(k.Inputs[0].DType()), ct)
	x := lower.Conv("x1", computeType(k.Inputs[1].DType()), ct)
	return cudaOf(k).mapRun("_gelu_backward", k.Inputs[:2], k.Outputs[0], lower.GeluGrad(g, x, k.Attrs), nil)
}

func init() {
	for op, e := range lower.Unary {
		register(op, unaryKernel(op, e))
	}
	for op, e := range lower.Binary {
		register(op, binaryKernel(op, e))
	}
	for op, sym := range lower.Compare {
		register(op, compareKernel(op, sym))
	}
	for op, sym := range lower.Logical {
		register(op, logicalKernel(op, sym))
	}
	register("where", whereKernel)
	register("cast", castKernel)
	register("_gelu_backward", geluBackwardKernel)
}
