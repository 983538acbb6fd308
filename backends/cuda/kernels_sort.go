//go:build linux && cgo

package cuda

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// sort, argsort, topk and unique on the row sorter (sorter.go), with the
// CPU backend's orders: stable, NaN above +inf (first when descending or
// largest), -0 equal to +0, and values copied as raw elements from the
// positions the sort chose, so every dtype comes through bit for bit.

func init() {
	register("sort", sortKernel)
	register("argsort", sortKernel)
	register("topk", topkKernel)
	register("unique", uniqueKernel)
}

// sortAxisOf is the axis a sort op works along; a scalar is one lane of
// one element.
func sortAxisOf(x *core.Tensor, a core.Attrs) (int, error) {
	if x.Rank() == 0 {
		_, err := core.NormAxis(a.Int("axis"), 1)
		return 0, err
	}
	return core.NormAxis(a.Int("axis"), x.Rank())
}

// sortLen is the length of x's lanes along axis.
func sortLen(x *core.Tensor, axis int) int {
	if x.Rank() == 0 {
		return 1
	}
	return x.Shape()[axis]
}

// wideKeys says whether a dtype's sort keys take 64 bits.
func wideKeys(d core.DType) bool { return d == core.F64 || d == core.I64 }

// valueKey is the keygen of lane operand 0's elements, ascending, or
// descending when A.s[16] is all ones.
const valueKey = "const K key_ = wt_sort_key(ld(p0[wt_lane<KR>(A, 0, row) + j * WT_ALONG(0)])) ^ (K)A.s[16];"

// emitSelection is the emit that copies element ix of lane operand 0 to
// position p of values (operand 1, when withValues) and writes ix to
// indices (the next operand); src is the C++ of ix's index in x.
func emitSelection(withValues bool, src string) string {
	var sb strings.Builder
	idxOp := 1
	if withValues {
		idxOp = 2
		sb.WriteString("p1[wt_lane<KR>(A, 1, row) + p * WT_ALONG(1)] = p0[wt_lane<KR>(A, 0, row) + (idx)(" + src + ") * WT_ALONG(0)];\n")
	}
	fmt.Fprintf(&sb, "p%d[wt_lane<KR>(A, %d, row) + p * WT_ALONG(%d)] = (i64)(%s);", idxOp, idxOp, idxOp, src)
	return sb.String()
}

func flagWord(on bool) int64 {
	if on {
		return -1
	}
	return 0
}

// sortKernel serves sort (values and indices) and argsort (indices).
func sortKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	axis, err := sortAxisOf(x, k.Attrs)
	if err != nil {
		return err
	}
	ops := []laneOp{laneWalk(x, axis, false, false)}
	for _, o := range k.Outputs {
		ops = append(ops, laneWalk(o, axis, false, true))
	}
	lk, err := newLanes(k.Op.Name, keptShape(x.Shape(), axis, false), ops...)
	if err != nil {
		return err
	}
	lk.s[16] = flagWord(k.Attrs.Bool("descending"))
	n := sortLen(x, axis)
	values := len(k.Outputs) == 2
	name := "sel"
	if values {
		name = "selv"
	}
	return cudaOf(k).sortRows(rowSorter{lk: lk, n: n, k: n, wide: wideKeys(x.DType()), keygen: valueKey,
		emit: emitSelection(values, "ix"), name: name})
}

