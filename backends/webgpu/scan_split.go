package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// A scan's thread walks its whole line, so on a device with a loop limit
// (looplimit.go) a cumsum over 70,000 elements was refused. Such a line
// runs in parts of half the limit, in three launches: one thread per part
// folds its part into a total; the totals of each line are scanned (the
// same way, so a line of more parts than a thread may walk splits again);
// then one thread per part walks it again from the running total of the
// parts before it, writing every member. Sums and products of floats
// associate differently from one walk (within f32 rounding of it); integer
// ones wrap the same.

// scanParts is scanRun (kernels_scan.go) for lines of many parts; x reads
// member r of line o in compute type ct.
func (b *Backend) scanParts(f frame, op, init, ct, x string, in, out *core.Tensor) error {
	groups, members := f.Groups(), f.Members()
	chunk := max(b.loopLimit()/2, 1)
	parts := (members + chunk - 1) / chunk
	set := func(p *params) {
		p.setN(50, parts)
		p.setN(51, chunk)
	}
	totals, err := core.Empty(b, core.Shape{groups, parts}, dtypeOf(ct))
	if err != nil {
		return err
	}
	defer totals.Release()
	fold := fmt.Sprintf("\tvar acc = %s;\n\t%s { acc = acc %s %s; }\n\tout0[t] = acc;\n", init, partLoop, op, x)
	if err := b.launchReduce(f, []*core.Tensor{in}, totals, fold, set, groups*parts, mapWG, reduceMode{split: true}); err != nil {
		return err
	}
	before, err := core.Empty(b, core.Shape{groups, parts}, dtypeOf(ct))
	if err != nil {
		return err
	}
	defer before.Release()
	if err := b.scanRun(newFrame(totals.Shape(), []int{1}), op, init, ct, totals, before); err != nil {
		return err
	}
	// The running totals, seen over the frame's shape: a line's row of
	// them at its kept index (kb[1] in the body), the same for every member.
	strides := make([]int, len(f.Shape))
	step := parts
	for i := len(f.Kept) - 1; i >= 0; i-- {
		d := f.Kept[i]
		strides[d] = step
		step *= f.Shape[d]
	}
	view := core.NewView(before, f.Shape, strides, 0)
	walk := fmt.Sprintf(`	var acc = %s;
	if part > 0u { acc = in1[u32(kb[1]) + part - 1u]; }
	%s {
		acc = acc %s %s;
		out0[oat(o, r)] = %s;
	}
`, init, partLoop, op, x, storeExpr(out.DType(), "acc"))
	return b.launchReduce(f, []*core.Tensor{in, view}, out, walk, set, groups*parts, mapWG, reduceMode{split: true, framedOut: true})
}
