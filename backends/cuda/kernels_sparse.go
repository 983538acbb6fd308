//go:build linux && cgo

package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/numerics"
)

// Segment reductions and CSR products with the CPU backend's semantics
// (backends/cpu/kernels_sparse.go, kernels_sparse_csr.go). Every sum is
// deterministic and taken in the CPU's order, without atomics: one thread
// per output element walks its own rows or entries in index order (f64
// accumulation, or f32 where the CPU's CSR product sums f32). Where the
// grouping is not given (unsorted segment ids, the transposed product's
// columns), the row sorter groups rows by id or entries by column stably
// first. Index values are checked in the kernels, over as many threads as
// there are indices; the error the next read returns carries the CPU's
// message, recomputed from the index tensors on that (rare) path so that
// the same problem is named when several exist.

var sparseLib = mustRead("cu/sparse.cuh")

func init() {
	register("segment_sum", segmentKernel("segment_sum", segSum))
	register("segment_mean", segmentKernel("segment_mean", segMean))
	register("segment_max", segmentKernel("segment_max", segMax))
	register("_segment_gather", segmentGatherKernel)
	register("_segment_max_grad", segmentMaxGradKernel)
	register("spmm", spmmKernel)
	register("_spmm_transposed", spmmTransposedKernel)
	register("sddmm", sddmmKernel)
}

// vecOp is a 1-D operand the kernel indexes itself, its stride along.
func vecOp(t *core.Tensor, out bool) laneOp {
	op := laneOp{t: t, off: t.Offset(), out: out}
	if t.Rank() == 1 {
		op.along = t.Strides()[0]
	}
	return op
}

// matOp is a 2-D operand the kernel indexes itself: its row stride along,
// its column stride pair.
func matOp(t *core.Tensor, out bool) laneOp {
	st := t.Strides()
	return laneOp{t: t, off: t.Offset(), along: st[0], pair: st[1], out: out}
}

// at is operand k's base pointer in kernel sources.
func at(k int) string {
	n := strconv.Itoa(k)
	return "(p" + n + " + (idx)A.off[" + n + "])"
}

// gridLoop opens the grid-stride loop over T (A.s[2]) threads.
const gridLoop = "for (idx i = (idx)blockIdx.x * blockDim.x + threadIdx.x; i < T; i += (idx)gridDim.x * blockDim.x) {\n"

// readIndexVector reads a 1-D index tensor back to the host. It serves
// the error messages, which are worded after a synchronisation (the check
// closures run then), so it copies directly rather than through Download.
func (b *Backend) readIndexVector(t *core.Tensor) ([]int64, error) {
	n := t.Numel()
	if n == 0 {
		return nil, nil
	}
	p, err := ptrOf(t)
	if err != nil {
		return nil, err
	}
	size, st := t.DType().Size(), 0
	if t.Rank() == 1 {
		st = t.Strides()[0]
	}
	lo, hi := t.Offset(), t.Offset()+(n-1)*st
	if st < 0 {
		lo, hi = hi, lo
	}
	raw := make([]byte, (hi-lo+1)*size)
	if err := b.dev.download(raw, p+uint64(lo*size)); err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = numerics.GetI64(t.DType(), raw, t.Offset()+i*st-lo)
	}
	return out, nil
}

// segmentCheck words a failed id check (code 1: id i is v, out of range;
// 2: id i, v, decreases): core's rule over the ids read back, which names
// the first bad id as every backend does, else the device's own report.
func (b *Backend) segmentCheck(ids *core.Tensor, segments int, sorted bool) func(uint32, int64, int64) string {
	return func(code uint32, i, v int64) string {
		if all, err := b.readIndexVector(ids); err == nil {
			if err := kernelkit.CheckSegmentIDs(all, segments, sorted); err != nil {
				return err.Error()
			}
		}
		if code == 2 {
			return fmt.Sprintf("sorted is true but segment_ids[%d] = %d follows a larger id", i, v)
		}
		return fmt.Sprintf("segment_ids[%d] = %d is outside [0, %d)", i, v, segments)
	}
}

