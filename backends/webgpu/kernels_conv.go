package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// Convolutions resolve their geometry with core's ConvGeom (so shape
// inference and kernels agree) and run wgsl/conv.wgsl in one of three
// directions: grid from image (conv1d, conv2d, the input gradient of a
// transposed convolution), image from grid (conv_transpose2d), and the
// weight gradient.

type convGeomFunc func(a, b core.Shape, attrs core.Attrs) (oprules.ConvGeom, error)

func convKernel(geom convGeomFunc, mode string) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b := k.Inputs[0], k.Inputs[1]
		g, err := geom(a.Shape(), b.Shape(), k.Attrs)
		if err != nil {
			return err
		}
		var bias *core.Tensor
		if len(k.Inputs) > 2 {
			bias = k.Inputs[2]
		}
		return gpuOf(k).conv(&g, mode, a, b, bias, k.Outputs[0], nil)
	}
}

// conv runs one convolution; ep (nil: none) is an elementwise epilogue
// applied to each output element as it is stored.
func (gb *Backend) conv(g *oprules.ConvGeom, mode string, a, b, bias, out *core.Tensor, ep *epilogue) error {
	n := out.Numel()
	if n == 0 {
		return nil
	}
	if g.Groups <= 0 || g.ImageC%g.Groups != 0 || g.GridC%g.Groups != 0 {
		return fmt.Errorf("webgpu: conv with %d groups over %d and %d channels", g.Groups, g.ImageC, g.GridC)
	}
	a, b = a.Contiguous(), b.Contiguous()
	third := b
	if bias != nil {
		third = bias.Contiguous()
	}
	for _, t := range []*core.Tensor{a, b, third} {
		if err := t.Err(); err != nil {
			return err
		}
	}
	if room := gb.epilogueRoom(epilogueBound("conv2d")); ep != nil && (out.Rank() > wgsl.MaxRank || len(ep.extras) > room) {
		return fmt.Errorf("webgpu: conv epilogue with %d extras over %d dims; at most %d and %d",
			len(ep.extras), out.Rank(), room, wgsl.MaxRank)
	}
	terms, trips := convTerms(g, mode)
	if !gb.loopsFit(trips) {
		return gb.convSplit(g, mode, terms, a, b, third, bias != nil, out, ep)
	}
	prm := convParams(g, a, b, third)
	if bias != nil {
		prm.setI(31, 1)
	}
	return gb.convLaunch(mode, false, &prm, []*core.Tensor{a, b, third}, out, ep, n)
}

// convParams fills the geometry slots of conv.wgsl.
func convParams(g *oprules.ConvGeom, a, b, third *core.Tensor) params {
	var prm params
	batch := g.Batch
	if !g.Batched {
		batch = 1
	}
	for i, v := range []int{batch, g.ImageC, g.GridC, g.Groups, g.Image[0], g.Image[1], g.Grid[0], g.Grid[1]} {
		prm.setI(i, v)
	}
	for i, v := range []int{g.Kernel[0], g.Kernel[1], g.Stride[0], g.Stride[1], g.Padding[0], g.Padding[1],
		g.Dilation[0], g.Dilation[1], a.Offset(), b.Offset(), third.Offset()} {
		prm.setI(20+i, v)
	}
	return prm
}

// convLaunch runs conv.wgsl's mode over threads threads with inputs ins
// (three) into out; a split launch writes partials and takes no epilogue.
func (gb *Backend) convLaunch(mode string, split bool, prm *params, ins []*core.Tensor, out *core.Tensor, ep *epilogue, threads int) error {
	key := fmt.Sprintf("conv|%s|%v|%s", mode, split, out.DType())
	expr, extras := "x0", []*core.Tensor(nil)
	if ep != nil {
		expr, extras = ep.expr, ep.extras
		key += fmt.Sprintf("|%s|%d|r%d", expr, len(extras), out.Rank())
	}
	p, err := gb.pipelineFor(key, 3+len(extras), 1, func() (string, error) {
		type extra struct{ I, X, Binding, Slot int }
		ex := make([]extra, len(extras))
		for i := range extras {
			ex[i] = extra{I: i, X: i + 1, Binding: 4 + i, Slot: wgsl.OperandSlot(2 + i)}
		}
		return wgsl.Render("conv", map[string]any{"WG": mapWG, "Mode": mode, "Split": split, "Out": physical(out.DType()),
			"Store": storeExpr(out.DType(), "v"), "Extras": ex, "OutBinding": 4 + len(extras), "Epilogue": expr,
			"Rank": out.Rank()})
	})
	if err != nil {
		return err
	}
	prm.setI(wgsl.SlotN, threads)
	if len(extras) > 0 {
		prm.setI(wgsl.SlotRank, out.Rank())
		for i, d := range out.Shape() {
			prm.setI(wgsl.SlotShape+i, d)
		}
		for i, e := range extras {
			writeOperand(prm, wgsl.OperandSlot(2+i), e.Offset(), lower.BroadcastStrides(e, out.Shape()))
		}
	}
	bufs, err := buffers(append(ins, append(extras, out)...)...)
	if err != nil {
		return err
	}
	return gb.run(p, prm, threads, mapWG, bufs...)
}

func init() {
	register("conv2d", convKernel(oprules.Conv2dGeom, "grid"))
	register("conv1d", convKernel(oprules.Conv1dGeom, "grid"))
	register("_conv_transpose2d_input_grad", convKernel(oprules.ConvTransposeInputGradGeom, "grid"))
	register("conv_transpose2d", convKernel(oprules.ConvTranspose2dGeom, "image"))
	register("_conv2d_weight_grad", convKernel(oprules.ConvWeightGradGeom, "wgrad"))
}
