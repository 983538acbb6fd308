package webgpu

import (
	"fmt"

	"github.com/cogentcore/webgpu/wgpu"
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

// iteration is a shape walked in row-major order with one stride vector per
// operand, simplified: size-1 dims dropped and dims that are contiguous in
// every operand merged, so most elementwise launches index in one dim.
type iteration struct {
	shape   []int
	strides [][]int
	offsets []int
}

// broadcastStrides gives t's strides for walking shape: dims t lacks or
// holds once step by 0.
func broadcastStrides(t *core.Tensor, shape core.Shape) []int {
	ts, st := t.Shape(), t.Strides()
	out := make([]int, len(shape))
	lead := len(shape) - len(ts)
	for d := range shape {
		if d < lead {
			continue
		}
		if ts[d-lead] != 1 {
			out[d] = st[d-lead]
		}
	}
	return out
}

func newIteration(shape core.Shape, ts ...*core.Tensor) iteration {
	it := iteration{strides: make([][]int, len(ts)), offsets: make([]int, len(ts))}
	full := make([][]int, len(ts))
	for i, t := range ts {
		full[i] = broadcastStrides(t, shape)
		it.offsets[i] = t.Offset()
	}
	for d, n := range shape {
		if n == 1 {
			continue
		}
		last := len(it.shape) - 1
		merge := last >= 0
		for i := range ts {
			if merge && it.strides[i][last] != full[i][d]*n {
				merge = false
			}
		}
		if merge {
			it.shape[last] *= n
			for i := range ts {
				it.strides[i][last] = full[i][d]
			}
			continue
		}
		it.shape = append(it.shape, n)
		for i := range ts {
			it.strides[i] = append(it.strides[i], full[i][d])
		}
	}
	return it
}

// write puts the iteration into the uniform slots of common.wgsl: the
// element count, the rank, the shape and one descriptor per operand.
func (it iteration) write(p *params, n int) error {
	if len(it.shape) > wgsl.MaxRank {
		return fmt.Errorf("webgpu: %d dims after merging contiguous ones; the GPU kernels take at most %d", len(it.shape), wgsl.MaxRank)
	}
	p.setI(wgsl.SlotN, n)
	p.setI(wgsl.SlotRank, len(it.shape))
	for d, s := range it.shape {
		p.setI(wgsl.SlotShape+d, s)
	}
	for i := range it.offsets {
		writeOperand(p, wgsl.OperandSlot(i), it.offsets[i], it.strides[i])
	}
	return nil
}

func writeOperand(p *params, slot, offset int, strides []int) {
	p.setI(slot, offset)
	for d, s := range strides {
		p.setI(slot+1+d, s)
	}
}
