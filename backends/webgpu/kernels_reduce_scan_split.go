package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// A scan's thread walks its whole line, so on a device with a loop limit
// (gpu_looplimit.go) a cumsum over 70,000 elements was refused. Such a line
// runs in parts of half the limit, in three launches: one thread per part
// folds its part into a total; the totals of each line are scanned (the
// same way, so a line of more parts than a thread may walk splits again);
// then one thread per part walks it again from the running total of the
// parts before it, writing every member. Sums and products of floats
// associate differently from one walk (within f32 rounding of it); integer
// ones wrap the same. An exact i64 running sum keeps its totals and their
// prefixes in two words (scanI64Parts).

// scanParts is scanRun (kernels_reduce_scan.go) for lines of many parts; x reads
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

// scanI64Parts is scanI64's running sum for lines of many parts: each
// part's exact total in two words, the prefixes of the totals per line (one
// thread walks a line's parts), then each part's walk from its prefix,
// failing the op where an element leaves the i32 the GPU holds i64 in. x
// reads member r as i32 (or u32) and hi is its high word.
func (b *Backend) scanI64Parts(name string, f frame, in, out *core.Tensor, x, hi string) error {
	groups, members := f.Groups(), f.Members()
	chunk := max(b.loopLimit()/2, 1)
	parts := (members + chunk - 1) / chunk
	if err := b.checkTrips(fmt.Sprintf("an exact i64 running sum over %d parts of a line", parts), parts+64); err != nil {
		return err
	}
	half := groups * parts
	set := func(p *params) {
		p.setN(50, parts)
		p.setN(51, chunk)
		p.setN(52, half)
	}
	add := fmt.Sprintf(`		let a = %s;
		let s = lo + bitcast<u32>(a);
		hi = hi + %s + select(0, 1, s < lo);
		lo = s;
`, x, hi)
	totals, err := core.Empty(b, core.Shape{2 * half}, core.I32)
	if err != nil {
		return err
	}
	defer totals.Release()
	fold := "\tvar lo = 0u;\n\tvar hi = 0;\n\t" + partLoop + " {\n" + add + "\t}\n\tout0[t] = bitcast<i32>(lo);\n\tout0[t + pu(52u)] = hi;\n"
	if err := b.launchReduce(f, []*core.Tensor{in}, totals, fold, set, half, mapWG, reduceMode{split: true}); err != nil {
		return err
	}
	// The sum of the parts before each one, low words then high words,
	// written by index (the output's frame descriptor goes unused).
	before, err := core.Empty(b, core.Shape{2 * half}, core.I32)
	if err != nil {
		return err
	}
	defer before.Release()
	line := core.Shape{groups, parts}
	words := func(t *core.Tensor, w int) *core.Tensor { return core.NewView(t, line, []int{parts, 1}, w*half) }
	prefix := `	var lo = 0u;
	var hi = 0;
	for (var r = 0u; r < R; r++) {
		out0[o * R + r] = bitcast<i32>(lo);
		out0[o * R + r + pu(52u)] = hi;
		let s = lo + bitcast<u32>(v0(o, r));
		hi = hi + v1(o, r) + select(0, 1, s < lo);
		lo = s;
	}
`
	if err := b.launchReduce(newFrame(line, []int{1}), []*core.Tensor{words(totals, 0), words(totals, 1)}, words(before, 0), prefix, set, groups, mapWG, reduceMode{}); err != nil {
		return err
	}
	strides := make([]int, len(f.Shape))
	step := parts
	for i := len(f.Kept) - 1; i >= 0; i-- {
		d := f.Kept[i]
		strides[d] = step
		step *= f.Shape[d]
	}
	lo, hiWords := core.NewView(before, f.Shape, strides, 0), core.NewView(before, f.Shape, strides, half)
	walk := "\tvar lo = bitcast<u32>(in1[u32(kb[1]) + part]);\n\tvar hi = in2[u32(kb[2]) + part];\n\t" + partLoop + " {\n" + add +
		"\t\tlet v = bitcast<i32>(lo);\n\t\tif hi != select(0, -1, v < 0) { fail(); }\n\t\tout0[oat(o, r)] = v;\n\t}\n"
	flag, err := b.newFlag()
	if err != nil {
		return err
	}
	if err := b.launchReduce(f, []*core.Tensor{in, lo, hiWords}, out, walk, set, half, mapWG, reduceMode{split: true, framedOut: true, flag: flag}); err != nil {
		flag.Release()
		return err
	}
	return b.checkFlag(name, flag, errI64Range)
}