// waitIfEmpty makes an op whose output is empty, and so is never read,
// wait for its checks (the only work its kernel did): a bad index then
// fails the call itself, as on the CPU, rather than a later read.
func (b *Backend) waitIfEmpty(out *core.Tensor, err error) error {
	if err != nil || out.Numel() > 0 {
		return err
	}
	return b.Sync()
}

// csrCheck words a failed CSR check (wt_csr_check's codes): core's rule
// over the structure read back, else the device's own report.
func (b *Backend) csrCheck(indptr, indices *core.Tensor, numCols int) func(uint32, int64, int64) string {
	return func(code uint32, x, y int64) string {
		ptr, err1 := b.readIndexVector(indptr)
		cols, err2 := b.readIndexVector(indices)
		if err1 == nil && err2 == nil {
			if err := kernelkit.CheckCSR(ptr, cols, numCols); err != nil {
				return err.Error()
			}
		}
		rows, entries := indptr.Numel()-1, indices.Numel()
		switch code {
		case 1:
			return fmt.Sprintf("indptr[0] is %d, want 0", x)
		case 2:
			return fmt.Sprintf("indptr[%d] is %d, want the number of entries %d", rows, x, entries)
		case 3:
			return fmt.Sprintf("indptr decreases at %d: %d after a larger value", x, y)
		}
		return fmt.Sprintf("indices[%d] = %d is outside [0, %d)", x, y, numCols)
	}
}

type segmentKind int

const (
	segSum segmentKind = iota
	segMean
	segMax
)

// segmentAcc is the accumulation of a segment's rows: declarations, the
// step over x (a member in its compute type) and the finish.
func segmentAcc(kind segmentKind, float bool) (init, step, fin string) {
	switch {
	case kind == segMax && float:
		return "f64 acc = 0;\nbool first = true;\n", "{ const f64 v = (f64)x; if (first || v != v || v > acc) acc = v; first = false; }\n", ""
	case kind == segMax:
		return "i64 acc = 0;\nbool first = true;\n", "{ const i64 v = (i64)x; if (first || v > acc) acc = v; first = false; }\n", ""
	case float:
		fin = ""
		if kind == segMean {
			fin = "if (hi > lo) acc /= (f64)(hi - lo);\n"
		}
		return "f64 acc = 0;\n", "acc += (f64)x;\n", fin
	}
	return "i64 acc = 0;\n", "acc = (i64)((u64)acc + (u64)(i64)x);\n", ""
}

// segmentKernel reduces the rows of data sharing an id. Sorted ids are
// searched in place for each segment's rows; other ids are sorted first
// (stably, so each segment's rows stay in index order).
func segmentKernel(op string, kind segmentKind) core.Kernel {
	return func(k *core.KernelCall) error {
		data, ids, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		segments, sorted := k.Attrs.Int("num_segments"), k.Attrs.Bool("sorted")
		b := cudaOf(k)
		n := data.Shape()[0]
		kept := []int(data.Shape()[1:])
		check := b.segmentCheck(ids, segments, sorted)
		walks := []laneOp{laneWalk(out, 0, false, true), laneWalk(data, 0, false, false)}
		inner := core.Shape(kept).Numel()
		total := segments * inner
		if sorted || n == 0 || total == 0 {
			lk, err := newLanes(op, kept, append(walks, vecOp(ids, false))...)
			if err != nil {
				return err
			}
			lk.check = check
			lk.s[0], lk.s[1] = int64(segments), int64(n)
			if sorted {
				lk.s[3] = 1
			}
			return b.waitIfEmpty(out, b.segmentReduce(lk, kind, data.DType().IsFloat(), false))
		}
		if n >= 1<<31 {
			return fmt.Errorf("cuda: %s: %d rows; unsorted ids are grouped for fewer than 2^31", op, n)
		}
		sid, err := b.scratch(n, core.I64)
		if err != nil {
			return err
		}
		defer sid.Release()
		perm, err := b.scratch(n, core.I32)
		if err != nil {
			return err
		}
		defer perm.Release()
		slk, err := newLanes(op, nil, vecOp(ids, false), flatOp(sid, true), flatOp(perm, true))
		if err != nil {
			return err
		}
		slk.check = check
		slk.s[17] = int64(segments)
		wide := ids.DType() == core.I64
		keyCast := map[bool]string{true: "v_", false: "(i32)v_"}[wide]
		err = b.sortRows(rowSorter{lk: slk, n: n, k: n, wide: wide, name: "segids", lib: sparseLib,
			keygen: "const i64 v_ = wt_ix(" + at(0) + ", WT_ALONG(0), j);\nif (v_ < 0 || v_ >= (i64)A.s[17]) wt_fail(A, 1, j, v_);\nconst K key_ = wt_sort_key(" + keyCast + ");",
			emit:   "p1[p] = wt_ix(" + at(0) + ", WT_ALONG(0), (idx)ix);\np2[p] = (i32)ix;"})
		if err != nil {
			return err
		}
		lk, err := newLanes(op, kept, append(walks, flatOp(sid, false), flatOp(perm, false))...)
		if err != nil {
			return err
		}
		lk.s[0], lk.s[1] = int64(segments), int64(n)
		return b.segmentReduce(lk, kind, data.DType().IsFloat(), true)
	}
}

