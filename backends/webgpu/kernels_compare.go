package webgpu

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// compareKernel compares in the type both operands convert to exactly
// (lower.CompareType) and gives bool.
func compareKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := physical(k.Inputs[0].DType()), physical(k.Inputs[1].DType())
		ct := lower.CompareType(ta, tb)
		e := lower.BoolOf(lower.CompareExpr(op, lower.Conv("x0", ta, ct), lower.Conv("x1", tb, ct)))
		return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func init() {
	for op := range lower.Compare {
		register(op, compareKernel(op))
	}
}
