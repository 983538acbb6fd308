//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// The elementwise ops take their expressions from backends/lower, where
// the WebGPU backend finds them too: one description, two targets. Each
// category's file registers its share (registerUnary, lower.InCategory).

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

// registerUnary registers the kernels of lower.Unary's ops of one
// category; each category's file calls it for its own ops.
func registerUnary(category string) {
	for _, op := range lower.InCategory(lower.Unary, category) {
		register(op, unaryKernel(op, lower.Unary[op]))
	}
}

func init() { registerUnary("unary") }
