package webgpu

import (
	"fmt"

	"github.com/cogentcore/webgpu/wgpu"
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// gpuOf is the backend a kernel call runs on.
func gpuOf(k *core.KernelCall) *Backend { return k.Backend.(*Backend) }

// bufOf is a tensor's GPU buffer.
func bufOf(t *core.Tensor) (*wgpu.Buffer, error) {
	s, ok := t.Storage().(*storage)
	if !ok {
		return nil, fmt.Errorf("webgpu: tensor on %v given to a webgpu kernel", t.Device())
	}
	if s.slot.released {
		return nil, fmt.Errorf("webgpu: tensor used after its memory was released")
	}
	return s.slot.buf, nil
}

// buffers lists the buffers of ts in order.
func buffers(ts ...*core.Tensor) ([]*wgpu.Buffer, error) {
	out := make([]*wgpu.Buffer, len(ts))
	for i, t := range ts {
		var err error
		if out[i], err = bufOf(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// iteration is lower's iteration space with WebGPU's uniform encoding.
type iteration struct{ lower.Iteration }

func newIteration(shape core.Shape, ts ...*core.Tensor) iteration {
	return iteration{lower.NewIteration(shape, ts...)}
}

// write puts the iteration into the uniform slots of common.wgsl: the
// element count, the rank, the shape and one descriptor per operand.
func (it iteration) write(p *params, n int) error {
	if len(it.Shape) > wgsl.MaxRank {
		return fmt.Errorf("webgpu: %d dims after merging contiguous ones; the GPU kernels take at most %d", len(it.Shape), wgsl.MaxRank)
	}
	p.setI(wgsl.SlotN, n)
	p.setI(wgsl.SlotRank, len(it.Shape))
	for d, s := range it.Shape {
		p.setI(wgsl.SlotShape+d, s)
	}
	for i := range it.Offsets {
		writeOperand(p, wgsl.OperandSlot(i), it.Offsets[i], it.Strides[i])
	}
	return nil
}

func writeOperand(p *params, slot, offset int, strides []int) {
	p.setI(slot, offset)
	for d, s := range strides {
		p.setI(slot+1+d, s)
	}
}