// segmentReduce runs one thread per output element (segment s, lane):
// it finds the segment's run of sorted ids by binary search and folds its
// rows in order. Direct (grouped false): operand 2 is the ids themselves,
// which the first threads also check; grouped: operands 2 and 3 are the
// sorted ids and the rows they came from.
//
// Few long segments (a pooling over whole graphs: 32 segments of 64
// features over 100k rows) would leave the GPU nearly idle, each thread
// walking thousands of rows: then each segment's rows are cut into C
// equal chunks, one thread per (segment, chunk, lane), and a second
// kernel folds each element's C partials in chunk order, so the result
// does not depend on timing (the sums differ from the CPU's by the
// grouping only, in f64).
func (b *Backend) segmentReduce(lk *laneKernel, kind segmentKind, float, grouped bool) error {
	segs, n, lanes := int(lk.s[0]), int(lk.s[1]), lk.lanes()
	chunks := 1
	if out := segs * lanes; out > 0 {
		target := max(b.props.sms, 1) * 1024
		chunks = max(1, min((n/segs+15)/16, (target+out-1)/out, 4096))
	}
	lk.s[4] = int64(chunks)
	lk.s[2] = int64(segs * chunks * lanes)
	if !grouped {
		lk.s[2] = max(lk.s[2], int64(n))
	}
	key := "seg|" + strconv.Itoa(int(kind)) + map[bool]string{true: "f", false: "i"}[float] + map[bool]string{true: "g", false: "d"}[grouped]
	if chunks == 1 {
		return b.runLanes(lk, key, b.gridFor(lk.s[2], laneBlock), func() string { return segmentSource(lk, kind, float, grouped, false) })
	}
	part, err := b.scratch(segs*chunks*lanes, core.I64)
	if err != nil {
		return err
	}
	defer part.Release()
	cnt, err := b.scratch(segs*chunks*lanes, core.U32)
	if err != nil {
		return err
	}
	defer cnt.Release()
	pl := lk.with(flatOp(part, true), flatOp(cnt, true))
	if err := b.runLanes(pl, key+"|part", b.gridFor(pl.s[2], laneBlock), func() string { return segmentSource(pl, kind, float, grouped, true) }); err != nil {
		return err
	}
	fold := lk.with()
	fold.ops = []laneOp{lk.ops[0], flatOp(part, false), flatOp(cnt, false)}
	return b.runLanes(fold, "segfold|"+strconv.Itoa(int(kind))+map[bool]string{true: "f", false: "i"}[float], b.gridFor(int64(segs*lanes), laneBlock), func() string {
		init, step, fin := segmentAcc(kind, float)
		acc := map[bool]string{true: "f64", false: "i64"}[float]
		return fold.prologue() + "const idx L = (idx)A.n, S = (idx)A.s[0], C = (idx)A.s[4];\n" +
			"for (idx i = (idx)blockIdx.x * blockDim.x + threadIdx.x; i < S * L; i += (idx)gridDim.x * blockDim.x) {\n" +
			"const idx s = i / L, lane = i - s * L;\nidx lo = 0, hi = 0;\n" + init +
			"for (idx c = 0; c < C; c++) {\nconst idx q = (s * C + c) * L + lane;\nif (p2[q] == 0) continue;\nhi += p2[q];\n" +
			"const " + acc + " x = bitcast<" + acc + ">(p1[q]);\n" + step + "}\n" + fin +
			"put(&p0[wt_lane<KR>(A, 0, lane) + s * WT_ALONG(0)], acc);\n}\n}\n"
	})
}

