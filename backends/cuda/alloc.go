package cuda

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"sync"
)

// The caching allocator. cuMemAlloc and cuMemFree are slow (and cuMemFree
// waits for the device), so released blocks are kept by size class and
// handed out again. All work runs on one stream, in order: a block freed
// on the host while kernels that read it are still queued can be given to
// the next op at once, since that op's kernels run after them. Memory goes
// back to the driver only on EmptyCache or when an allocation fails
// (after waiting for the stream), so an out-of-memory error means the
// device is really full.

// deviceMemory is what the allocator needs of a device; tests give it a
// fake one.
type deviceMemory interface {
	alloc(bytes uint64) (devicePtr, error)
	free(p devicePtr) error
	sync() error // wait until queued work is done
}

// MemoryStats describes a device's memory as the backend uses it.
type MemoryStats struct {
	Allocated     uint64 // bytes in blocks that tensors hold (size classes)
	Requested     uint64 // bytes tensors asked for
	Reserved      uint64 // bytes taken from the driver: allocated plus cached
	PeakAllocated uint64
	Blocks        int   // blocks tensors hold
	CachedBlocks  int   // blocks kept for reuse
	DriverAllocs  int64 // cuMemAlloc calls
	DriverFrees   int64 // cuMemFree calls
	CacheHits     int64 // allocations served from the cache
	OOMRetries    int64 // allocations that emptied the cache and tried again
}

func (s MemoryStats) String() string {
	return fmt.Sprintf("%s allocated (%d blocks, peak %s), %s reserved (%d cached blocks), %d driver allocations, %d cache hits",
		humanBytes(s.Allocated), s.Blocks, humanBytes(s.PeakAllocated), humanBytes(s.Reserved), s.CachedBlocks,
		s.DriverAllocs, s.CacheHits)
}

type allocator struct {
	mu    sync.Mutex
	mem   deviceMemory
	free  map[uint64][]devicePtr // cached blocks by size class
	live  map[devicePtr]block
	stats MemoryStats
}

type block struct {
	class, requested uint64
}

func newAllocator(mem deviceMemory) *allocator {
	return &allocator{mem: mem, free: map[uint64][]devicePtr{}, live: map[devicePtr]block{}}
}

// minBlock is the smallest block: every pointer is at least 512-byte
// aligned, which the kernels' vector loads and cuBLAS like.
const minBlock = 512

// sizeClass rounds n up to a quarter power of two (at most 25% waste),
// at least minBlock.
func sizeClass(n uint64) uint64 {
	if n <= minBlock {
		return minBlock
	}
	top := uint64(1) << (63 - bits.LeadingZeros64(n-1)) // largest power of two below n
	step := top / 4
	return (n + step - 1) / step * step
}

// get returns a block of at least n bytes.
func (a *allocator) get(n uint64) (devicePtr, error) {
	class := sizeClass(n)
	a.mu.Lock()
	defer a.mu.Unlock()
	if list := a.free[class]; len(list) > 0 {
		p := list[len(list)-1]
		a.free[class] = list[:len(list)-1]
		a.stats.CachedBlocks--
		a.stats.CacheHits++
		a.take(p, class, n)
		return p, nil
	}
	p, err := a.mem.alloc(class)
	if errors.Is(err, ErrOutOfMemory) && a.stats.CachedBlocks > 0 {
		// Cached blocks of other sizes may be what is missing.
		a.stats.OOMRetries++
		if err := a.releaseCachedLocked(); err != nil {
			return 0, err
		}
		p, err = a.mem.alloc(class)
	}
	if err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			return 0, fmt.Errorf("%w: could not allocate %s (%s held by tensors in %d blocks, %s reserved): %v; release tensors you no longer need (Release/close) or use smaller batches",
				ErrOutOfMemory, humanBytes(n), humanBytes(a.stats.Allocated), a.stats.Blocks, humanBytes(a.stats.Reserved), err)
		}
		return 0, err
	}
	a.stats.DriverAllocs++
	a.stats.Reserved += class
	a.take(p, class, n)
	return p, nil
}

func (a *allocator) take(p devicePtr, class, n uint64) {
	a.live[p] = block{class: class, requested: n}
	a.stats.Allocated += class
	a.stats.Requested += n
	a.stats.Blocks++
	a.stats.PeakAllocated = max(a.stats.PeakAllocated, a.stats.Allocated)
}

// put returns a block to the cache. A pointer the allocator did not hand
// out is an error (a double release, or memory from elsewhere).
func (a *allocator) put(p devicePtr) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.live[p]
	if !ok {
		return fmt.Errorf("cuda: release of device memory %#x that is not allocated (released twice?)", p)
	}
	delete(a.live, p)
	a.stats.Allocated -= b.class
	a.stats.Requested -= b.requested
	a.stats.Blocks--
	a.free[b.class] = append(a.free[b.class], p)
	a.stats.CachedBlocks++
	return nil
}

// emptyCache gives every cached block back to the driver.
func (a *allocator) emptyCache() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.releaseCachedLocked()
}

func (a *allocator) releaseCachedLocked() error {
	if a.stats.CachedBlocks == 0 {
		return nil
	}
	// Kernels queued before a block's release may still read it.
	if err := a.mem.sync(); err != nil {
		return err
	}
	classes := make([]uint64, 0, len(a.free))
	for c := range a.free {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool { return classes[i] > classes[j] })
	var first error
	for _, c := range classes {
		for _, p := range a.free[c] {
			if err := a.mem.free(p); err != nil && first == nil {
				first = err
			}
			a.stats.DriverFrees++
			a.stats.Reserved -= c
			a.stats.CachedBlocks--
		}
		delete(a.free, c)
	}
	return first
}

func (a *allocator) snapshot() MemoryStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// fakeMemory hands out addresses and holds nothing: the compile-only
// backend's and the allocator tests' device. limit (0: none) makes alloc
// fail with an out-of-memory error past that many live bytes.
type fakeMemory struct {
	next, live, limit uint64
	sizes             map[devicePtr]uint64
	frees, syncs      int
}

func (m *fakeMemory) alloc(n uint64) (devicePtr, error) {
	if m.limit > 0 && m.live+n > m.limit {
		return 0, fmt.Errorf("fake device: %w", ErrOutOfMemory)
	}
	if m.sizes == nil {
		m.sizes = map[devicePtr]uint64{}
	}
	p := devicePtr(m.next)
	m.next += (n + 4095) &^ 4095
	m.live += n
	m.sizes[p] = n
	return p, nil
}

func (m *fakeMemory) free(p devicePtr) error {
	n, ok := m.sizes[p]
	if !ok {
		return fmt.Errorf("fake device: free of %#x, not allocated", p)
	}
	delete(m.sizes, p)
	m.live -= n
	m.frees++
	return nil
}
func (m *fakeMemory) sync() error { m.syncs++; return nil }