// topkKernel sorts with the largest first (or the smallest) and keeps k.
// Unsorted output lists the chosen elements in index order: their indices
// go to a scratch row and are sorted again, by index.
func topkKernel(k *core.KernelCall) error {
	x, values, indices := k.Inputs[0], k.Outputs[0], k.Outputs[1]
	axis, err := sortAxisOf(x, k.Attrs)
	if err != nil {
		return err
	}
	n, kk := sortLen(x, axis), k.Attrs.Int("k")
	if kk < 0 || kk > n {
		return fmt.Errorf("k %d out of range for axis %d of size %d", kk, axis, n)
	}
	ops := []laneOp{laneWalk(x, axis, false, false), laneWalk(values, axis, false, true), laneWalk(indices, axis, false, true)}
	lk, err := newLanes("topk", keptShape(x.Shape(), axis, false), ops...)
	if err != nil {
		return err
	}
	lk.s[16] = flagWord(k.Attrs.Bool("largest"))
	b := cudaOf(k)
	wide := wideKeys(x.DType())
	if k.Attrs.Bool("sorted") {
		return b.sortRows(rowSorter{lk: lk, n: n, k: kk, wide: wide, keygen: valueKey, emit: emitSelection(true, "ix"), name: "selv"})
	}
	rows := lk.lanes()
	if rows == 0 || kk == 0 {
		return nil
	}
	sel, err := b.scratch(rows*kk, core.I32)
	if err != nil {
		return err
	}
	defer sel.Release()
	err = b.sortRows(rowSorter{lk: lk.with(flatOp(sel, true)), n: n, k: kk, wide: wide, keygen: valueKey,
		emit: "p3[row * kk + p] = (i32)ix;", name: "topk1"})
	if err != nil {
		return err
	}
	return b.sortRows(rowSorter{lk: lk.with(flatOp(sel, false)), n: kk, k: kk,
		keygen: "const K key_ = (K)(u32)p3[row * kk + j];", emit: emitSelection(true, "key"), name: "topk2"})
}

// uniqueKernel sorts the flattened input (stably, as the CPU), so equal
// values are neighbours and each group's first element is its first
// occurrence; a compaction over the sorted positions numbers the groups
// (reading back how many there are, which sizes the outputs) and writes
// each group's value, the inverse and the counts (integer atomics, exact
// in any order). For order of first occurrence, a second compaction over
// the input's positions ranks the groups by where they start.
func uniqueKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	b := cudaOf(k)
	n := x.Numel()
	wantInv, wantCnt := k.Attrs.Bool("return_inverse"), k.Attrs.Bool("return_counts")
	xc := x.Contiguous()
	if err := xc.Err(); err != nil {
		return err
	}
	if xc != x {
		defer xc.Release()
	}
	if n == 0 {
		return uniqueEmpty(k, x, wantInv, wantCnt)
	}
	wide := wideKeys(x.DType())
	keyD, keyT := core.I32, "u32"
	if wide {
		keyD, keyT = core.I64, "u64"
	}
	sk, err := b.scratch(n, keyD)
	if err != nil {
		return err
	}
	defer sk.Release()
	si, err := b.scratch(n, core.I32)
	if err != nil {
		return err
	}
	defer si.Release()
	flat := laneOp{t: xc, off: xc.Offset(), along: 1}
	lk, err := newLanes("unique", nil, flat, flatOp(sk, true), flatOp(si, true))
	if err != nil {
		return err
	}
	err = b.sortRows(rowSorter{lk: lk, n: n, k: n, wide: wide, name: "unique",
		keygen: "const K key_ = wt_sort_key(ld(p0[(idx)A.off[0] + j]));",
		emit:   "p1[p] = (" + storageType(keyD) + ")key;\np2[p] = (i32)ix;"})
	if err != nil {
		return err
	}
	// A group starts where the key changes; every NaN is a group.
	start := func(at string) string {
		s := "p0[" + at + "] != p0[" + at + " - 1]"
		if x.DType().IsFloat() {
			s += " || (" + keyT + ")p0[" + at + "] == (" + keyT + ")~(" + keyT + ")0"
		}
		return s
	}
	flagKey := "u" + keyT + map[bool]string{true: "f", false: "i"}[x.DType().IsFloat()]
	flag := "f = i == 0 || " + start("i") + ";"
	end := "i == n - 1 || " + start("i + 1")
	g := &genKernel{op: "unique", shape: []int{n}, ops: []genOp{positional(sk, 1, false), positional(si, 1, false)}}
	c, err := b.newCompaction(g, flagKey, func() string { return flag })
	if err != nil {
		return err
	}
	defer c.offsets.Release()
	if err := b.countSelected(c, ""); err != nil {
		return err
	}
	groups, err := c.total()
	if err != nil {
		return err
	}
	u := &uniqueOut{b: b, k: k, x: x, xc: xc, groups: groups, wantInv: wantInv, wantCnt: wantCnt}
	if err := u.alloc(); err != nil {
		return err
	}
	if k.Attrs.Bool("sorted") {
		err = u.sortedWrite(c, end)
	} else {
		err = u.firstOccurrence(c, end, n)
	}
	if err != nil {
		u.release()
		return err
	}
	k.SetOutputs(u.outputs()...)
	return nil
}

