//go:build linux && cgo

package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Row programs: softmax, the norms and their gradients. A group of G
// threads owns one row (a frame group); it makes one or more passes over
// the row's members, each accumulating statistics that the group merges
// and shares, then a last pass writes each member's outputs. Rows up to a
// few thousand members stay in L1/L2 between passes, so the extra passes
// cost little memory traffic.

// rowStat is one statistic of a pass: an accumulator (cu/reduce.cuh or
// cu/rows.cuh) pushed value (C++ over the operands x0..) per member; later
// code reads it as the accumulator named name.
type rowStat struct{ name, acc, value string }

// rowPass is one pass over a row: its statistics, then C++ that every
// thread of the group runs once they are merged, declaring per-row values
// from them (R is the member count) for later passes and the writes.
type rowPass struct {
	stats []rowStat
	then  string
}

// rowDerived is C++ value (over x0.. and what passes before it declared)
// named name, of the first operand's compute type, available from pass
// after+1 on and in the writes.
type rowDerived struct {
	name, value string
	after       int
}

type rowProgram struct {
	op     string
	frame  lower.Frame
	ins    []*core.Tensor
	outs   []*core.Tensor // shaped like the frame, written per member
	passes []rowPass
	// writes are the per-member C++ values of outs.
	writes []string
	// derived (optional) is a per-member value that later passes and the
	// writes read by name: kept in registers beside a cached row (so an
	// exp is taken once per member, not once per pass), recomputed from
	// the member otherwise.
	derived *rowDerived
	// rowOut (optional) receives len(rowWrites) values per row, at
	// rowOut[o*len + i]: statistics a later kernel reads.
	rowOut    *core.Tensor
	rowWrites []string
	sc        *lower.Scalars
	// check (optional) is a C++ condition on the row (reading operands at
	// their row offsets kb0..), tested once per row, that makes it invalid: the kernel reports it
	// (wt_fail with checkValue and the row) and checkMsg words the error.
	check, checkValue string
	checkMsg          func(code uint32, value, row int64) string
}

func (b *Backend) rows(p rowProgram) error {
	f := p.frame
	O, R := f.Groups(), f.Members()
	if O == 0 {
		return nil
	}
	all := append(append([]*core.Tensor{}, p.ins...), p.outs...)
	extra := 0
	if p.rowOut != nil {
		extra = 1
	}
	if len(all)+extra > maxOps {
		return fmt.Errorf("cuda: %s: %d operands; a row kernel takes at most %d", p.op, len(all), maxOps-extra)
	}
	var a wtArgs
	l, ops, err := frameArgs(p.op, f, all, &a)
	if err != nil {
		return err
	}
	if p.rowOut != nil {
		ptr, err := ptrOf(p.rowOut)
		if err != nil {
			return err
		}
		a.Buf[len(all)] = ptr
	}
	if p.sc != nil {
		a.setScalars(p.sc)
	}
	g := 1
	if R > 1 {
		g = min(256, max(32, nextPow2((R+7)/8)))
	}
	a.N, a.S[0] = int64(O), int64(R)
	wide := reduceNeeds64(O, R, 1, l, all)
	s := reduceShape{keptRank: len(l.KeptShape), redRank: len(l.RedShape), g: g, wide: wide}
	if k := (R + g - 1) / g; R > 0 && k <= maxCachedPerThread {
		s.cache = k
	}
	k, err := b.kernelFor(rowKey(p, ops, s), func() (string, error) { return rowSource(p, ops, s), nil })
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", p.op, err)
	}
	perBlock := reduceBlock / g
	blocks := (O + perBlock - 1) / perBlock
	grid := [3]uint32{uint32(min(blocks, max(b.props.sms, 1)*32)), 1, 1}
	return b.launch(launchSpec{op: p.op, k: k, grid: grid, block: reduceBlock, check: p.checkMsg}, &a)
}

