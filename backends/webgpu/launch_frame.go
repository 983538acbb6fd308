package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// frame is lower's kept/reduced split with WebGPU's uniform encoding
// (wgsl/reduce.wgsl).
type frame struct{ lower.Frame }

func newFrame(shape core.Shape, axes []int) frame { return frame{lower.NewFrame(shape, axes)} }

// maxFrameOperands fits the operand descriptors (18 slots each from slot
// 64) in the 256-slot uniform block.
const maxFrameOperands = 8

// write fills the frame slots for operands ts, each broadcast to the
// frame's shape. (A per-group output is indexed by group directly, so its
// descriptor goes unused.)
func (f frame) write(p *params, threads int, ts ...*core.Tensor) error {
	if len(f.Kept) > wgsl.MaxRank || len(f.Reduced) > wgsl.MaxRank {
		return fmt.Errorf("webgpu: a reduction over %d dims keeping %d; the GPU kernels take at most %d of each", len(f.Reduced), len(f.Kept), wgsl.MaxRank)
	}
	if len(ts) > maxFrameOperands {
		return fmt.Errorf("webgpu: reduce frame takes at most %d operands, got %d", maxFrameOperands, len(ts))
	}
	l := f.Layout(ts...)
	keptShape, redShape, keptSt, redSt := l.KeptShape, l.RedShape, l.KeptStrides, l.RedStrides
	p.setI(wgsl.SlotN, threads)
	p.setI(wgsl.SlotRank, len(keptShape))
	for i, n := range keptShape {
		p.setI(wgsl.SlotShape+i, n)
	}
	p.setI(54, f.Members())
	p.setI(55, len(redShape))
	for i, n := range redShape {
		p.setI(56+i, n)
	}
	for k, t := range ts {
		writeOperand(p, 64+18*k, t.Offset(), keptSt[k])
		writeOperand(p, 73+18*k, 0, redSt[k])
	}
	return nil
}

// reduceRun runs body over the frame with inputs ins and output out. In
// per-element mode there is one thread per (group, member), otherwise one
// per group.
func (b *Backend) reduceRun(f frame, ins []*core.Tensor, out *core.Tensor, perElement bool, body string, set func(*params)) error {
	threads := f.Groups()
	if perElement {
		threads *= f.Members()
	}
	wg := b.workgroupFor("reduce", threads, func(wg int) error { return b.reduceRunWG(f, ins, out, perElement, body, set, wg) })
	return b.reduceRunWG(f, ins, out, perElement, body, set, wg)
}

func (b *Backend) reduceRunWG(f frame, ins []*core.Tensor, out *core.Tensor, perElement bool, body string, set func(*params), wg int) error {
	threads := f.Groups()
	if perElement {
		threads *= f.Members()
	}
	return b.launchReduce(f, ins, out, body, set, threads, wg, reduceMode{perElement: perElement})
}

// reduceMode is how the reduce template maps threads: one per group, one
// per (group, member) (perElement), or one per part of a group (split; the
// part count at slot 50), writing out at the thread's own index, or through
// the frame like the other modes when framedOut (a split scan writes every
// member). A launch with a flag (a zeroed U32 tensor, see newFlag) lets its
// body call fail(). trips, when set, is how many members a thread's loops
// visit (else the group's size, or a split part's).
type reduceMode struct {
	perElement, split, framedOut bool
	flag                         *core.Tensor
	trips                        int
}

// launchReduce runs body over frame f with threads threads in workgroups
// of wg. A split launch's output takes no part in the frame: its
// descriptor stays zero.
func (b *Backend) launchReduce(f frame, ins []*core.Tensor, out *core.Tensor, body string, set func(*params), threads, wg int, mode reduceMode) error {
	if threads == 0 {
		return nil
	}
	types := make([]string, len(ins))
	for i, t := range ins {
		types[i] = physical(t.DType())
	}
	outT := physical(out.DType())
	var prm params
	if set != nil {
		set(&prm)
	}
	operands := append(append([]*core.Tensor{}, ins...), out)
	framed := operands
	if mode.split && !mode.framedOut {
		framed = ins
	}
	if err := f.write(&prm, threads, framed...); err != nil {
		return err
	}
	// The merged ranks are part of the kernel: indexing is straight code.
	kr, rr := int(prm.w[wgsl.SlotRank]), int(prm.w[55])
	trips := f.Members()
	switch {
	case mode.trips > 0:
		trips = mode.trips
	case mode.split:
		trips = int(prm.w[51])
	case mode.perElement && !rLoop.MatchString(body):
		trips = 0 // a thread of its own member, and no loop over the others
	}
	if err := b.checkLoops(body, trips, rr); err != nil {
		return err
	}
	flagged := mode.flag != nil
	key := fmt.Sprintf("reduce|%d|k%d|r%d|%s|%s|%v|%v|%v|%s", wg, kr, rr, strings.Join(types, ","), outT, mode.perElement, mode.split, flagged, body)
	nOut := 1
	if flagged {
		nOut, operands = 2, append(operands, mode.flag)
	}
	p, err := b.pipelineFor(key, len(ins), nOut, func() (string, error) {
		return wgsl.Render("reduce", map[string]any{"WG": wg, "KRank": kr, "RRank": rr, "Ins": types, "Out": outT,
			"PerElement": mode.perElement, "Split": mode.split, "Flag": flagged, "Body": body})
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(operands...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, threads, wg, bufs...)
}
