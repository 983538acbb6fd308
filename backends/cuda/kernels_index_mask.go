//go:build linux && cgo

package cuda

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// masked_select, its gradient and nonzero are stream compactions in three
// launches: each block counts the selected elements of its contiguous
// range of the iteration, one block turns the counts into each block's
// first output position (and the total), and each block then writes its
// selected elements in row-major order from there, a block-wide prefix sum
// (cu/scan.cuh) placing each one. The dynamic ops read the total back to
// size their output (a synchronisation, as on the CPU); the gradient
// checks g's length against it in the kernel instead.

func init() {
	register("masked_select", maskedSelectKernel)
	register("_masked_select_grad", maskedSelectGradKernel)
	register("nonzero", nonzeroKernel)
}

// compaction is the plan of one: the iteration and operands (g; the
// offsets buffer is its last operand), the C++ that sets f for element i
// (flag, told apart from others by flagKey), and the blocks, each
// covering per elements.
type compaction struct {
	g       *genKernel
	flagKey string
	flag    func() string
	blocks  int
	per     int
	offsets *core.Tensor // i64 [blocks+1]: each block's first position, then the total
}

// newCompaction plans g's iteration and allocates the offsets; the caller
// releases them.
func (b *Backend) newCompaction(g *genKernel, flagKey string, flag func() string) (*compaction, error) {
	n := int(g.numel())
	blocks := max(min((n+genBlock-1)/genBlock, max(b.props.sms, 1)*32), 1)
	per := (n + blocks - 1) / blocks
	per = (per + genBlock - 1) / genBlock * genBlock
	blocks = max((n+per-1)/max(per, 1), 1)
	offsets, err := core.Empty(b, core.Shape{blocks + 1}, core.I64)
	if err != nil {
		return nil, err
	}
	rank := len(g.shape)
	g.ops = append(g.ops, genOp{t: offsets, strides: make([]int, rank), out: true})
	g.param(30, int64(per))
	g.param(29, int64(blocks))
	return &compaction{g: g, flagKey: flagKey, flag: flag, blocks: blocks, per: per, offsets: offsets}, nil
}

// offs names the offsets operand in kernel sources.
func (c *compaction) offs() string { return fmt.Sprintf("p%d", len(c.g.ops)-1) }

// blockRange is the C++ that declares the block's range [lo, hi).
const blockRange = "__shared__ u64 sh[WT_SCAN_BLOCK / 32];\nconst idx per = (idx)A.s[30];\n" +
	"const idx lo = (idx)blockIdx.x * per, hi = lo + per < n ? lo + per : n;\n"

// countSelected runs the counting and the scan; check (optional C++,
// after the scan, with the total in carry; a constant) may fail the op.
func (b *Backend) countSelected(c *compaction, check string) error {
	g, n := c.g, c.g.numel()
	err := b.launchIndexed(g, n, [3]uint32{uint32(c.blocks), 1, 1}, "scancount|"+c.flagKey, func(wide bool) string {
		var sb strings.Builder
		sb.WriteString(g.prologue(wide))
		sb.WriteString(blockRange)
		fmt.Fprintf(&sb, "u64 cnt = 0;\nfor (idx i = lo + (idx)threadIdx.x; i < hi; i += %d) {\n%sbool f = false;\n%s\nif (f) cnt++;\n}\n", genBlock, coords(len(g.shape)), c.flag())
		fmt.Fprintf(&sb, "u64 tot;\nwt_block_scan(cnt, sh, tot);\nif (threadIdx.x == 0) %s[blockIdx.x] = (i64)tot;\n}\n", c.offs())
		return sb.String()
	})
	if err != nil {
		return err
	}
	// The scan: one block walks the counts in tiles.
	return b.launchIndexed(g, n, [3]uint32{1, 1, 1}, "scanscan|"+check, func(wide bool) string {
		var sb strings.Builder
		sb.WriteString(g.prologue(wide))
		sb.WriteString("__shared__ u64 sh[WT_SCAN_BLOCK / 32];\nconst idx P = (idx)A.s[29];\nu64 carry = 0;\n")
		fmt.Fprintf(&sb, "for (idx j0 = 0; j0 < P; j0 += %d) {\nconst idx j = j0 + (idx)threadIdx.x;\n", genBlock)
		fmt.Fprintf(&sb, "const u64 v = j < P ? (u64)%[1]s[j] : 0;\nu64 tot;\nconst u64 pre = wt_block_scan(v, sh, tot);\nif (j < P) %[1]s[j] = (i64)(carry + pre);\ncarry += tot;\n}\n", c.offs())
		fmt.Fprintf(&sb, "if (threadIdx.x == 0) {\n%s[P] = (i64)carry;\n%s\n}\n}\n", c.offs(), check)
		return sb.String()
	})
}

