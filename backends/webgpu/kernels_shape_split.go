package webgpu

import (
	"github.com/webtensor/webtensor/core"
)

// splitKernel copies consecutive slabs along the axis into the outputs
// (split and chunk): each piece is a strided view of the input, copied by
// the elementwise kernel, so no intermediate copy is made.
func splitKernel(k *core.KernelCall) error {
	in := k.Inputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), in.Rank())
	if err != nil {
		return err
	}
	g := gpuOf(k)
	start := 0
	strides := in.Strides()
	for _, out := range k.Outputs {
		shape := out.Shape()
		piece := core.NewView(in, shape, strides, in.Offset()+start*strides[ax])
		if err := g.mapRun([]*core.Tensor{piece}, out, "x0", nil); err != nil {
			return err
		}
		start += shape[ax]
	}
	return nil
}

func init() {
	register("split", splitKernel)
	register("chunk", splitKernel)
}
