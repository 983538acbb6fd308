package webgpu

import (
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
		e := expr(lower.Conv("x0", inT, ct), ct, k.Attrs, &sc)
		if out.DType() != core.Bool {
			e = lower.Conv(e, ct, physical(out.DType()))
		}
		return gpuOf(k).mapRun(k.Inputs[:1], out, e, func(p *params) { p.setScalars(&sc) })
	}
}

// castKernel converts between dtypes with NumPy's astype rules: floats to
// integers truncate toward zero, anything to bool tests nonzero, and narrow
// integer targets wrap (storeExpr).
func castKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	inT, outT := physical(in.DType()), physical(out.DType())
	e := lower.Conv("x0", inT, outT)
	switch {
	case out.DType() == core.Bool:
		e = lower.BoolOf(lower.Truthy("x0", inT))
	case inT == "f32" && outT == "u32":
		e = "select(u32(trunc(x0)), bitcast<u32>(i32(trunc(x0))), x0 < 0.0)"
	case inT == "f32" && outT == "i32":
		e = "i32(trunc(x0))"
	}
	return gpuOf(k).mapRun(k.Inputs[:1], out, e, nil)
}

func init() {
	for op, e := range lower.Unary {
		register(op, unaryKernel(op, e))
	}
	register("cast", castKernel)
}
