//go:build linux && cgo

package cuda

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// The row sorter behind sort, argsort, topk, unique and the grouping of
// the sparse kernels: it sorts each lane of a lane kernel by a key its
// caller computes, keeping the first k elements of each, and runs its
// caller's code on each kept element in sorted order. Elements are (key,
// index) pairs, so the order is total and equals a stable sort's (see
// cu/sort.cuh).
//
// A row of up to sortTile elements is sorted in one launch: a block loads
// one or more rows (padded to a power of two) into shared memory, runs a
// bitonic network and emits the result. Longer rows take a tile launch
// that sorts each tile of sortTile elements into a run in global memory,
// then merge passes, each merging pairs of runs by rank (every element
// finds its place in the other run by binary search, so a pass needs no
// synchronisation between blocks); the last pass emits. Runs are cut to k
// elements (a merged run's first k come from its halves' first k), so a
// topk of a long row keeps only k per tile after the first launch.

var sortLib = mustRead("cu/sort.cuh")

const sortTile = 2048 // WT_SORT_TILE

// rowSorter is one sort: the lanes of lk (rows of n elements), keyed by
// keygen, the first k of each row given to emit.
type rowSorter struct {
	lk   *laneKernel
	n, k int
	wide bool // 64-bit keys (f64, i64), else 32-bit
	// keygen is C++ for element j of lane row (idx, both): it declares
	// `const K key_`. It may fail the op through wt_fail (the check of lk).
	keygen string
	// emit is C++ for the kept element at position p (idx) of lane row in
	// sorted order, whose key and index in the row are key (K) and ix
	// (u32).
	emit string
	// name stands for keygen and emit in the kernel cache.
	name string
	// lib is more C++ library that keygen or emit call (or "").
	lib string
}

func (s *rowSorter) keyType() string {
	if s.wide {
		return "u64"
	}
	return "u32"
}

// sortRows runs s.
func (b *Backend) sortRows(s rowSorter) error {
	rows := s.lk.lanes()
	if rows == 0 || s.n == 0 || s.k == 0 {
		return nil
	}
	if int64(s.n) >= 1<<32-1 {
		return fmt.Errorf("cuda: %s: rows of %d elements; the sort takes fewer than %d", s.lk.op, s.n, int64(1)<<32-1)
	}
	item := 8
	if s.wide {
		item = 16
	}
	tiles := (s.n + sortTile - 1) / sortTile
	seg := nextPow2(min(s.n, sortTile))
	lk := s.lk.with()
	lk.s[0], lk.s[1], lk.s[2], lk.s[3] = int64(s.n), int64(s.k), int64(seg), int64(tiles)
	if tiles == 1 {
		per := sortTile / seg
		lk.s[4] = int64(s.k)
		return b.sortTileLaunch(s, lk, int64((rows+per-1)/per), true)
	}
	runs, runLen := tiles, min(s.k, sortTile)
	lk.s[4] = int64(runLen)
	src, err := b.scratch(rows*runs*runLen*item, core.U8)
	if err != nil {
		return err
	}
	if err := b.sortTileLaunch(s, lk.with(flatOp(src, true)), int64(rows*tiles), false); err != nil {
		src.Release()
		return err
	}
	for runs > 1 {
		runs2, len2 := (runs+1)/2, min(s.k, 2*runLen)
		final := runs2 == 1
		m := lk.with(flatOp(src, false))
		m.s[5], m.s[6], m.s[7], m.s[8] = int64(runs), int64(runLen), int64(runs2), int64(len2)
		var dst *core.Tensor
		if !final {
			if dst, err = b.scratch(rows*runs2*len2*item, core.U8); err != nil {
				src.Release()
				return err
			}
			m = m.with(flatOp(dst, true))
		}
		err = b.sortMergeLaunch(s, m, int64(rows*runs*runLen), final)
		src.Release()
		if err != nil {
			if dst != nil {
				dst.Release()
			}
			return err
		}
		src, runs, runLen = dst, runs2, len2
	}
	return nil
}

// sortKey names a sorter kernel: its kind, key width and the caller's
// name (runLanes adds the operands).
func sortKey(kind string, s *rowSorter, final bool) string {
	var sb strings.Builder
	sb.WriteString("sort")
	sb.WriteString(kind)
	sb.WriteString(s.keyType())
	if final {
		sb.WriteString("|f|")
	} else {
		sb.WriteString("|s|")
	}
	sb.WriteString(s.name)
	return sb.String()
}

// sortEmit is the C++ that emits the element in key/ix at position p, or
// stores it at dst[at] in a run.
func sortEmit(s *rowSorter, final bool, at string) string {
	if final {
		return "if (p < kk) {\n" + s.emit + "\n}\n"
	}
	return "dst[" + at + "] = SortItem<K>{key, ix};\n"
}

