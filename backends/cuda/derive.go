//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// CUDA kernels of ops described by their arithmetic (core.Pointwise): the
// op's own expression, translated as lower.Unary's and lower.Binary's are,
// built when the op is first looked up; and of ops whose GPU kernel is one
// body (core.ElementBody, body.go) or row body (body_rows.go).

func init() { core.RegisterKernelDeriver("cuda", derivePointwise) }

func derivePointwise(def *core.OpDef) core.Kernel {
	if def.GPUBody != nil {
		return bodyKernel(def)
	}
	if def.Pointwise.F2 != nil {
		return binaryKernel(def.Name, lower.PointwiseBinary(def))
	}
	return unaryKernel(def.Name, lower.PointwiseUnary(def))
}
