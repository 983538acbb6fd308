//go:build linux && cgo

package cuda

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// CUDA kernels of ops whose GPU kernel is one row body (core.ElementBody
// with Rows; bodyKernel parses it): the body's statements translated
// (translateBody) inside a block-stride loop over the rows, one block of
// lower.RowLanes threads per row at a time; store is a macro over the
// output, and row_sum, row_max, row_min halve through shared memory in the
// order wgsl/rows.wgsl does, so both backends add a row's partial sums
// alike.

// rowsArgSlot is the argument slot of the row count (A.s[k] is input k's
// element count for k < maxOps).
const rowsArgSlot = maxOps

// rowsRun launches a row body over rows.
func (b *Backend) rowsRun(op string, ins []*core.Tensor, out *core.Tensor, rows int, code bodyCode, sc *lower.Scalars) error {
	if len(ins)+1 > maxOps || out.Shape().Rank() > maxRank {
		return fmt.Errorf("cuda: %s: a GPU row body takes at most %d inputs and rank %d", op, maxOps-1, maxRank)
	}
	if out.Numel() > math.MaxUint32 {
		return fmt.Errorf("cuda: %s: %d output elements; a GPU row body indexes with u32", op, out.Numel())
	}
	a, ops, ranks, err := bodyArgs(op, ins, out, sc)
	if err != nil {
		return err
	}
	a.S[rowsArgSlot] = int64(rows)
	outS := storageType(out.DType())
	var key strings.Builder
	fmt.Fprintf(&key, "rows_%s|r%d|%v|%s|%s|%s", op, out.Shape().Rank(), ranks, outS, code.float, code.src)
	for _, o := range ops {
		key.WriteString("|" + o.storage)
	}
	k, err := b.kernelFor(key.String(), func() (string, error) {
		return rowsSource(ops, ranks, outS, out.Shape().Rank(), code), nil
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", op, err)
	}
	return b.launch(launchSpec{op: op, k: k, grid: b.gridFor(int64(rows)*lower.RowLanes, lower.RowLanes), block: lower.RowLanes}, a)
}

// rowsSource is the kernel: the helpers, store and the collectives, and a
// block-stride loop that runs the body for each of the block's rows.
func rowsSource(ops []operand, ranks []int, outS string, rank int, code bodyCode) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", lower.RowLanes, entry)
	bodyHelpers(&sb, ops, ranks, outS, rank, code.float)
	fmt.Fprintf(&sb, "#define store(j, v) put(&out0[A.off[%d] + (i64)(j)], (v))\n", len(ops))
	f := code.float
	fmt.Fprintf(&sb, "__shared__ %s wt_red[%d];\nconst u32 lane = threadIdx.x;\nconst u32 lanes = %du;\n", f, lower.RowLanes, lower.RowLanes)
	// The halving of wgsl/rows.wgsl's wt_row, step for step.
	fmt.Fprintf(&sb, "auto wt_row = [&](const %s v, const int op) -> %s {\n", f, f)
	sb.WriteString("  __syncthreads();\n  wt_red[lane] = v;\n  __syncthreads();\n")
	sb.WriteString("  for (u32 s = lanes / 2u; s > 0u; s >>= 1u) {\n    if (lane < s) {\n")
	fmt.Fprintf(&sb, "      const %s a = wt_red[lane], b = wt_red[lane + s];\n", f)
	sb.WriteString("      wt_red[lane] = op == 0 || is_nan(a) || is_nan(b) ? a + b : op == 1 ? w_max(a, b) : w_min(a, b);\n")
	sb.WriteString("    }\n    __syncthreads();\n  }\n  return wt_red[0];\n};\n")
	fmt.Fprintf(&sb, "#define row_sum(v) wt_row((%s)(v), 0)\n#define row_max(v) wt_row((%s)(v), 1)\n#define row_min(v) wt_row((%s)(v), 2)\n", f, f, f)
	fmt.Fprintf(&sb, "for (i64 wt_r = blockIdx.x; wt_r < A.s[%d]; wt_r += gridDim.x) {\nconst u32 row = (u32)wt_r;\n", rowsArgSlot)
	sb.WriteString(translateBody(code.stmts, code.float == lower.F32))
	sb.WriteString("}\n}\n")
	return sb.String()
}