// rowKey names a row kernel by everything its source depends on; it is
// built on every call, so it is short and made without fmt.
func rowKey(p rowProgram, ops []operand, s reduceShape) string {
	var sb strings.Builder
	sb.WriteString("rows|")
	for _, v := range []int{s.keptRank, s.redRank, s.g, s.cache, len(p.ins), len(p.outs)} {
		sb.WriteString(strconv.Itoa(v))
		sb.WriteByte(',')
	}
	if s.wide {
		sb.WriteByte('w')
	}
	for _, o := range ops {
		sb.WriteString(o.storage)
		sb.WriteByte(',')
	}
	for _, pass := range p.passes {
		sb.WriteString("|P")
		for _, st := range pass.stats {
			sb.WriteString(st.name + ":" + st.acc + ":" + st.value + ";")
		}
		sb.WriteString(pass.then)
	}
	for _, w := range p.writes {
		sb.WriteString("|W" + w)
	}
	if p.rowOut != nil {
		sb.WriteString("|O" + storageType(p.rowOut.DType()))
		for _, w := range p.rowWrites {
			sb.WriteString(";" + w)
		}
	}
	if d := p.derived; d != nil {
		sb.WriteString("|D" + strconv.Itoa(d.after) + d.name + "=" + d.value)
	}
	sb.WriteString("|C" + p.check + ";" + p.checkValue)
	return sb.String()
}

// maxCachedPerThread bounds the members a thread keeps in registers: a row
// of up to G*32 members (8192 at G = 256) is read from memory once, every
// pass after the first walking the registers, instead of once per pass
// (softmax and layer norm took 1.8x their bandwidth floor on an H200
// reading twice).
const maxCachedPerThread = 32

