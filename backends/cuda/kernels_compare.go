//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

func compareKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := computeType(k.Inputs[0].DType()), computeType(k.Inputs[1].DType())
		ct := lower.CompareType(ta, tb)
		e := lower.BoolOf(lower.CompareExpr(op, lower.Conv("x0", ta, ct), lower.Conv("x1", tb, ct)))
		return cudaOf(k).mapRun(op, k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func init() {
	for op := range lower.Compare {
		register(op, compareKernel(op))
	}
}
