package webgpu

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// The elementwise activations are lower.Unary expressions; softmax and
// log_softmax are row kernels (kernels_activation_softmax.go).

// geluBackwardKernel is g * gelu'(x) (exact or tanh form).
func geluBackwardKernel(k *core.KernelCall) error {
	return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], lower.GeluGrad("x0", "x1", k.Attrs), nil)
}

func init() {
	registerUnary("activation")
	register("_gelu_backward", geluBackwardKernel)
}
