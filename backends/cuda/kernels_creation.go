//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Creation ops: map kernels with no inputs, written from the element
// index i.

// toStorage is the expression that stores the f64 value v into dtype d as
// the CPU does (numerics.PutF64): integers through i64, truncating and
// saturating, then wrapping to their width.
func toStorage(d core.DType, v string) string {
	if d.IsFloat() || d == core.Bool {
		return v
	}
	return "i64(" + v + ")"
}

func fillKernel(value func(core.Attrs) float64) core.Kernel {
	return func(k *core.KernelCall) error {
		out := k.Outputs[0]
		var sc lower.Scalars
		sc.SetF(0, value(k.Attrs))
		return cudaOf(k).mapRun(k.Op.Name, nil, out, toStorage(out.DType(), "pf(0u)"), &sc)
	}
}

// arangeKernel is start + i*step: in i64 when start, stop and step are
// whole numbers (exact past 2^53, wrapping as the CPU's does), else in f64.
func arangeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	var sc lower.Scalars
	var e string
	if start, step, ok := oprules.ArangeInts(k.Attrs); ok {
		sc.SetI(0, start)
		sc.SetI(1, step)
		e = "i64(u64(pi(0u)) + u64(i) * u64(pi(1u)))"
		if out.DType().IsFloat() {
			e = "f64(" + e + ")"
		}
	} else {
		sc.SetF(0, k.Attrs.Float("start"))
		sc.SetF(1, k.Attrs.Float("step"))
		e = toStorage(out.DType(), "(pf(0u) + f64(i) * pf(1u))")
	}
	return cudaOf(k).mapRun("arange", nil, out, e, &sc)
}

// linspaceKernel fills from both ends towards the middle, as PyTorch does,
// so the last value is exactly stop; integer dtypes truncate the bounds.
func linspaceKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	n := out.Numel()
	start, stop, step := kernelkit.LinspaceBounds(k.Attrs, n, !out.DType().IsFloat())
	var sc lower.Scalars
	sc.SetF(0, start)
	sc.SetF(1, stop)
	sc.SetF(2, step)
	sc.SetI(3, int64(n/2))
	sc.SetI(4, int64(n-1))
	e := "select(pf(1u) - pf(2u) * f64(pi(4u) - i), pf(0u) + pf(2u) * f64(i), i < pi(3u) || pi(4u) == 0)"
	return cudaOf(k).mapRun("linspace", nil, out, toStorage(out.DType(), e), &sc)
}

func init() {
	kernelkit.RegisterFills(register, fillKernel)
	register("arange", arangeKernel)
	register("linspace", linspaceKernel)
}
