package webgpu

import (
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// The CSR products validate their index tensors on the host, which costs a
// read-back (a GPU sync) per call, and the transposed product also builds
// and uploads column buckets. A structure that passed once passes for its
// tensors' whole life: the checked structure and its buckets are
// remembered per (indptr, indices, columns) (kernelkit.PairCache), the buckets
// released when the entry is dropped. A GNN layer calls spmm on the same
// adjacency every step; after the first call it runs without a sync.

// csrFacts is what one check established about a structure.
type csrFacts struct {
	ptr []int // indptr on the host

	mu        sync.Mutex   // guards the rest: the buckets are built on first use
	idx       []int        // indices on the host, until the buckets are built from them
	buckets   *core.Tensor // the transposed product's column buckets, when built
	colStarts []int        // where each column's entries start in the buckets, and their count
}

var csrCache = kernelkit.PairCache[*csrFacts]{Drop: func(f *csrFacts) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buckets != nil {
		f.buckets.Release()
	}
}}

// checkedCSR validates indptr/indices for cols columns once per structure
// and returns its remembered facts. op is the op to count the host work
// of, when a structure is read back.
func checkedCSR(op string, indptr, indices *core.Tensor, cols int) (*csrFacts, error) {
	if f, ok := csrCache.Load(indptr, indices, cols); ok {
		return f, nil
	}
	ptr, idx, err := spCSR(indptr, indices, cols)
	if err != nil {
		return nil, err
	}
	core.CountHostWork(indptr.Device(), op)
	return csrCache.Store(indptr, indices, cols, &csrFacts{ptr: ptr, idx: idx}), nil
}

// cscBuckets returns the transposed product's column buckets for a checked
// structure (cols+1 starts, the entries by column, then their rows),
// building and uploading them on first use, and the starts on the host.
func cscBuckets(k *core.KernelCall, f *csrFacts, cols int) (*core.Tensor, []int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
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