// total reads back the number of selected elements.
func (c *compaction) total() (int, error) {
	v, err := core.NewView(c.offsets, core.Shape{1}, []int{1}, c.blocks).Int64s()
	if err != nil {
		return 0, err
	}
	return int(v[0]), nil
}

// writeSelected runs the writing pass: write renders the C++ run for every
// element of the block's range, with f its flag and q its output position
// when set; writeKey tells it apart from others.
func (b *Backend) writeSelected(c *compaction, writeKey string, write func() string) error {
	g, n := c.g, c.g.numel()
	return b.launchIndexed(g, n, [3]uint32{uint32(c.blocks), 1, 1}, "scanwrite|"+c.flagKey+"|"+writeKey, func(wide bool) string {
		var sb strings.Builder
		sb.WriteString(g.prologue(wide))
		sb.WriteString(blockRange)
		fmt.Fprintf(&sb, "u64 base = (u64)%s[blockIdx.x];\n", c.offs())
		fmt.Fprintf(&sb, "for (idx i0 = lo; i0 < hi; i0 += %d) {\nconst idx i = i0 + (idx)threadIdx.x;\nbool f = false;\n", genBlock)
		fmt.Fprintf(&sb, "if (i < hi) {\n%s%s\n}\n", coords(len(g.shape)), c.flag())
		sb.WriteString("u64 tot;\nconst u64 q = base + wt_block_scan(f ? 1 : 0, sh, tot);\n")
		fmt.Fprintf(&sb, "if (i < hi) {\n%s%s\n}\nbase += tot;\n}\n}\n", coords(len(g.shape)), write())
		return sb.String()
	})
}

// maskFlag is the C++ flag of a bool mask operand 0.
func maskFlag(g *genKernel) func() string {
	return func() string { return fmt.Sprintf("f = ld(p0[%s]) != 0u;", g.at(0)) }
}

// positional is an operand the kernel indexes by output position, not by
// the iteration (its strides over it are zero).
func positional(t *core.Tensor, rank int, out bool) genOp {
	return genOp{t: t, offset: t.Offset(), strides: make([]int, rank), out: out}
}

func maskedSelectKernel(k *core.KernelCall) error {
	x, mask := k.Inputs[0], k.Inputs[1]
	s, err := core.BroadcastShapes(x.Shape(), mask.Shape())
	if err != nil {
		return err
	}
	b := cudaOf(k)
	if s.Numel() == 0 {
		out, err := k.Alloc(core.Shape{0}, x.DType())
		k.SetOutputs(out)
		return err
	}
	g := &genKernel{op: "masked_select", shape: s, ops: []genOp{walkOf(mask, s), walkOf(x, s)}}
	g.coalesce(-1)
	c, err := b.newCompaction(g, "mask", maskFlag(g))
	if err != nil {
		return err
	}
	defer c.offsets.Release()
	if err := b.countSelected(c, ""); err != nil {
		return err
	}
	n, err := c.total()
	if err != nil {
		return err
	}
	out, err := k.Alloc(core.Shape{n}, x.DType())
	if err != nil {
		return err
	}
	if n > 0 {
		// The output goes in before the offsets (the last operand).
		g.ops = append(g.ops[:2], positional(out, len(g.shape), true), g.ops[2])
		write := func() string { return fmt.Sprintf("if (f) p2[(idx)A.off[2] + (idx)q] = p1[%s];", g.at(1)) }
		if err := b.writeSelected(c, "select", write); err != nil {
			out.Release()
			return err
		}
	}
	k.SetOutputs(out)
	return nil
}

