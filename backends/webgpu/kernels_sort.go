package webgpu

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/wgsl"
)

// Sorting is rank counting (wgsl/sort.wgsl): one thread per element counts
// the members of its row that precede it, counting a tie as preceding only
// when its index is lower, and writes itself to that position. That is the
// CPU's stable sort with NaN largest, needs no scratch and no barriers, and
// costs O(n) per element: right for the short rows sort, topk and unique
// usually see. Rows are reduce frames, so strided inputs cost no copy. A
// row longer than a device's loop limit allows (gpu_looplimit.go: lavapipe
// stops a thread after 65,535 loop steps) is refused rather than sorted
// wrong; at that length each thread's O(n) walk is slow anyway.

// spSortRun dispatches body over frame f. Operand descriptors are written
// for desc (the inputs, then any frame-shaped outputs, so that oatk works);
// the buffers bound are ins then outs. Every body loops once over a row
// (or less), reading a member per step: what names the work for the
// refusal of a row longer than the device's loop limit allows.
func (b *Backend) spSortRun(what string, f frame, ins, outs, desc []*core.Tensor, perElement bool, body string, set func(*params)) error {
	threads := f.Groups()
	if perElement {
		threads *= f.Members()
	}
	if threads == 0 {
		return nil
	}
	inT, outT := make([]string, len(ins)), make([]string, len(outs))
	for i, t := range ins {
		inT[i] = physical(t.DType())
	}
	for i, t := range outs {
		outT[i] = physical(t.DType())
	}
	key := fmt.Sprintf("sort|%s|%s|%v|%s", strings.Join(inT, ","), strings.Join(outT, ","), perElement, body)
	p, err := b.pipelineFor(key, len(ins), len(outs), func() (string, error) {
		return wgsl.Render("sort", map[string]any{"WG": mapWG, "Ins": inT, "Outs": outT, "Key": inT[0], "PerElement": perElement, "Body": body})
	})
	if err != nil {
		return err
	}
	var prm params
	if set != nil {
		set(&prm)
	}
	if err := f.write(&prm, threads, desc...); err != nil {
		return err
	}
	// Each step reads a member through loc over the kept and the reduced
	// dims; the writes after the loop read a few more.
	perRead := locTrips(int(prm.w[wgsl.SlotRank])) + locTrips(int(prm.w[55]))
	if err := b.checkTrips(fmt.Sprintf("%s over rows of %d", what, f.Members()), f.Members()*(1+perRead)+4*perRead+16); err != nil {
		return err
	}
	bufs, err := buffers(append(append([]*core.Tensor{}, ins...), outs...)...)
	if err != nil {
		return err
	}
	return b.run(p, &prm, threads, mapWG, bufs...)
}

// spLaneFrame is the frame of x along the sort axis; a scalar is one row
// of one element.
func spLaneFrame(x *core.Tensor, a core.Attrs) (frame, error) {
	if x.Rank() == 0 {
		if _, err := core.NormAxis(a.Int("axis"), 1); err != nil {
			return frame{}, err
		}
		return newFrame(x.Shape(), nil), nil
	}
	ax, err := core.NormAxis(a.Int("axis"), x.Rank())
	if err != nil {
		return frame{}, err
	}
	return newFrame(x.Shape(), []int{ax}), nil
}

func spFlag(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}

// spSortKernel serves sort (values and indices) and argsort (indices).
func spSortKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f, err := spLaneFrame(x, k.Attrs)
	if err != nil {
		return err
	}
	body := "\tlet p = sp_rank(o, r);\n"
	if len(k.Outputs) == 2 {
		body += "\tout0[oat0(o, p)] = " + storeExpr(k.Outputs[0].DType(), "v0(o, r)") + ";\n\tout1[oat1(o, p)] = i32(r);\n"
	} else {
		body += "\tout0[oat0(o, p)] = i32(r);\n"
	}
	descending := k.Attrs.Bool("descending")
	return gpuOf(k).spSortRun("a sort", f, k.Inputs[:1], k.Outputs, append([]*core.Tensor{x}, k.Outputs...), true, body,
		func(p *params) { p.setU(0, spFlag(descending)) })
}

// spTopkKernel keeps the members of rank below k. Sorted output writes each
// at its rank, one thread per element; unsorted output keeps index order:
// a first launch writes every member's rank, then each kept member counts
// the kept members before it to find its place.
func spTopkKernel(k *core.KernelCall) error {
	x, vals, idx := k.Inputs[0], k.Outputs[0], k.Outputs[1]
	f, err := spLaneFrame(x, k.Attrs)
	if err != nil {
		return err
	}
	n := k.Attrs.Int("k")
	if n == 0 {
		return nil
	}
	largest := k.Attrs.Bool("largest")
	set := func(p *params) {
		p.setU(0, spFlag(largest))
		p.setN(1, n)
	}
	store := storeExpr(vals.DType(), "v0(o, r)")
	b := gpuOf(k)
	if k.Attrs.Bool("sorted") {
		body := "\tlet p = sp_rank(o, r);\n\tif p < pu(1u) {\n\t\tout0[oat0(o, p)] = " + store + ";\n\t\tout1[oat1(o, p)] = i32(r);\n\t}\n"
		return b.spSortRun("topk", f, k.Inputs[:1], k.Outputs, []*core.Tensor{x, vals, idx}, true, body, set)
	}
	ranks, err := spScratch(k, x.Shape())
	if err != nil {
		return err
	}
	defer ranks.Release()
	body1 := "\tout0[oat0(o, r)] = i32(sp_rank(o, r));\n"
	if err := b.spSortRun("topk", f, k.Inputs[:1], []*core.Tensor{ranks}, []*core.Tensor{x, ranks}, true, body1, set); err != nil {
		return err
	}
	body2 := `	if u32(v1(o, r)) >= pu(1u) { return; }
	var q = 0u;
	for (var j = 0u; j < r; j++) { if u32(v1(o, j)) < pu(1u) { q++; } }
	out0[oat0(o, q)] = ` + store + `;
	out1[oat1(o, q)] = i32(r);
`
	return b.spSortRun("topk", f, []*core.Tensor{x, ranks}, k.Outputs, []*core.Tensor{x, ranks, vals, idx}, true, body2, set)
}

