//go:build linux && cgo

package cuda

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Reductions accumulate floats in f64 and integers in i64 whatever their
// storage (a GPU does f64 adds at memory speed here), so long f32 sums
// match the CPU's f64 accumulation.

// accType is the accumulation type of a compute type.
func accType(ct string) string {
	switch {
	case lower.IsFloat(ct):
		return "f64"
	case ct == lower.U32:
		return "i64"
	}
	return "i64"
}

// reduceOp builds the reduction of one op: the accumulator, the value pushed
// (over x0, the input in its compute type) and the final C++ expression.
type reduceOp func(k *core.KernelCall, ct string, sc *lower.Scalars) (acc, value, final string)

func reduceKernel(op string, build reduceOp) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		ct := computeType(in.DType())
		var sc lower.Scalars
		acc, value, final := build(k, ct, &sc)
		return cudaOf(k).reduce(reduction{op: op, frame: lower.NewFrame(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs)),
			ins: k.Inputs[:1], out: out, acc: acc, value: value, final: final, sc: &sc})
	}
}

func sumOp(_ *core.KernelCall, ct string, _ *lower.Scalars) (string, string, string) {
	return "SumAcc<" + accType(ct) + ">", "x0", "acc.s"
}

func meanOp(_ *core.KernelCall, _ string, _ *lower.Scalars) (string, string, string) {
	return "SumAcc<f64>", "x0", "acc.s / (f64)R"
}

func prodOp(_ *core.KernelCall, ct string, _ *lower.Scalars) (string, string, string) {
	return "ProdAcc<" + accType(ct) + ">", "x0", "acc.p"
}

func extremeOp(max bool) reduceOp {
	return func(_ *core.KernelCall, ct string, _ *lower.Scalars) (string, string, string) {
		return fmt.Sprintf("ExtAcc<%s, %v>", ct, max), "x0", "acc.m"
	}
}

func anyAllOp(all bool) reduceOp {
	return func(_ *core.KernelCall, ct string, _ *lower.Scalars) (string, string, string) {
		acc := "AnyAcc"
		if all {
			acc = "AllAcc"
		}
		return acc, lower.Truthy("x0", ct), "acc.b"
	}
}

func varOp(sqrt bool) reduceOp {
	return func(k *core.KernelCall, _ string, sc *lower.Scalars) (string, string, string) {
		sc.SetF(0, k.Attrs.Float("correction"))
		final := "acc.m2 / fmax(acc.n - pf(0), 0.0)"
		if sqrt {
			final = "sqrt(" + final + ")"
		}
		return "VarAcc", "x0", final
	}
}

func logsumexpOp(_ *core.KernelCall, _ string, _ *lower.Scalars) (string, string, string) {
	return "LseAcc", "x0", "acc.result()"
}

func normOp(k *core.KernelCall, ct string, sc *lower.Scalars) (string, string, string) {
	ord := k.Attrs.Float("ord")
	switch {
	case math.IsInf(ord, 1):
		return fmt.Sprintf("ExtAcc<%s, true>", ct), "abs(x0)", "acc.m"
	case math.IsInf(ord, -1):
		return fmt.Sprintf("ExtAcc<%s, false>", ct), "abs(x0)", "acc.m"
	case ord == 0:
		return "SumAcc<f64>", "select(0.0, 1.0, x0 != 0.0)", "acc.s"
	case ord == 1:
		return "SumAcc<f64>", "abs(f64(x0))", "acc.s"
	case ord == 2:
		return "SumAcc<f64>", "f64(x0) * f64(x0)", "sqrt(acc.s)"
	}
	sc.SetF(0, ord)
	return "SumAcc<f64>", "f_pow(abs(f64(x0)), pf(0u))", "pow(acc.s, 1.0 / pf(0))"
}

// argExtremeKernel returns the first index of the best value along an
// axis (or of the flattened tensor); the first NaN wins.
func argExtremeKernel(op string, max bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		_, axes, _, err := kernelkit.ArgReduceAxes(in.Rank(), k.Attrs)
		if err != nil {
			return err
		}
		ct := computeType(in.DType())
		return cudaOf(k).reduce(reduction{op: op, frame: lower.NewFrame(in.Shape(), axes), ins: k.Inputs[:1], out: out,
			acc: fmt.Sprintf("ArgAcc<%s, %v>", ct, max), value: "x0", final: "acc.at"})
	}
}

func init() {
	register("sum", reduceKernel("sum", sumOp))
	register("mean", reduceKernel("mean", meanOp))
	register("prod", reduceKernel("prod", prodOp))
	register("max", reduceKernel("max", extremeOp(true)))
	register("min", reduceKernel("min", extremeOp(false)))
	register("any", reduceKernel("any", anyAllOp(false)))
	register("all", reduceKernel("all", anyAllOp(true)))
	register("var", reduceKernel("var", varOp(false)))
	register("std", reduceKernel("std", varOp(true)))
	register("logsumexp", reduceKernel("logsumexp", logsumexpOp))
	register("norm", reduceKernel("norm", normOp))
	register("argmax", argExtremeKernel("argmax", true))
	register("argmin", argExtremeKernel("argmin", false))
}
