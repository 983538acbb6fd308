package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/webtensor/webtensor/core"
)

// Tensors are immutable (no op writes in place), so a CSR structure that
// passed the check once passes for its tensors' whole life, and its
// grouping by column stays valid: both are remembered per (indptr, indices,
// columns), keyed by weak pointers so the cache never keeps a graph alive,
// and dropped when either tensor is collected. A GNN layer multiplies by
// the same adjacency every step; after the first call the check (a pass
// over every index) and the regrouping for the backward product (a
// counting sort with scattered writes) are skipped. Storage from outside
// the Go heap (DLPack imports, a C allocator) is not cached: its owner may
// write to it.

type csrKey struct {
	ptr, idx weak.Pointer[core.Tensor]
	cols     int
}

// csrFacts is what the kernels established about one structure.
type csrFacts struct {
	checked atomic.Bool
	columns atomic.Pointer[csrColumns]
}

var csrCache = struct {
	sync.Mutex
	m map[csrKey]*csrFacts
}{m: map[csrKey]*csrFacts{}}

// cachedCSR returns the facts remembered for (indptr, indices, cols),
// making an empty entry on first sight; nil when the tensors cannot be
// cached.
func cachedCSR(indptr, indices *core.Tensor, cols int) *csrFacts {
	if IsForeign(indptr.Storage()) || IsForeign(indices.Storage()) {
		return nil
	}
	key := csrKey{ptr: weak.Make(indptr), idx: weak.Make(indices), cols: cols}
	csrCache.Lock()
	defer csrCache.Unlock()
	if f := csrCache.m[key]; f != nil {
		return f
	}
	f := &csrFacts{}
	csrCache.m[key] = f
	drop := func(k csrKey) {
		csrCache.Lock()
		delete(csrCache.m, k)
		csrCache.Unlock()
	}
	runtime.AddCleanup(indptr, drop, key)
	runtime.AddCleanup(indices, drop, key)
	return f
}