// segmentSource is the kernel of segmentReduce: the whole fold of each
// output element, or (part) the fold of each chunk into the partials
// (the operands after the walks: values as i64 bits, and row counts).
func segmentSource(lk *laneKernel, kind segmentKind, float, grouped, part bool) string {
	init, step, fin := segmentAcc(kind, float)
	var sb strings.Builder
	sb.WriteString(lk.prologue(sparseLib))
	sb.WriteString("const idx L = (idx)A.n, S = (idx)A.s[0], N = (idx)A.s[1], T = (idx)A.s[2], C = (idx)A.s[4], total = S * C * L;\n")
	sb.WriteString(gridLoop)
	ids, row := at(2)+", WT_ALONG(2)", "r"
	if grouped {
		ids, row = "p2, 1", "(idx)p3[r]"
	} else {
		sb.WriteString("if (i < N) {\nconst i64 v = wt_ix(" + ids + ", i);\n")
		sb.WriteString("if (v < 0 || v >= S) wt_fail(A, 1, i, v);\nelse if (A.s[3] && i > 0 && v < wt_ix(" + ids + ", i - 1)) wt_fail(A, 2, i, v);\n}\n")
	}
	sb.WriteString("if (i >= total) continue;\nconst idx s = i / (C * L), c = (i - s * C * L) / L, lane = i - (s * C + c) * L;\n")
	fmt.Fprintf(&sb, "idx lo = wt_count_below(%[1]s, N, s), hi = wt_count_below(%[1]s, N, s + 1);\n", ids)
	if part {
		sb.WriteString("{\nconst idx a = lo + (hi - lo) * c / C, z = lo + (hi - lo) * (c + 1) / C;\nlo = a;\nhi = z;\n}\n")
	}
	sb.WriteString("const idx db = wt_lane<KR>(A, 1, lane);\n" + init)
	sb.WriteString("for (idx r = lo; r < hi; r++) {\nconst auto x = ld(p1[db + " + row + " * WT_ALONG(1)]);\n" + step + "}\n")
	if part {
		m := len(lk.ops) - 2
		fmt.Fprintf(&sb, "p%d[i] = bitcast<i64>(acc);\np%d[i] = (u32)(hi - lo);\n}\n}\n", m, m+1)
		return sb.String()
	}
	sb.WriteString(fin + "put(&p0[wt_lane<KR>(A, 0, lane) + s * WT_ALONG(0)], acc);\n}\n}\n")
	return sb.String()
}

// segmentGatherKernel copies row ids[i] of x to row i of the output
// (raw elements), checking each id against x's rows.
func segmentGatherKernel(k *core.KernelCall) error {
	x, ids, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	b := cudaOf(k)
	rows, n := x.Shape()[0], ids.Numel()
	kept := []int(x.Shape()[1:])
	lk, err := newLanes("_segment_gather", kept, laneWalk(out, 0, false, true), laneWalk(x, 0, false, false), vecOp(ids, false))
	if err != nil {
		return err
	}
	lk.check = b.segmentCheck(ids, rows, false)
	total := n * core.Shape(kept).Numel()
	lk.s[0], lk.s[1], lk.s[2] = int64(rows), int64(n), int64(max(total, n))
	return b.waitIfEmpty(out, b.runLanes(lk, "segather", b.gridFor(lk.s[2], laneBlock), func() string {
		var sb strings.Builder
		sb.WriteString(lk.prologue(indexLib, sparseLib))
		sb.WriteString("const idx L = (idx)A.n, M = (idx)A.s[0], N = (idx)A.s[1], T = (idx)A.s[2];\n" + gridLoop)
		sb.WriteString("if (i < N) {\nconst i64 v = wt_ix(" + at(2) + ", WT_ALONG(2), i);\nif (v < 0 || v >= M) wt_fail(A, 1, i, v);\n}\n")
		sb.WriteString("if (i >= N * L) continue;\nconst idx row = i / L, lane = i - row * L;\n")
		sb.WriteString("const i64 v = wt_ix(" + at(2) + ", WT_ALONG(2), row);\nconst idx o = wt_lane<KR>(A, 0, lane) + row * WT_ALONG(0);\n")
		sb.WriteString("if (v < 0 || v >= M) p0[o] = " + zeroElem(out.DType()) + ";\nelse p0[o] = p1[wt_lane<KR>(A, 1, lane) + v * WT_ALONG(1)];\n}\n}\n")
		return sb.String()
	}))
}