// uniqueOut holds unique's outputs while they are written.
type uniqueOut struct {
	b                   *Backend
	k                   *core.KernelCall
	x, xc               *core.Tensor
	groups              int
	wantInv, wantCnt    bool
	values, inv, counts *core.Tensor
}

func (u *uniqueOut) alloc() error {
	var err error
	if u.values, err = u.k.Alloc(core.Shape{u.groups}, u.x.DType()); err != nil {
		return err
	}
	if u.wantInv {
		if u.inv, err = u.k.Alloc(u.x.Shape(), core.I64); err != nil {
			return err
		}
	}
	if u.wantCnt {
		if u.counts, err = u.k.Alloc(core.Shape{u.groups}, core.I64); err != nil {
			return err
		}
		return u.b.zeroFill(u.counts)
	}
	return nil
}

func (u *uniqueOut) release() {
	for _, t := range []*core.Tensor{u.values, u.inv, u.counts} {
		t.Release()
	}
}

func (u *uniqueOut) outputs() []*core.Tensor {
	outs := []*core.Tensor{u.values}
	if u.inv != nil {
		outs = append(outs, u.inv)
	}
	if u.counts != nil {
		outs = append(outs, u.counts)
	}
	return outs
}

// countCode adds group gid's size into the i64 counts at cnt through
// atomics: minus its start's position at the start, plus its end's
// position + 1 at the end.
func countCode(cnt, end string) string {
	return "if (f) wt_atomic_add(&(" + cnt + ")[gid], -(i64)i);\nif (" + end + ") wt_atomic_add(&(" + cnt + ")[gid], (i64)i + 1);\n"
}

// withOps replaces c's operands after the first m by more, keeping the
// offsets last.
func withOps(c *compaction, m int, more ...genOp) {
	offs := c.g.ops[len(c.g.ops)-1]
	c.g.ops = append(append(append([]genOp{}, c.g.ops[:m]...), more...), offs)
}

// sortedWrite writes groups in value order: group gid of sorted position
// i is the number of starts up to i, less one.
func (u *uniqueOut) sortedWrite(c *compaction, end string) error {
	more := []genOp{positional(u.xc, 1, false), positional(u.values, 1, true)}
	var w strings.Builder
	w.WriteString("const idx e = (idx)(u32)p1[i];\nconst idx gid = f ? (idx)q : (idx)q - 1;\n")
	w.WriteString("if (f) p3[(idx)A.off[3] + (idx)q] = p2[(idx)A.off[2] + e];\n")
	key := "usw"
	if u.inv != nil {
		fmt.Fprintf(&w, "p%d[(idx)A.off[%d] + e] = (i64)gid;\n", len(more)+2, len(more)+2)
		more = append(more, positional(u.inv, 1, true))
		key += "i"
	}
	if u.counts != nil {
		at := len(more) + 2
		w.WriteString(countCode(fmt.Sprintf("p%d + (idx)A.off[%d]", at, at), end))
		more = append(more, positional(u.counts, 1, true))
		key += "c"
	}
	withOps(c, 2, more...)
	code := w.String()
	return u.b.writeSelected(c, key, func() string { return code })
}

