//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// The elementwise activations are lower.Unary expressions; softmax and
// log_softmax are row programs (kernels_activation_softmax.go).

func geluBackwardKernel(k *core.KernelCall) error {
	ct := computeType(k.Outputs[0].DType())
	g := lower.Conv("x0", computeType(k.Inputs[0].DType()), ct)
	x := lower.Conv("x1", computeType(k.Inputs[1].DType()), ct)
	return cudaOf(k).mapRun("_gelu_backward", k.Inputs[:2], k.Outputs[0], lower.GeluGrad(g, x, k.Attrs), nil)
}

func init() {
	registerUnary("activation")
	register("_gelu_backward", geluBackwardKernel)
}