// segmentMaxGradKernel shares each segment's gradient among the rows that
// attain its maximum: one kernel counts the ties of every output element
// (integer atomics: exact in any order), a second divides.
func segmentMaxGradKernel(k *core.KernelCall) error {
	data, ids, maxes, grad, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	b := cudaOf(k)
	segments, n := maxes.Shape()[0], data.Shape()[0]
	kept := []int(data.Shape()[1:])
	inner := core.Shape(kept).Numel()
	ties, err := b.scratch(max(segments*inner, 1), core.U32)
	if err != nil {
		return err
	}
	defer ties.Release()
	if err := b.zeroFill(ties); err != nil {
		return err
	}
	hit := "const f64 a = (f64)ld(p0[wt_lane<KR>(A, 0, lane) + row * WT_ALONG(0)]), m = (f64)ld(p1[wt_lane<KR>(A, 1, lane) + v * WT_ALONG(1)]);\nconst bool hit = a == m || (a != a && m != m);\n"
	head := "const idx L = (idx)A.n, S = (idx)A.s[0], N = (idx)A.s[1], T = (idx)A.s[2];\n" + gridLoop
	row := "const idx row = i / L, lane = i - row * L;\nconst i64 v = wt_ix(" + at(2) + ", WT_ALONG(2), row);\n"
	lk, err := newLanes("_segment_max_grad", kept, laneWalk(data, 0, false, false), laneWalk(maxes, 0, false, false), vecOp(ids, false), flatOp(ties, true))
	if err != nil {
		return err
	}
	lk.check = b.segmentCheck(ids, segments, false)
	lk.s[0], lk.s[1], lk.s[2] = int64(segments), int64(n), int64(max(n*inner, n))
	err = b.runLanes(lk, "segmaxties", b.gridFor(lk.s[2], laneBlock), func() string {
		return lk.prologue(sparseLib) + head +
			"if (i < N) {\nconst i64 v = wt_ix(" + at(2) + ", WT_ALONG(2), i);\nif (v < 0 || v >= S) wt_fail(A, 1, i, v);\n}\n" +
			"if (i >= N * L) continue;\n" + row + "if (v < 0 || v >= S) continue;\n" + hit +
			"if (hit) atomicAdd(&p3[v * L + lane], 1u);\n}\n}\n"
	})
	if err = b.waitIfEmpty(out, err); err != nil || out.Numel() == 0 {
		return err
	}
	lk2, err := newLanes("_segment_max_grad", kept, laneWalk(data, 0, false, false), laneWalk(maxes, 0, false, false), vecOp(ids, false),
		flatOp(ties, false), laneWalk(grad, 0, false, false), laneWalk(out, 0, false, true))
	if err != nil {
		return err
	}
	lk2.s[0], lk2.s[1], lk2.s[2] = int64(segments), int64(n), int64(n*inner)
	return b.runLanes(lk2, "segmaxgrad", b.gridFor(lk2.s[2], laneBlock), func() string {
		return lk2.prologue(sparseLib) + head + row + "f64 res = 0;\nif (v >= 0 && v < S) {\n" + hit +
			"if (hit) res = (f64)ld(p4[wt_lane<KR>(A, 4, lane) + v * WT_ALONG(4)]) / (f64)p3[v * L + lane];\n}\n" +
			"put(&p5[wt_lane<KR>(A, 5, lane) + row * WT_ALONG(5)], res);\n}\n}\n"
	})
}

// csrOps are a CSR product's structure operands and sizes: indptr and
// indices are operands 1 and 2 of every CSR kernel (0 is the output).
type csrSizes struct{ rows, entries, cols int }

func csrSizesOf(indptr, indices *core.Tensor, cols int) csrSizes {
	return csrSizes{rows: indptr.Numel() - 1, entries: indices.Numel(), cols: cols}
}

