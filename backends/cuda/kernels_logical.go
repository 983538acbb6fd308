//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

func logicalKernel(op, sym string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := computeType(k.Inputs[0].DType()), computeType(k.Inputs[1].DType())
		e := lower.BoolOf(lower.Truthy("x0", ta) + " " + sym + " " + lower.Truthy("x1", tb))
		return cudaOf(k).mapRun(op, k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func init() {
	registerUnary("logical")
	for op, sym := range lower.Logical {
		register(op, logicalKernel(op, sym))
	}
}
