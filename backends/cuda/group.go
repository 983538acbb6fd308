//go:build linux && cgo

package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Group loops: one thread per frame group walking its members in order,
// for the ops whose members depend on each other (scans, prefix and
// suffix products, gradients shared among ties). They compute exactly as
// the CPU's sequential loops do, in the same order and in f64 or i64. A
// group's members are read and written through X<k>(r) and W<k>(r, v) (k
// an operand, r a member index), R is the member count, and A's scalar
// slots are there as in every kernel. Parallelism is the group count, so
// a single long line runs on one thread; the ops using this are rarely on
// a hot path.

type groupLoop struct {
	op    string
	frame lower.Frame
	ins   []*core.Tensor
	outs  []*core.Tensor // shaped like the frame
	body  string
	sc    *lower.Scalars
}

func (b *Backend) group(p groupLoop) error {
	O, R := p.frame.Groups(), p.frame.Members()
	if O == 0 {
		return nil
	}
	all := append(append([]*core.Tensor{}, p.ins...), p.outs...)
	if len(all) > maxOps {
		return fmt.Errorf("cuda: %s: %d operands; a kernel takes at most %d", p.op, len(all), maxOps)
	}
	var a wtArgs
	l, ops, err := frameArgs(p.op, p.frame, all, &a)
	if err != nil {
		return err
	}
	if p.sc != nil {
		a.setScalars(p.sc)
	}
	a.N, a.S[0] = int64(O), int64(R)
	s := reduceShape{keptRank: len(l.KeptShape), redRank: len(l.RedShape), wide: reduceNeeds64(O, R, 1, l, all)}
	var kb strings.Builder
	kb.WriteString("group|")
	kb.WriteString(strconv.Itoa(s.keptRank*10 + s.redRank))
	if s.wide {
		kb.WriteByte('w')
	}
	for _, o := range ops {
		kb.WriteString("|" + o.storage)
	}
	kb.WriteString("|" + strconv.Itoa(len(p.ins)) + "|" + p.body)
	k, err := b.kernelFor(kb.String(), func() (string, error) { return groupSource(p, ops, s), nil })
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", p.op, err)
	}
	return b.launch(launchSpec{op: p.op, k: k, grid: b.gridFor(int64(O), genBlock), block: genBlock}, &a)
}

func groupSource(p groupLoop, ops []operand, s reduceShape) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", genBlock, entry)
	fmt.Fprintf(&sb, "typedef %s idx;\nconst idx O = (idx)A.n, R = (idx)A.s[0];\n", idxType(s.wide))
	for k, o := range ops {
		fmt.Fprintf(&sb, "%s* __restrict__ in%d = (%s*)A.buf[%d];\n", o.storage, k, o.storage, k)
	}
	fmt.Fprintf(&sb, "for (idx o = (idx)blockIdx.x * %d + (idx)threadIdx.x; o < O; o += (idx)gridDim.x * %d) {\n", genBlock, genBlock)
	sb.WriteString(keptOffsets(len(ops), s.keptRank))
	for k, o := range ops {
		fmt.Fprintf(&sb, "auto ro%d = [&](idx r) -> idx {\n", k)
		if s.redRank > 1 {
			sb.WriteString("idx m_ = r;\n")
			for d := s.redRank - 1; d >= 1; d-- {
				fmt.Fprintf(&sb, "const idx j%d = m_ %% (idx)A.shape[%d]; m_ /= (idx)A.shape[%d];\n", d, maxKeptRank+d, maxKeptRank+d)
			}
			sb.WriteString("const idx j0 = m_;\n")
		} else {
			sb.WriteString("const idx j0 = r;\n")
		}
		fmt.Fprintf(&sb, "return kb%d", k)
		for d := range s.redRank {
			fmt.Fprintf(&sb, " + j%d * (idx)A.st[%d][%d]", d, k, maxKeptRank+d)
		}
		sb.WriteString(";\n};\n")
		if k < len(p.ins) {
			fmt.Fprintf(&sb, "auto X%d = [&](idx r) -> %s { return ld(in%d[ro%d(r)]); };\n", k, o.compute, k, k)
		} else {
			fmt.Fprintf(&sb, "auto W%d = [&](idx r, auto v) { put(&in%d[ro%d(r)], v); };\n", k, k, k)
		}
	}
	sb.WriteString(p.body)
	sb.WriteString("\n}\n}\n")
	return sb.String()
}