// set puts the sizes in A.s[10..12] and the thread count (at least one per
// checked item) in A.s[2].
func (c csrSizes) set(lk *laneKernel, work int) {
	lk.s[10], lk.s[11], lk.s[12] = int64(c.rows), int64(c.entries), int64(c.cols)
	lk.s[2] = int64(max(work, c.rows+1, c.entries))
}

// csrHead declares the sizes, opens the thread loop and checks item i.
const csrHead = "const idx R = (idx)A.s[10], E = (idx)A.s[11], C = (idx)A.s[12], T = (idx)A.s[2];\n" + gridLoop +
	"wt_csr_check(A, p1 + (idx)A.off[1], WT_ALONG(1), p2 + (idx)A.off[2], WT_ALONG(2), R, E, C, i);\n"

// accOf is the accumulation type of a CSR product: f32 as the CPU's f32
// path, f64 otherwise.
func accOf(d core.DType) string {
	if d == core.F32 {
		return "f32"
	}
	return "f64"
}

// spmmKernel: one thread per output element (r, j) sums its row's entries
// in order.
func spmmKernel(k *core.KernelCall) error {
	indptr, indices, values, dense, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	b := cudaOf(k)
	ds := dense.Shape()
	c := csrSizesOf(indptr, indices, ds[0])
	lk, err := newLanes("spmm", nil, matOp(out, true), vecOp(indptr, false), vecOp(indices, false), vecOp(values, false), matOp(dense, false))
	if err != nil {
		return err
	}
	lk.check = b.csrCheck(indptr, indices, c.cols)
	c.set(lk, c.rows*ds[1])
	lk.s[3] = int64(ds[1])
	acc := accOf(out.DType())
	return b.waitIfEmpty(out, b.runLanes(lk, "spmm|"+acc, b.gridFor(lk.s[2], laneBlock), func() string {
		return lk.prologue(sparseLib) + csrHead + `const idx n = (idx)A.s[3];
if (i >= R * n) continue;
const idx r = i / n, j = i - r * n;
idx lo, hi;
wt_csr_row_range(p1 + (idx)A.off[1], WT_ALONG(1), r, E, lo, hi);
` + acc + ` acc = 0;
for (idx e = lo; e < hi; e++) {
const i64 c = wt_ix(p2 + (idx)A.off[2], WT_ALONG(2), e);
if (c < 0 || c >= C) continue;
acc = acc + (` + acc + `)ld(p3[(idx)A.off[3] + e * WT_ALONG(3)]) * (` + acc + `)ld(p4[(idx)A.off[4] + c * WT_ALONG(4) + j * WT_PAIR(4)]);
}
put(&p0[(idx)A.off[0] + r * WT_ALONG(0) + j * WT_PAIR(0)], acc);
}
}
`
	}))
}