// maskedSelectGradKernel writes g's values, in order, where the mask is
// set and zeros elsewhere; the scan fails the op unless g has exactly as
// many elements as the mask selects.
func maskedSelectGradKernel(k *core.KernelCall) error {
	gr, mask, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	s := out.Shape()
	gn := gr.Numel()
	if s.Numel() == 0 {
		if gn != 0 {
			return fmt.Errorf("g has %d elements, the mask selects 0", gn)
		}
		return nil
	}
	g := &genKernel{op: "_masked_select_grad", shape: s, ops: []genOp{walkOf(mask, s), positional(gr, len(s), false), written(out)},
		check: func(_ uint32, have, want int64) string {
			return fmt.Sprintf("g has %d elements, the mask selects %d", have, want)
		}}
	g.param(28, int64(gn))
	g.param(27, int64(gr.Strides()[0]))
	g.coalesce(-1)
	b := cudaOf(k)
	c, err := b.newCompaction(g, "mask", maskFlag(g))
	if err != nil {
		return err
	}
	defer c.offsets.Release()
	if err := b.countSelected(c, "if (carry != (u64)A.s[28]) wt_fail(A, 1, A.s[28], (i64)carry);"); err != nil {
		return err
	}
	return b.writeSelected(c, "grad", func() string {
		return fmt.Sprintf("p2[%s] = f && q < (u64)A.s[28] ? p1[(idx)A.off[1] + (idx)q * (idx)A.s[27]] : %s;", g.at(2), zeroElem(out.DType()))
	})
}

// nonzeroKernel writes the coordinates of x's non-zero elements (NaN
// counts) as i64 rows. The iteration is x's own shape, unmerged: its
// coordinates are the output.
func nonzeroKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	s := x.Shape()
	rank := len(s)
	if x.Numel() == 0 {
		out, err := k.Alloc(core.Shape{0, rank}, core.I64)
		k.SetOutputs(out)
		return err
	}
	ct := computeType(x.DType())
	g := &genKernel{op: "nonzero", shape: s, ops: []genOp{walkOf(x, s)}}
	g.ops[0].strides = x.Strides()
	flag := func() string {
		return fmt.Sprintf("{ const %s xv = ld(p0[%s]);\nf = %s; }", ct, g.at(0), translate(lower.Truthy("xv", ct), single(ct)))
	}
	b := cudaOf(k)
	c, err := b.newCompaction(g, "nonzero", flag)
	if err != nil {
		return err
	}
	defer c.offsets.Release()
	if err := b.countSelected(c, ""); err != nil {
		return err
	}
	n, err := c.total()
	if err != nil {
		return err
	}
	out, err := k.Alloc(core.Shape{n, rank}, core.I64)
	if err != nil {
		return err
	}
	if n > 0 && rank > 0 {
		g.ops = append(g.ops[:1], positional(out, rank, true), g.ops[1])
		write := func() string {
			var w strings.Builder
			w.WriteString("if (f) {\n")
			for d := range rank {
				fmt.Fprintf(&w, "p1[(idx)A.off[1] + (idx)q * %d + %d] = (i64)c%d;\n", rank, d, d)
			}
			w.WriteString("}")
			return w.String()
		}
		if err := b.writeSelected(c, "coords", write); err != nil {
			out.Release()
			return err
		}
	}
	k.SetOutputs(out)
	return nil
}
