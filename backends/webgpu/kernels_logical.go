package webgpu

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// logicalKernel applies a connective to the truth of its operands
// (nonzero, NaN included); logical_not, isnan and isinf are lower.Unary
// expressions.
func logicalKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := physical(k.Inputs[0].DType()), physical(k.Inputs[1].DType())
		e := lower.BoolOf(lower.Truthy("x0", ta) + " " + op + " " + lower.Truthy("x1", tb))
		return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func init() {
	registerUnary("logical")
	for op, sym := range lower.Logical {
		register(op, logicalKernel(sym))
	}
}