// firstOccurrence writes groups in order of first occurrence: the sorted
// pass marks each group's first position in the input and notes every
// element's sorted group (and the groups' sizes); a compaction over the
// marks ranks the groups, writes values and counts and maps sorted groups
// to ranks, through which a last kernel writes the inverse.
func (u *uniqueOut) firstOccurrence(c *compaction, end string, n int) error {
	b := u.b
	var tmp []*core.Tensor
	defer func() {
		for _, t := range tmp {
			t.Release()
		}
	}()
	temp := func(n int, d core.DType) (*core.Tensor, error) {
		t, err := b.scratch(n, d)
		if err == nil {
			tmp = append(tmp, t)
		}
		return t, err
	}
	mark, err := temp(n, core.U8)
	if err != nil {
		return err
	}
	gidOf, err := temp(n, core.I64)
	if err != nil {
		return err
	}
	cnt, err := temp(u.groups, core.I64)
	if err != nil {
		return err
	}
	if err := b.zeroFill(mark); err != nil {
		return err
	}
	if err := b.zeroFill(cnt); err != nil {
		return err
	}
	withOps(c, 2, positional(mark, 1, true), positional(gidOf, 1, true), positional(cnt, 1, true))
	w := "const idx e = (idx)(u32)p1[i];\nconst idx gid = f ? (idx)q : (idx)q - 1;\np3[e] = gid;\nif (f) p2[e] = 1;\n" + countCode("p4", end)
	if err := b.writeSelected(c, "ufo1", func() string { return w }); err != nil {
		return err
	}
	remap, err := temp(u.groups, core.I64)
	if err != nil {
		return err
	}
	g := &genKernel{op: "unique", shape: []int{n}, ops: []genOp{positional(mark, 1, false), positional(gidOf, 1, false),
		positional(cnt, 1, false), positional(u.xc, 1, false), positional(remap, 1, true), positional(u.values, 1, true)}}
	w2 := "if (f) {\nconst idx gid = (idx)p1[i];\np4[gid] = (i64)q;\np5[(idx)A.off[5] + (idx)q] = p3[(idx)A.off[3] + i];\n"
	key := "ufo2"
	if u.counts != nil {
		g.ops = append(g.ops, positional(u.counts, 1, true))
		w2 += "p6[(idx)A.off[6] + (idx)q] = p2[gid];\n"
		key += "c"
	}
	w2 += "}\n"
	c2, err := b.newCompaction(g, "umark", func() string { return "f = p0[i] != 0;" })
	if err != nil {
		return err
	}
	defer c2.offsets.Release()
	if err := b.countSelected(c2, ""); err != nil {
		return err
	}
	if err := b.writeSelected(c2, key, func() string { return w2 }); err != nil {
		return err
	}
	if u.inv == nil {
		return nil
	}
	gi := &genKernel{op: "unique", shape: []int{n}, ops: []genOp{{t: u.inv, offset: u.inv.Offset(), strides: []int{1}, out: true},
		positional(gidOf, 1, false), positional(remap, 1, false)}}
	return b.runIndexedKeyed(gi, "uinv", func() string { return "p0[" + gi.at(0) + "] = p2[p1[i]];" })
}

// uniqueEmpty is unique of no elements.
func uniqueEmpty(k *core.KernelCall, x *core.Tensor, wantInv, wantCnt bool) error {
	values, err := k.Alloc(core.Shape{0}, x.DType())
	if err != nil {
		return err
	}
	outs := []*core.Tensor{values}
	if wantInv {
		inv, err := k.Alloc(x.Shape(), core.I64)
		if err != nil {
			return err
		}
		outs = append(outs, inv)
	}
	if wantCnt {
		cnt, err := k.Alloc(core.Shape{0}, core.I64)
		if err != nil {
			return err
		}
		outs = append(outs, cnt)
	}
	k.SetOutputs(outs...)
	return nil
}
