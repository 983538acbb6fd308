package webgpu

import (
	"runtime"
	"sync"
	"weak"

	"github.com/webtensor/webtensor/core"
)

// The CSR products validate their index tensors on the host, which costs a
// read-back (a GPU sync) per call, and the transposed product also builds
// and uploads column buckets. Tensors are immutable (no op writes in
// place), so a structure that passed once passes for the tensor's whole
// life: the checked structure and its buckets are remembered per
// (indptr, indices, columns), keyed by weak pointers so the cache never
// keeps a graph alive, and dropped (buckets released) when indptr is
// collected. A GNN layer calls spmm on the same adjacency every step; after
// the first call it runs without a sync.

type csrKey struct {
	ptr, idx weak.Pointer[core.Tensor]
	cols     int
}

// csrFacts is what one check established about a structure.
type csrFacts struct {
	ptr       []int        // indptr on the host
	idx       []int        // indices on the host, until the buckets are built from them
	buckets   *core.Tensor // the transposed product's column buckets, when built
	colStarts []int        // where each column's entries start in the buckets, and their count
}

var csrCache = struct {
	sync.Mutex
	m map[csrKey]*csrFacts
}{m: map[csrKey]*csrFacts{}}

// checkedCSR validates indptr/indices for cols columns once per structure
// and returns its remembered facts. op is the op to count the host work
// of, when a structure is read back.
func checkedCSR(op string, indptr, indices *core.Tensor, cols int) (*csrFacts, error) {
	key := csrKey{ptr: weak.Make(indptr), idx: weak.Make(indices), cols: cols}
	csrCache.Lock()
	f := csrCache.m[key]
	csrCache.Unlock()
	if f != nil {
		return f, nil
	}
	ptr, idx, err := spCSR(indptr, indices, cols)
	if err != nil {
		return nil, err
	}
	core.CountHostWork(indptr.Device(), op)
	f = &csrFacts{ptr: ptr, idx: idx}
	csrCache.Lock()
	if old := csrCache.m[key]; old != nil {
		csrCache.Unlock()
		return old, nil
	}
	csrCache.m[key] = f
	csrCache.Unlock()
	runtime.AddCleanup(indptr, forgetCSR, key)
	return f, nil
}

// forgetCSR drops a structure whose indptr was collected.
func forgetCSR(key csrKey) {
	csrCache.Lock()
	f := csrCache.m[key]
	delete(csrCache.m, key)
	csrCache.Unlock()
	if f != nil && f.buckets != nil {
		f.buckets.Release()
	}
}

// cscBuckets returns the transposed product's column buckets for a checked
// structure (cols+1 starts, the entries by column, then their rows),
// building and uploading them on first use, and the starts on the host.
func cscBuckets(k *core.KernelCall, f *csrFacts, cols int) (*core.Tensor, []int, error) {
	csrCache.Lock()
	defer csrCache.Unlock()
	if f.buckets != nil {
		return f.buckets, f.colStarts, nil
	}
	core.CountHostWork(k.Backend.Device(), k.Op.Name)
	csc := spBuckets(f.idx, cols)
	rowOf := make([]int, len(f.idx))
	for r := 0; r+1 < len(f.ptr); r++ {
		for e := f.ptr[r]; e < f.ptr[r+1]; e++ {
			rowOf[e] = r
		}
	}
	for _, e := range csc[cols+1:] {
		csc = append(csc, rowOf[e])
	}
	buckets, err := spUploadI32(k, csc)
	if err != nil {
		return nil, nil, err
	}
	f.buckets, f.idx, f.colStarts = buckets, nil, append([]int{}, csc[:cols+1]...)
	return buckets, f.colStarts, nil
}
