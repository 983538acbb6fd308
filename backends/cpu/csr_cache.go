package cpu

import (
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// What the CSR kernels established about one structure (indptr, indices,
// columns) is remembered for the tensors' life (kernelkit.PairCache): a GNN
// layer multiplies by the same adjacency every step, and after the first
// call the check (a pass over every index) and the regrouping for the
// backward product (a counting sort with scattered writes) are skipped.
// Storage from outside the Go heap (DLPack imports, a C allocator) is not
// cached: its owner may write to it.

// csrFacts is what the kernels established about one structure.
type csrFacts struct {
	checked atomic.Bool
	columns atomic.Pointer[csrColumns]
}

var csrCache kernelkit.PairCache[*csrFacts]

// cachedCSR returns the facts remembered for (indptr, indices, cols),
// making an empty entry on first sight; nil when the tensors cannot be
// cached.
func cachedCSR(indptr, indices *core.Tensor, cols int) *csrFacts {
	if IsForeign(indptr.Storage()) || IsForeign(indices.Storage()) {
		return nil
	}
	if f, ok := csrCache.Load(indptr, indices, cols); ok {
		return f
	}
	return csrCache.Store(indptr, indices, cols, &csrFacts{})
}
