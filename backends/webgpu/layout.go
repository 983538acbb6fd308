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
	it := iteration{offsets: make([]int, len(ts))}
	full := make([][]int, len(ts))
	for i, t := range ts {
		full[i] = broadcastStrides(t, shape)
		it.offsets[i] = t.Offset()
	}
	it.shape, it.strides = coalesce(shape, full)
	return it
}

// coalesce drops size-1 dims and merges each dim into the one before it
// when every operand steps across both evenly, returning the simplified
// shape and each operand's strides for it. Row-major indexes are the same
// in both, and fewer dims mean fewer divisions per index.
func coalesce(shape []int, strides [][]int) ([]int, [][]int) {
	var out []int
	outSt := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		last := len(out) - 1
		merge := last >= 0
		for i := range strides {
			if merge && outSt[i][last] != strides[i][d]*n {
				merge = false
			}
		}
		if merge {
			out[last] *= n
			for i := range strides {
				outSt[i][last] = strides[i][d]
			}
			continue
		}
		out = append(out, n)
		for i := range strides {
			outSt[i] = append(outSt[i], strides[i][d])
		}
	}
	return out, outSt
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