// sortTileLaunch sorts rows of up to sortTile elements whole (final), or
// each tile of longer rows into a run in the scratch that is lk's last
// operand.
func (b *Backend) sortTileLaunch(s rowSorter, lk *laneKernel, jobs int64, final bool) error {
	return b.runLanes(lk, sortKey("tile", &s, final), b.blocksFor(jobs, laneBlock), func() string {
		var sb strings.Builder
		sb.WriteString(lk.prologue(sortLib, s.lib))
		fmt.Fprintf(&sb, "typedef %s K;\n", s.keyType())
		sb.WriteString(`const idx rows = (idx)A.n, n = (idx)A.s[0], kk = (idx)A.s[1], seg = (idx)A.s[2], tiles = (idx)A.s[3], runLen = (idx)A.s[4];
__shared__ K sk[WT_SORT_TILE];
__shared__ u32 si[WT_SORT_TILE];
`)
		if !final {
			fmt.Fprintf(&sb, "SortItem<K>* __restrict__ dst = (SortItem<K>*)A.buf[%d];\n", len(lk.ops)-1)
		}
		sb.WriteString(`const idx per = tiles == 1 ? WT_SORT_TILE / seg : 1;
const idx jobs = tiles == 1 ? (rows + per - 1) / per : rows * tiles;
const int act = (int)(tiles == 1 ? seg * (per < rows ? per : rows) : WT_SORT_TILE);
const int width = (int)(tiles == 1 ? seg : WT_SORT_TILE);
for (idx job = blockIdx.x; job < jobs; job += gridDim.x) {
for (int t = threadIdx.x; t < act; t += blockDim.x) {
const idx row = tiles == 1 ? job * per + t / seg : job / tiles;
const idx j = tiles == 1 ? (idx)(t % seg) : (job % tiles) * WT_SORT_TILE + t;
K key = (K)~(K)0;
u32 ix = 0xffffffffu;
if (row < rows && j < n) {
`)
		sb.WriteString(s.keygen)
		sb.WriteString(`
key = key_;
ix = (u32)j;
}
sk[t] = key;
si[t] = ix;
}
__syncthreads();
wt_bitonic<K>(sk, si, act, width);
for (int t = threadIdx.x; t < act; t += blockDim.x) {
const idx row = tiles == 1 ? job * per + t / seg : job / tiles;
const idx p = tiles == 1 ? (idx)(t % seg) : (idx)t;
if (row < rows && p < runLen) {
const K key = sk[t];
const u32 ix = si[t];
`)
		sb.WriteString(sortEmit(&s, final, "job * runLen + p"))
		sb.WriteString("}\n}\n__syncthreads();\n}\n}\n")
		return sb.String()
	})
}

// sortMergeLaunch merges pairs of runs from the scratch operand before
// the last (or the last, when final) into the last, or emits them.
func (b *Backend) sortMergeLaunch(s rowSorter, lk *laneKernel, total int64, final bool) error {
	return b.runLanes(lk, sortKey("merge", &s, final), b.gridFor(total, laneBlock), func() string {
		var sb strings.Builder
		sb.WriteString(lk.prologue(sortLib, s.lib))
		fmt.Fprintf(&sb, "typedef %s K;\n", s.keyType())
		srcAt := len(lk.ops) - 1
		if !final {
			srcAt--
			fmt.Fprintf(&sb, "SortItem<K>* __restrict__ dst = (SortItem<K>*)A.buf[%d];\n", srcAt+1)
		}
		fmt.Fprintf(&sb, "const SortItem<K>* __restrict__ src = (const SortItem<K>*)A.buf[%d];\n", srcAt)
		sb.WriteString(`const idx kk = (idx)A.s[1], R = (idx)A.s[5], L = (idx)A.s[6], R2 = (idx)A.s[7], L2 = (idx)A.s[8];
const idx total = (idx)A.n * R * L;
for (idx i = (idx)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (idx)gridDim.x * blockDim.x) {
const idx row = i / (R * L), rem = i - row * R * L, r = rem / L, q = rem - r * L;
const SortItem<K> it = src[i];
const idx out = (row * R2 + (r >> 1)) * L2;
idx p = q;
if ((r & 1) == 0 && r == R - 1) {
`)
		if !final {
			sb.WriteString("if (q + L < L2) dst[out + q + L] = SortItem<K>{(K)~(K)0, 0xffffffffu};\n")
		}
		sb.WriteString("} else {\np = wt_merge_rank<K>(src + (row * R + (r ^ 1)) * L, L, it, q, (r & 1) != 0);\n}\n")
		sb.WriteString("if (p < L2) {\nconst K key = it.key;\nconst u32 ix = it.ix;\n")
		sb.WriteString(sortEmit(&s, final, "out + p"))
		sb.WriteString("}\n}\n}\n")
		return sb.String()
	})
}
