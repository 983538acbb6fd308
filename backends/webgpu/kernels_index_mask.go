package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// masked_select, its gradient and nonzero (wgsl/index.wgsl) are stream
// compactions run on the GPU in three steps: blocks of the flag tensor
// count their set flags, one thread turns the counts into block offsets
// (and the total), and each block then writes its selected elements in
// row-major order from its offset. Only the total comes back to the host,
// to size the output of the dynamic ops (and to check g's length for the
// gradient). Blocks are about sqrt(n) long, so neither the per-block loops
// nor the one-thread scan grows faster than sqrt(n). On a device with a
// loop limit (gpu_looplimit.go) blocks are cut shorter where a block's walk,
// with the indexing loops of each step, would pass it (a rank-4 mask of
// 67M elements would), and a count whose blocks would then be too many for
// the scan's thread is refused.

func init() {
	register("masked_select", sxMaskedSelectKernel)
	register("_masked_select_grad", sxMaskedSelectGradKernel)
	register("nonzero", sxNonzeroKernel)
}

// sxCompaction is a counted flag tensor: its block plan, the block offsets
// on the GPU and the number of set flags.
type sxCompaction struct {
	n, block, blocks int
	offsets          *core.Tensor
	total            int
	flag             string
}

// release frees the offsets; kernels queued against them still see them
// (the pool takes buffers back only after the batch is submitted).
func (c *sxCompaction) release() {
	if c.offsets != nil {
		c.offsets.Release()
	}
}

// sxCount counts, over the thread shape already in prm (n elements), the
// elements of src (operand 0's descriptor in prm) for which flag holds.
// step is how many loop iterations the costliest of the op's block walks
// runs per element (1, plus its indexing loops).
func sxCount(k *core.KernelCall, src *core.Tensor, n int, flag string, prm params, step int) (*sxCompaction, error) {
	c := &sxCompaction{n: n, flag: flag}
	if n == 0 {
		return c, nil
	}
	b := gpuOf(k)
	c.block = max(256, int(math.Ceil(math.Sqrt(float64(n)))))
	if limit := b.loopLimit(); limit > 0 && c.block*step > limit-64 {
		c.block = max((limit-64)/step, 1)
	}
	c.blocks = (n + c.block - 1) / c.block
	what := fmt.Sprintf("a stream compaction of %d elements in %d blocks of %d", n, c.blocks, c.block)
	if err := b.checkTrips(what, max(c.block*step, c.blocks)+64); err != nil {
		return nil, err
	}
	counts, err := k.Alloc(core.Shape{c.blocks}, core.U32)
	if err != nil {
		return nil, err
	}
	defer counts.Release()
	if c.offsets, err = k.Alloc(core.Shape{c.blocks + 1}, core.U32); err != nil {
		return nil, err
	}
	c.plan(&prm)
	extra := map[string]any{"Flag": flag}
	if err := b.sxRun("index", "count", []*core.Tensor{src}, []*core.Tensor{counts}, c.blocks, extra, &prm); err != nil {
		c.release()
		return nil, err
	}
	var ps params
	c.plan(&ps)
	if err := b.sxRun("index", "scan", []*core.Tensor{counts}, []*core.Tensor{c.offsets}, 1, map[string]any{}, &ps); err != nil {
		c.release()
		return nil, err
	}
	total, err := core.NewView(c.offsets, core.Shape{1}, []int{1}, c.blocks).Int64s()
	if err != nil {
		c.release()
		return nil, err
	}
	c.total = int(total[0])
	return c, nil
}

// plan writes the element count, block length and block count.
func (c *sxCompaction) plan(p *params) {
	p.setI(0, c.n)
	p.setI(1, c.block)
	p.setI(2, c.blocks)
}

// sxMaskIteration lays the mask, and then the other operands, over the
// broadcast shape s, merged, into prm.
func sxMaskIteration(s core.Shape, ts ...*core.Tensor) (params, error) {
	var prm params
	err := newIteration(s, ts...).write(&prm, 0)
	return prm, err
}

func sxMaskedSelectKernel(k *core.KernelCall) error {
	x, mask := k.Inputs[0], k.Inputs[1]
	s, err := core.BroadcastShapes(x.Shape(), mask.Shape())
	if err != nil {
		return err
	}
	// Operand 0 is the mask, operand 2 x (operand 1 is the offsets, read
	// by block rather than by descriptor).
	prm, err := sxMaskIteration(s, mask, x, x)
	if err != nil {
		return err
	}
	c, err := sxCount(k, mask, s.Numel(), "f != 0u", prm, 1+2*locTrips(int(prm.w[wgsl.SlotRank])))
	if err != nil {
		return err
	}
	defer c.release()
	out, err := k.Alloc(core.Shape{c.total}, x.DType())
	if err != nil {
		return err
	}
	if c.total > 0 {
		c.plan(&prm)
		extra := map[string]any{"Flag": c.flag, "Store": storeExpr(out.DType(), "v")}
		if err := gpuOf(k).sxRun("index", "compact", []*core.Tensor{mask, c.offsets, x}, []*core.Tensor{out}, c.blocks, extra, &prm); err != nil {
			return err
		}
	}
	k.SetOutputs(out)
	return nil
}

// sxMaskedSelectGradKernel writes g's values, in order, where the mask is
// set and zeros elsewhere; g must have exactly as many elements as the
// mask selects, as on the CPU.
func sxMaskedSelectGradKernel(k *core.KernelCall) error {
	g, mask, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	// The output is contiguous and the thread shape is its own, so the
	// kernel writes element j of the block walk directly.
	prm, err := sxMaskIteration(out.Shape(), mask)
	if err != nil {
		return err
	}
	c, err := sxCount(k, mask, out.Numel(), "f != 0u", prm, 1+locTrips(int(prm.w[wgsl.SlotRank])))
	if err != nil {
		return err
	}
	defer c.release()
	if c.total != g.Numel() {
		return fmt.Errorf("g has %d elements, the mask selects %d", g.Numel(), c.total)
	}
	if c.n == 0 {
		return nil
	}
	c.plan(&prm)
	prm.setI(3, g.Offset())
	prm.setI(4, g.Strides()[0])
	extra := map[string]any{"Flag": c.flag, "Zero": lower.Zero(physical(out.DType())), "Store": storeExpr(out.DType(), "v")}
	return gpuOf(k).sxRun("index", "unmask", []*core.Tensor{mask, c.offsets, g}, []*core.Tensor{out}, c.blocks, extra, &prm)
}

// sxNonzeroKernel writes the coordinates of x's non-zero elements (NaN
// counts) as i64 rows. The thread shape is x's own, not merged, since the
// kernel writes coordinates in it.
func sxNonzeroKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	s := x.Shape()
	var prm params
	if err := sxShape(&prm, s); err != nil {
		return err
	}
	writeOperand(&prm, wgsl.OperandSlot(0), x.Offset(), x.Strides())
	c, err := sxCount(k, x, x.Numel(), lower.Truthy("f", physical(x.DType())), prm, 1+locTrips(len(s))+len(s))
	if err != nil {
		return err
	}
	defer c.release()
	out, err := k.Alloc(core.Shape{c.total, len(s)}, core.I64)
	if err != nil {
		return err
	}
	if c.total > 0 && len(s) > 0 {
		c.plan(&prm)
		extra := map[string]any{"Flag": c.flag}
		if err := gpuOf(k).sxRun("index", "nonzero", []*core.Tensor{x, c.offsets}, []*core.Tensor{out}, c.blocks, extra, &prm); err != nil {
			return err
		}
	}
	k.SetOutputs(out)
	return nil
}