// spScratch is an i32 work tensor on the kernel's backend; the caller
// releases it once its last dispatch is recorded (the pool takes it back
// only after that batch is submitted).
func spScratch(k *core.KernelCall, shape core.Shape) (*core.Tensor, error) {
	return core.Empty(k.Backend, shape, core.I32)
}

// spUniqueKernel groups equal values of the flattened input in four
// launches over one frame holding every element: (1) first[e], the lowest
// index holding x[e]'s value (e itself for NaN, which equals nothing);
// (2) the group of e: leaders (first[j] == j) ordered before it, by value
// when sorted and by index otherwise; (3) one thread counts the leaders,
// which the host reads back to size the outputs (unique is dynamic);
// (4) each leader writes its value and, when asked, its group's size.
func spUniqueKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	b := gpuOf(k)
	n := x.Numel()
	all := make([]int, x.Rank())
	for i := range all {
		all[i] = i
	}
	f := newFrame(x.Shape(), all)
	var tmp []*core.Tensor
	defer func() {
		for _, t := range tmp {
			t.Release()
		}
	}()
	scratch := func(shape core.Shape) (*core.Tensor, error) {
		t, err := spScratch(k, shape)
		if err == nil {
			tmp = append(tmp, t)
		}
		return t, err
	}
	first, err := scratch(x.Shape())
	if err != nil {
		return err
	}
	var inv *core.Tensor
	if k.Attrs.Bool("return_inverse") {
		if inv, err = k.Alloc(x.Shape(), core.I64); err != nil {
			return err
		}
	} else if inv, err = scratch(x.Shape()); err != nil {
		return err
	}
	in := []*core.Tensor{x}
	body1 := `	let x = v0(o, r);
	var f = r;
	if !sp_nan(x) {
		for (var j = 0u; j < r; j++) { if v0(o, j) == x { f = j; break; } }
	}
	out0[oat0(o, r)] = i32(f);
`
	if err := b.spSortRun("unique", f, in, []*core.Tensor{first}, []*core.Tensor{x, first}, true, body1, nil); err != nil {
		return err
	}
	body2 := `	let x = v0(o, r);
	var g = 0u;
	for (var j = 0u; j < u32(v1(o, r)); j++) { if u32(v1(o, j)) == j { g++; } }
	out0[oat0(o, r)] = i32(g);
`
	if k.Attrs.Bool("sorted") {
		// Leaders with a smaller value, plus, for a NaN, the NaNs before it
		// (each NaN is its own group, and they sort last in index order).
		body2 = `	let x = v0(o, r);
	var g = 0u;
	for (var j = 0u; j < R; j++) {
		let y = v0(o, j);
		if u32(v1(o, j)) == j && (sp_less(y, x) || (sp_nan(x) && sp_nan(y) && j < r)) { g++; }
	}
	out0[oat0(o, r)] = i32(g);
`
	}
	if err := b.spSortRun("unique", f, []*core.Tensor{x, first}, []*core.Tensor{inv}, []*core.Tensor{x, first, inv}, true, body2, nil); err != nil {
		return err
	}
	groups := 0
	if n > 0 {
		cnt, err := scratch(core.Shape{1})
		if err != nil {
			return err
		}
		body3 := "\tvar c = 0u;\n\tfor (var j = 0u; j < R; j++) { if u32(v0(0u, j)) == j { c++; } }\n\tout0[0] = i32(c);\n"
		if err := b.spSortRun("unique", f, []*core.Tensor{first}, []*core.Tensor{cnt}, []*core.Tensor{first}, false, body3, nil); err != nil {
			return err
		}
		raw, err := cnt.Bytes()
		if err != nil {
			return err
		}
		groups = int(int32(binary.LittleEndian.Uint32(raw)))
	}
	values, err := k.Alloc(core.Shape{groups}, x.DType())
	if err != nil {
		return err
	}
	outs := []*core.Tensor{values}
	var counts *core.Tensor
	if k.Attrs.Bool("return_counts") {
		if counts, err = k.Alloc(core.Shape{groups}, core.I64); err != nil {
			return err
		}
		outs = append(outs, counts)
	}
	body4 := "\tif u32(v1(o, r)) != r { return; }\n\tlet g = u32(v2(o, r));\n\tout0[g] = " + storeExpr(x.DType(), "v0(o, r)") + ";\n"
	if counts != nil {
		body4 += "\tvar c = 0;\n\tfor (var j = r; j < R; j++) { if u32(v1(o, j)) == r { c++; } }\n\tout1[g] = c;\n"
	}
	ins4 := []*core.Tensor{x, first, inv}
	if err := b.spSortRun("unique", f, ins4, outs, ins4, true, body4, nil); err != nil {
		return err
	}
	if inv != nil && k.Attrs.Bool("return_inverse") {
		outs = append(outs[:1], append([]*core.Tensor{inv}, outs[1:]...)...)
	}
	k.SetOutputs(outs...)
	return nil
}

func init() {
	register("sort", spSortKernel)
	register("argsort", spSortKernel)
	register("topk", spTopkKernel)
	register("unique", spUniqueKernel)
}
