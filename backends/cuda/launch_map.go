//go:build linux && cgo

package cuda

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Elementwise map: out[i] = expr(x0, x1, ...) with each input read through
// its own strides (broadcasts and views cost no copy). expr is backends/
// lower's dialect, the same description the WebGPU backend compiles as
// WGSL. Each thread handles mapUnroll elements a block apart, loading all
// of them before computing, so enough loads are in flight to reach the
// memory bandwidth; the grid loops over what it does not cover.

const (
	mapBlock  = 256
	mapUnroll = 4
)

// operand is one input of a generated elementwise kernel.
type operand struct {
	storage, compute string
	contiguous       bool // walks the iteration in order: offset + i
}

// mapRun computes expr over ins (broadcast to out's shape) into out,
// with the scalar slots sc (nil: none). op names the call in errors.
func (b *Backend) mapRun(op string, ins []*core.Tensor, out *core.Tensor, expr string, sc *lower.Scalars) error {
	return b.mapRunGuarded(op, ins, out, expr, sc, nil)
}

// guard is a condition on the operands that makes an element invalid (an
// integer division by zero): the kernel reports the first one through
// wt_fail, and msg words the error the next read returns.
type guard struct {
	cond string
	msg  func(code uint32, a, b int64) string
}

// mapRunGuarded is mapRun with a guard (nil: none).
func (b *Backend) mapRunGuarded(op string, ins []*core.Tensor, out *core.Tensor, expr string, sc *lower.Scalars, g *guard) error {
	return b.mapRunOuts(op, ins, []*core.Tensor{out}, []string{expr}, sc, g)
}

// mapRunOuts is mapRunGuarded with one expression per output, all of one
// shape: each thread computes every expression at its element, so several
// results (an optimiser step's parameter and moments) cost one launch and
// one read of the inputs.
func (b *Backend) mapRunOuts(op string, ins, outs []*core.Tensor, exprs []string, sc *lower.Scalars, g *guard) error {
	out := outs[0]
	n := out.Numel()
	if n == 0 {
		return nil
	}
	if len(ins)+len(outs) > maxOps {
		return fmt.Errorf("cuda: %s: %d operands; a kernel takes at most %d", op, len(ins)+len(outs), maxOps)
	}
	for _, o := range outs {
		if !o.IsContiguous() || !o.Shape().Equal(out.Shape()) {
			return fmt.Errorf("cuda: %s: the outputs must be contiguous, of one shape", op)
		}
	}
	it := lower.NewIteration(out.Shape(), append(append([]*core.Tensor{}, ins...), out)...)
	rank := len(it.Shape)
	if rank > maxRank {
		return fmt.Errorf("cuda: %s: %d dims after merging contiguous ones; kernels take at most %d", op, rank, maxRank)
	}
	var a wtArgs
	a.N = int64(n)
	for d, s := range it.Shape {
		a.Shape[d] = int64(s)
	}
	ops := make([]operand, len(ins))
	types := make([]string, 0, len(ins)+len(outs))
	for k, t := range ins {
		p, err := ptrOf(t)
		if err != nil {
			return err
		}
		a.Buf[k] = p
		a.setOperand(k, it.Offsets[k], it.Strides[k])
		ops[k] = operand{storage: storageType(t.DType()), compute: computeType(t.DType()), contiguous: inOrder(it.Shape, it.Strides[k])}
		types = append(types, ops[k].compute)
	}
	outTypes := make([]string, len(outs))
	for j, o := range outs {
		p, err := ptrOf(o)
		if err != nil {
			return err
		}
		a.Buf[len(ins)+j] = p
		a.Off[len(ins)+j] = int64(o.Offset())
		outTypes[j] = storageType(o.DType())
		types = append(types, computeType(o.DType()))
	}
	if sc != nil {
		a.setScalars(sc)
	}
	wide := needs64(n, it, ins)
	cond := ""
	var msg func(uint32, int64, int64) string
	if g != nil {
		cond, msg = g.cond, g.msg
	}
	key := mapKey(ops, strings.Join(outTypes, ","), rank, wide, strings.Join(exprs, "|"), cond)
	k, err := b.kernelFor(key, func() (string, error) {
		one := single(types...)
		bodies := make([]string, len(exprs))
		for j, e := range exprs {
			bodies[j] = translate(e, one)
		}
		return mapSource(ops, outTypes, rank, wide, bodies, translate(cond, one)), nil
	})
	if err != nil {
		return fmt.Errorf("cuda: %s: %w", op, err)
	}
	return b.launch(launchSpec{op: op, k: k, grid: b.gridFor(int64((n+mapUnroll-1)/mapUnroll), mapBlock), block: mapBlock, check: msg}, &a)
}

// mapKey names a map kernel; it is built on every call, so without fmt.
func mapKey(ops []operand, out string, rank int, wide bool, body, guard string) string {
	var sb strings.Builder
	sb.Grow(len(body) + len(guard) + 16*len(ops) + 32)
	sb.WriteString("map|r")
	sb.WriteByte(byte('0' + rank))
	if wide {
		sb.WriteString("|w|")
	} else {
		sb.WriteString("|n|")
	}
	sb.WriteString(out)
	for _, o := range ops {
		sb.WriteByte('|')
		sb.WriteString(o.storage)
		if o.contiguous {
			sb.WriteByte('+')
		}
	}
	sb.WriteByte('|')
	sb.WriteString(body)
	sb.WriteByte('|')
	sb.WriteString(guard)
	return sb.String()
}