// spmmTransposedKernel is A^T dense: the entries are sorted by column
// (stably, so each column's entries stay in order), with each entry's row
// found once; then one thread per output element (column c, j) sums its
// column's entries in order.
func spmmTransposedKernel(k *core.KernelCall) error {
	indptr, indices, values, dense, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	b := cudaOf(k)
	n := dense.Shape()[1]
	c := csrSizesOf(indptr, indices, k.Attrs.Int("cols"))
	ops := []laneOp{matOp(out, true), vecOp(indptr, false), vecOp(indices, false), vecOp(values, false), matOp(dense, false)}
	grouped := c.entries > 0 && c.cols*n > 0
	if grouped {
		if c.entries >= 1<<31 {
			return fmt.Errorf("cuda: _spmm_transposed: %d entries; the transposed product takes fewer than 2^31", c.entries)
		}
		var tmp [3]*core.Tensor
		for i, d := range []core.DType{core.I64, core.I32, core.I32} {
			t, err := b.scratch(c.entries, d)
			if err != nil {
				return err
			}
			defer t.Release()
			tmp[i] = t
		}
		slk, err := newLanes("_spmm_transposed", nil, vecOp(indptr, false), vecOp(indices, false),
			flatOp(tmp[0], true), flatOp(tmp[1], true), flatOp(tmp[2], true))
		if err != nil {
			return err
		}
		slk.s[17] = int64(c.rows)
		wide := indices.DType() == core.I64
		keyCast := map[bool]string{true: "", false: "(i32)"}[wide]
		err = b.sortRows(rowSorter{lk: slk, n: c.entries, k: c.entries, wide: wide, name: "csrcols", lib: sparseLib,
			keygen: "const K key_ = wt_sort_key(" + keyCast + "wt_ix(" + at(1) + ", WT_ALONG(1), j));",
			emit: "p2[p] = wt_ix(" + at(1) + ", WT_ALONG(1), (idx)ix);\np3[p] = (i32)ix;\n" +
				"p4[p] = (i32)wt_csr_row_of(" + at(0) + ", WT_ALONG(0), (idx)A.s[17], (idx)ix);"})
		if err != nil {
			return err
		}
		ops = append(ops, flatOp(tmp[0], false), flatOp(tmp[1], false), flatOp(tmp[2], false))
	}
	lk, err := newLanes("_spmm_transposed", nil, ops...)
	if err != nil {
		return err
	}
	lk.check = b.csrCheck(indptr, indices, c.cols)
	c.set(lk, c.cols*n)
	lk.s[3] = int64(n)
	acc := accOf(out.DType())
	return b.waitIfEmpty(out, b.runLanes(lk, "spmmt|"+acc+map[bool]string{true: "g", false: "d"}[grouped], b.gridFor(lk.s[2], laneBlock), func() string {
		var sb strings.Builder
		sb.WriteString(lk.prologue(sparseLib) + csrHead + "const idx n = (idx)A.s[3];\nif (i >= C * n) continue;\nconst idx c = i / n, j = i - c * n;\n" + acc + " acc = 0;\n")
		if grouped {
			sb.WriteString(`const idx lo = wt_count_below(p5, 1, E, c), hi = wt_count_below(p5, 1, E, c + 1);
for (idx q = lo; q < hi; q++) {
const idx e = (idx)p6[q], r = (idx)p7[q];
if (r < 0 || r >= R) continue;
acc = acc + (` + acc + `)ld(p3[(idx)A.off[3] + e * WT_ALONG(3)]) * (` + acc + `)ld(p4[(idx)A.off[4] + r * WT_ALONG(4) + j * WT_PAIR(4)]);
}
`)
		}
		sb.WriteString("put(&p0[(idx)A.off[0] + c * WT_ALONG(0) + j * WT_PAIR(0)], acc);\n}\n}\n")
		return sb.String()
	}))
}

// sddmmKernel: one thread per entry takes the dot product of its row of a
// and its column of b, in f64 as the CPU.
func sddmmKernel(k *core.KernelCall) error {
	indptr, indices, a, bm, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Outputs[0]
	b := cudaOf(k)
	bs := bm.Shape()
	c := csrSizesOf(indptr, indices, bs[1])
	lk, err := newLanes("sddmm", nil, vecOp(out, true), vecOp(indptr, false), vecOp(indices, false), matOp(a, false), matOp(bm, false))
	if err != nil {
		return err
	}
	lk.check = b.csrCheck(indptr, indices, c.cols)
	c.set(lk, c.entries)
	lk.s[3] = int64(bs[0])
	return b.waitIfEmpty(out, b.runLanes(lk, "sddmm", b.gridFor(lk.s[2], laneBlock), func() string {
		return lk.prologue(sparseLib) + csrHead + `const idx K = (idx)A.s[3];
if (i >= E) continue;
const i64 c = wt_ix(p2 + (idx)A.off[2], WT_ALONG(2), i);
f64 s = 0;
if (R > 0 && c >= 0 && c < C) {
const idx r = wt_csr_row_of(p1 + (idx)A.off[1], WT_ALONG(1), R, i);
const idx ab = (idx)A.off[3] + r * WT_ALONG(3), bb = (idx)A.off[4] + c * WT_PAIR(4);
for (idx t = 0; t < K; t++) s += (f64)ld(p3[ab + t * WT_PAIR(3)]) * (f64)ld(p4[bb + t * WT_ALONG(4)]);
}
put(&p0[(idx)A.off[0] + i * WT_ALONG(0)], s);
}
}
`
	}))
}