func rowSource(p rowProgram, ops []operand, s reduceShape) string {
	var sb strings.Builder
	sb.WriteString(reduceLib)
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", reduceBlock, entry)
	fmt.Fprintf(&sb, "typedef %s idx;\nconstexpr int G = %d;\nconstexpr int GPB = %d / G;\n", idxType(s.wide), s.g, reduceBlock)
	sb.WriteString("const idx O = (idx)A.n, R = (idx)A.s[0];\nconst int lane = threadIdx.x % G, grp = threadIdx.x / G;\n")
	for k, o := range ops {
		fmt.Fprintf(&sb, "%s* __restrict__ in%d = (%s*)A.buf[%d];\n", o.storage, k, o.storage, k)
	}
	if p.rowOut != nil {
		st := storageType(p.rowOut.DType())
		fmt.Fprintf(&sb, "%s* __restrict__ rowout = (%s*)A.buf[%d];\n", st, st, len(ops))
	}
	for _, pass := range p.passes {
		for _, st := range pass.stats {
			fmt.Fprintf(&sb, "__shared__ %s sh_%s[8];\n__shared__ %s bc_%s[GPB];\n", st.acc, st.name, st.acc, st.name)
		}
	}
	sb.WriteString("for (idx job0 = (idx)blockIdx.x * GPB; job0 < O; job0 += (idx)gridDim.x * GPB) {\n")
	sb.WriteString("const idx o = job0 + grp;\nconst bool live = o < O;\n")
	sb.WriteString(keptOffsets(len(ops), s.keptRank))
	nIn := len(p.ins)
	load := func() string {
		var lb strings.Builder
		lb.WriteString(memberOffsets(len(ops), s.redRank))
		for k, o := range ops[:nIn] {
			fmt.Fprintf(&lb, "const %s x%d = ld(in%d[kb%d + ro%d]);\n", o.compute, k, k, k, k)
		}
		return lb.String()
	}
	// members writes a loop over the thread's members with x0.. defined:
	// from registers (cached mode, the K members lane + u*G) or from memory.
	members := func(body string, offsets, derived bool) string {
		if s.cache == 0 {
			if derived {
				body = fmt.Sprintf("const %s %s = %s;\n", ops[0].compute, p.derived.name, p.derived.value) + body
			}
			return "if (live) for (idx r = lane; r < R; r += G) {\n" + load() + body + "}\n"
		}
		if derived {
			body = fmt.Sprintf("const %s %s = d_%s[u];\n", ops[0].compute, p.derived.name, p.derived.name) + body
		}
		var mb strings.Builder
		fmt.Fprintf(&mb, "if (live) {\n#pragma unroll\nfor (int u = 0; u < %d; u++) {\nconst idx r = lane + (idx)u * G;\nif (r < R) {\n", s.cache)
		if offsets {
			mb.WriteString(memberOffsets(len(ops), s.redRank))
		}
		for k, o := range ops[:nIn] {
			fmt.Fprintf(&mb, "const %s x%d = c%d[u];\n", o.compute, k, k)
		}
		mb.WriteString(body + "}\n}\n}\n")
		return mb.String()
	}
	if s.cache > 0 {
		for k, o := range ops[:nIn] {
			fmt.Fprintf(&sb, "%s c%d[%d];\n", o.compute, k, s.cache)
		}
		fmt.Fprintf(&sb, "if (live) {\n#pragma unroll\nfor (int u = 0; u < %d; u++) {\nconst idx r = lane + (idx)u * G;\nif (r < R) {\n", s.cache)
		sb.WriteString(memberOffsets(len(ops), s.redRank))
		for k := range ops[:nIn] {
			fmt.Fprintf(&sb, "c%d[u] = ld(in%d[kb%d + ro%d]);\n", k, k, k, k)
		}
		sb.WriteString("}\n}\n}\n")
	}
	if p.check != "" {
		fmt.Fprintf(&sb, "if (live && lane == 0 && (%s)) wt_fail(A, 2, (i64)(%s), (i64)o);\n", p.check, p.checkValue)
	}
	for i, pass := range p.passes {
		withDerived := p.derived != nil && i > p.derived.after
		var push strings.Builder
		for _, st := range pass.stats {
			fmt.Fprintf(&sb, "%s %s;\n%s.init();\n", st.acc, st.name, st.name)
			fmt.Fprintf(&push, "%s.push(%s, (i64)r);\n", st.name, st.value)
		}
		if len(pass.stats) > 0 {
			sb.WriteString(members(push.String(), false, withDerived))
		}
		for _, st := range pass.stats {
			fmt.Fprintf(&sb, "group_reduce<G>(%s, sh_%s);\n", st.name, st.name)
			fmt.Fprintf(&sb, "if (G > 1) {\nif (lane == 0) bc_%s[grp] = %s;\n__syncthreads();\n%s = bc_%s[grp];\n__syncthreads();\n}\n", st.name, st.name, st.name, st.name)
		}
		sb.WriteString(pass.then + "\n")
		if d := p.derived; d != nil && d.after == i && s.cache > 0 {
			fmt.Fprintf(&sb, "%s d_%s[%d];\n", ops[0].compute, d.name, s.cache)
			sb.WriteString(members(fmt.Sprintf("d_%s[u] = %s;\n", d.name, d.value), false, false))
		}
	}
	if p.rowOut != nil {
		sb.WriteString("if (live && lane == 0) {\n")
		for i, w := range p.rowWrites {
			fmt.Fprintf(&sb, "put(&rowout[o * %d + %d], %s);\n", len(p.rowWrites), i, w)
		}
		sb.WriteString("}\n")
	}
	if len(p.outs) > 0 {
		var wb strings.Builder
		for i, w := range p.writes {
			k := nIn + i
			fmt.Fprintf(&wb, "put(&in%d[kb%d + ro%d], %s);\n", k, k, k, w)
		}
		sb.WriteString(members(wb.String(), true, p.derived != nil))
	}
	sb.WriteString("}\n}\n")
	return sb.String()
}