// inOrder reports whether strides walk shape row-major without gaps.
func inOrder(shape, strides []int) bool {
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if strides[d] != acc {
			return false
		}
		acc *= shape[d]
	}
	return true
}

// needs64 reports whether indexing must use 64-bit integers: 32-bit
// division is several times cheaper, so it is used whenever every index
// and offset fits (with room for the unrolled overshoot).
func needs64(n int, it lower.Iteration, ts []*core.Tensor) bool {
	const limit = math.MaxInt32 - 1<<24
	if n >= limit {
		return true
	}
	for k := range it.Strides {
		reach := int64(it.Offsets[k])
		for d, s := range it.Strides[k] {
			reach += int64(it.Shape[d]-1) * int64(abs(s))
		}
		if reach >= limit {
			return true
		}
	}
	for _, t := range ts {
		if t.Storage().Len()/max(t.DType().Size(), 1) >= limit {
			return true
		}
	}
	return false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// coordCode declares c0..c{rank-1}, the coordinates of index i.
func coordCode(rank int, i string) string {
	if rank <= 1 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "idx r_ = %s;\n", i)
	for d := rank - 1; d >= 1; d-- {
		fmt.Fprintf(&sb, "const idx c%d = r_ %% (idx)A.shape[%d]; r_ /= (idx)A.shape[%d];\n", d, d, d)
	}
	sb.WriteString("const idx c0 = r_;\n")
	return sb.String()
}

// offsetCode is operand k's element index at coordinates c0.. (or at i
// when the operand is walked in order).
func offsetCode(k, rank int, contiguous bool, i string) string {
	if contiguous || rank == 0 {
		if rank == 0 {
			return fmt.Sprintf("(idx)A.off[%d]", k)
		}
		return fmt.Sprintf("((idx)A.off[%d] + %s)", k, i)
	}
	if rank == 1 {
		return fmt.Sprintf("((idx)A.off[%d] + %s * (idx)A.st[%d][0])", k, i, k)
	}
	terms := []string{fmt.Sprintf("(idx)A.off[%d]", k)}
	for d := range rank {
		terms = append(terms, fmt.Sprintf("c%d * (idx)A.st[%d][%d]", d, k, d))
	}
	return "(" + strings.Join(terms, " + ") + ")"
}

func idxType(wide bool) string {
	if wide {
		return "long long"
	}
	return "int"
}

func mapSource(ops []operand, outs []string, rank int, wide bool, exprs []string, guard string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const WtArgs A) {\n", mapBlock, entry)
	fmt.Fprintf(&sb, "typedef %s idx;\nconst idx n = (idx)A.n;\n", idxType(wide))
	for k, o := range ops {
		fmt.Fprintf(&sb, "const %s* __restrict__ in%d = (const %s*)A.buf[%d];\n", o.storage, k, o.storage, k)
	}
	for j, out := range outs {
		fmt.Fprintf(&sb, "%s* __restrict__ out%d = (%s*)A.buf[%d];\n", out, j, out, len(ops)+j)
	}
	allInOrder := true
	for _, o := range ops {
		allInOrder = allInOrder && o.contiguous
	}
	const chunk = mapBlock * mapUnroll
	fmt.Fprintf(&sb, "for (idx base = (idx)blockIdx.x * %d + (idx)threadIdx.x; base < n; base += (idx)gridDim.x * %d) {\n", chunk, chunk)
	for k, o := range ops {
		fmt.Fprintf(&sb, "%s v%d[%d];\n", o.compute, k, mapUnroll)
	}
	fmt.Fprintf(&sb, "#pragma unroll\nfor (int u = 0; u < %d; u++) {\nconst idx i = base + u * %d;\nif (i < n) {\n", mapUnroll, mapBlock)
	if !allInOrder {
		sb.WriteString(coordCode(rank, "i"))
	}
	for k, o := range ops {
		fmt.Fprintf(&sb, "v%d[u] = ld(in%d[%s]);\n", k, k, offsetCode(k, rank, o.contiguous, "i"))
	}
	fmt.Fprintf(&sb, "}\n}\n#pragma unroll\nfor (int u = 0; u < %d; u++) {\nconst idx i = base + u * %d;\nif (i < n) {\n", mapUnroll, mapBlock)
	for k, o := range ops {
		fmt.Fprintf(&sb, "const %s x%d = v%d[u];\n", o.compute, k, k)
	}
	if guard != "" {
		fmt.Fprintf(&sb, "if (%s) { wt_fail(A, 1, (i64)i, 0); }\n", guard)
	}
	for j, e := range exprs {
		fmt.Fprintf(&sb, "put(&out%d[(idx)A.off[%d] + i], %s);\n", j, len(ops)+j, e)
	}
	sb.WriteString("}\n}\n}\n}\n")
	return sb.String()
}
