package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// WebGPU kernels of ops whose GPU kernel is one body (core.ElementBody):
// the body, checked against the dialect CUDA also translates, inside
// wgsl/body.wgsl, one thread per output element. A view input is copied
// dense first: the helpers read element j at offset + j, which keeps the
// body free of strides at the cost of a copy the op's own kernel might
// avoid.

// bodyKernel is the kernel of a GPUBody op.
func bodyKernel(def *core.OpDef) core.Kernel {
	return func(k *core.KernelCall) error {
		if len(k.Outputs) != 1 {
			return fmt.Errorf("webgpu: %s: a GPU body writes one output, the op has %d", def.Name, len(k.Outputs))
		}
		out := k.Outputs[0]
		outT := physical(out.DType())
		var sc lower.Scalars
		src := def.GPUBody.Body(core.BodyTypes{Float: lower.F32, Out: outT}, k.Attrs, &sc)
		if _, err := lower.ParseBody(def.Name, src); err != nil {
			return err
		}
		if out.Numel() == 0 {
			return nil
		}
		ins := make([]*core.Tensor, len(k.Inputs))
		for j, t := range k.Inputs {
			ins[j] = t
			if !t.IsContiguous() {
				ins[j] = t.Contiguous()
				if err := ins[j].Err(); err != nil {
					return err
				}
				defer ins[j].Release()
			}
		}
		return gpuOf(k).bodyRun(def.Name, ins, out, src, &sc)
	}
}

// bodyRun launches body over out's elements; the pipeline is keyed by the
// ranks and types (and the body's source), never the shapes.
func (b *Backend) bodyRun(op string, ins []*core.Tensor, out *core.Tensor, src string, sc *lower.Scalars) error {
	if len(ins) > 26 || out.Shape().Rank() > wgsl.MaxRank {
		return fmt.Errorf("webgpu: %s: a GPU body takes at most 26 inputs of rank %d", op, wgsl.MaxRank)
	}
	var prm params
	prm.setScalars(sc)
	prm.setN(wgsl.SlotN, out.Numel())
	prm.setN(wgsl.SlotRank, out.Offset()) // a body kernel's rank is in its source; slot 9 is the output offset
	for d, n := range out.Shape() {
		prm.setN(wgsl.SlotShape+d, n)
	}
	types, ranks := make([]string, len(ins)), make([]int, len(ins))
	for j, t := range ins {
		if t.Shape().Rank() > wgsl.MaxRank {
			return fmt.Errorf("webgpu: %s: input %d has rank %d; a GPU body reads at most %d", op, j, t.Shape().Rank(), wgsl.MaxRank)
		}
		types[j], ranks[j] = physical(t.DType()), t.Shape().Rank()
		slot := wgsl.OperandSlot(j)
		prm.setN(slot, t.Offset())
		for d, n := range t.Shape() {
			prm.setN(slot+1+d, n)
		}
	}
	outT := physical(out.DType())
	key := fmt.Sprintf("body|%s|r%d|%v|%s|%s|%s", op, out.Shape().Rank(), ranks, strings.Join(types, ","), outT, src)
	p, err := b.pipelineFor(key, len(ins), 1, func() (string, error) {
		return wgsl.Render("body", map[string]any{"WG": mapWG, "Rank": out.Shape().Rank(), "Ins": types, "Ranks": ranks,
			"Out": outT, "OutCT": outT, "Body": src, "Store": storeExpr(out.DType(), "body(i)")})
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(append(append([]*core.Tensor{}, ins...), out)...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, out.Numel(), mapWG, bufs...)
}
