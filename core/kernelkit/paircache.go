package kernelkit

import (
	"runtime"
	"sync"
	"weak"

	"github.com/webtensor/webtensor/core"
)

// PairCache remembers what a backend established about a pair of tensors
// and a size - a CSR structure (indptr, indices, columns) that passed its
// check, or the regrouping built from it - so that a graph layer calling
// spmm on the same adjacency every step pays for the check once. Tensors
// are immutable (no op writes in place), so a fact holds for the tensors'
// whole life. Entries are keyed by weak pointers, so the cache never keeps
// a tensor alive, and dropped when either tensor is collected; Drop, when
// set, then releases what the entry holds (device buffers). Memory whose
// owner may write it (a DLPack import, say) must not be cached: the caller
// decides.
type PairCache[F any] struct {
	Drop func(F)

	mu sync.Mutex
	m  map[pairKey]F
}

type pairKey struct {
	a, b weak.Pointer[core.Tensor]
	size int
}

// Load returns the entry for (a, b, size), if there is one.
func (c *PairCache[F]) Load(a, b *core.Tensor, size int) (F, bool) {
	key := pairKey{weak.Make(a), weak.Make(b), size}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[key]
	return f, ok
}

// Store keeps f for (a, b, size) unless an entry is there already (another
// caller got there first), and returns the entry kept.
func (c *PairCache[F]) Store(a, b *core.Tensor, size int, f F) F {
	key := pairKey{weak.Make(a), weak.Make(b), size}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		return old
	}
	if c.m == nil {
		c.m = map[pairKey]F{}
	}
	c.m[key] = f
	runtime.AddCleanup(a, c.forget, key)
	runtime.AddCleanup(b, c.forget, key)
	return f
}

// forget drops the entry of a key one of whose tensors was collected (the
// other tensor's cleanup later finds nothing).
func (c *PairCache[F]) forget(key pairKey) {
	c.mu.Lock()
	f, ok := c.m[key]
	delete(c.m, key)
	c.mu.Unlock()
	if ok && c.Drop != nil {
		c.Drop(f)
	}
}

// Len is the number of entries, for tests.
func (c *PairCache[F]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
