package cpu

import (
	"math/bits"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
	"github.com/webtensor/webtensor/internal/gcpace"
)

// The caching allocator. Every op's output is new storage, and a training
// step makes hundreds of them; from the Go heap each was a fresh, zeroed
// allocation, and a large one fresh pages from the kernel (a page fault per
// 4 KiB), so a memory-bound op paid about twice for its output: measured on
// add over 4M f32, the allocation took as long as the add. PyTorch reuses
// its hot buffers; so does this cache.
//
// Storage of cacheMinBytes and more takes a block of a size class (a quarter
// power of two, so at most a fifth is slack) from a free list, or from the
// Go heap or the host allocator when the list is empty. The block comes back
// when its storage is released (Release: at once) or collected (a GC
// cleanup). Go frees nothing deterministically, so a step's dead tensors
// are found by the collector; the Go heap barely grows while the cache
// serves it, so the allocator starts a collection itself once the bytes it
// handed out since the last reach what is in use (at least gcMinTrigger),
// as capi paces C memory. A block released explicitly (Release) takes its
// bytes back off the count (unreleased), so only what the collector alone
// can return paces it: counting every block handed out started a full
// collection every fourth op of a loop that releases what it makes (16 MB
// an add over 4M f32, which ran at half its speed, the collector holding
// a core), while not counting blocks taken from a free list collected too
// seldom for code that drops its tensors (their blocks came back late and
// each op took fresh, unfaulted memory). A steady-state training step then
// takes every output from the free lists and allocates only the tensors'
// headers.
//
// A recycled block is not cleared: its storage is marked dirty, and the
// first Host call clears it, so no one can read another tensor's values.
// Kernels that write every element of their outputs (fillsOutputs) mark them
// clean without clearing, which saves the pass.
//
// What is never recycled: memory adopted with WrapHost (it has an owner),
// and a block whose address was handed out of the process (MarkShared: a
// zero-copy DLPack export), which is freed as before. The cache keeps at
// most CacheLimit bytes of free blocks, drops blocks no allocation wanted
// for two collections, and EmptyCache drops all of them.

// cacheMinBytes is the smallest storage the cache serves: below it the Go
// heap's own size classes are as fast and the clearing costs nothing.
var cacheMinBytes = 1 << 10

// gcMinTrigger is the fewest bytes handed out between two collections the
// allocator starts (capi and abi pace theirs the same way).
const gcMinTrigger = 64 << 20

// classesPerOctave size classes split each power of two.
const classesPerOctave = 4

// sizeClass returns the class of an n-byte request (n > 0) and the size
// of its blocks: the smallest 2^e + q*2^e/4 >= n.
func sizeClass(n int) (class, size int) {
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e
	if e < 3 {
		return e * classesPerOctave, 1 << e
	}
	base := 1 << (e - 1)
	step := base / classesPerOctave
	q := (n - 1 - base) / step
	return e*classesPerOctave + q, base + (q+1)*step
}

// block is cached memory: the whole of its class, handed out in prefixes.
type block struct {
	mem     []byte
	class   int
	foreign bool   // host-allocator memory (C memory under the C ABI)
	free    func() // gives foreign memory back, once, when the block leaves the cache
	owner   any
	shared  atomic.Bool // its address left the process: never recycled
	epoch   uint32      // the collection count when it was last cached
}

// release lets the block go for good.
func (b *block) release() {
	if b.free != nil {
		b.free()
	}
}

// MemoryStats describes the CPU backend's cached storage (requests below
// cacheMinBytes bypass the cache and are not counted). Bytes are block
// sizes, not the tensors' own.
type MemoryStats struct {
	InUse       int64 // bytes of blocks held by live storages
	PeakInUse   int64
	Cached      int64 // bytes of free blocks kept for reuse
	Limit       int64 // the most Cached may hold (CacheLimit)
	Allocated   int64 // bytes of blocks ever taken from the Go heap or the host allocator
	Reused      int64 // bytes of blocks handed out again from the free lists
	Hits        int64 // storages served from the free lists
	Misses      int64 // storages that took a new block
	Returned    int64 // blocks that came back (Release or collection)
	Dropped     int64 // blocks let go: over the limit, shared, unused for two collections or emptied
	Collections int64 // collections the allocator started to find dead storages
}

// memCache is the one cache of the backend.
var memCache = blockCache{limit: -1}

type blockCache struct {
	mu    sync.Mutex
	free  [64 * classesPerOctave][]*block
	limit int64 // -1 until read from the configuration
	stats MemoryStats
	epoch uint32

	since   atomic.Int64 // bytes handed out since the last collection started here
	trigger atomic.Int64
	running atomic.Bool
	seen    gcpace.Seen // collections, ours or another pacer's
}

// defaultCacheLimit is the limit without configuration: 1 GiB, or an
// eighth of the machine's memory where that is less.
func defaultCacheLimit() int64 { return min(1<<30, maxAllocBytes()/8) }

// limitLocked reads WEBTENSOR_CPU_CACHE_BYTES once.
func (c *blockCache) limitLocked() int64 {
	if c.limit < 0 {
		c.limit = defaultCacheLimit()
		if v, err := strconv.ParseInt(config.String("WEBTENSOR_CPU_CACHE_BYTES"), 10, 64); err == nil && v >= 0 {
			c.limit = v
		}
	}
	return c.limit
}

// SetCacheLimit sets the most bytes the CPU backend keeps in free blocks
// for reuse and returns the previous limit; 0 turns the cache off (every
// storage is a new allocation, as without it). Blocks over the new limit
// are dropped. It overrides WEBTENSOR_CPU_CACHE_BYTES.
func SetCacheLimit(bytes int64) int64 {
	bytes = max(bytes, 0)
	c := &memCache
	c.mu.Lock()
	old := c.limitLocked()
	c.limit = bytes
	var drop []*block
	for cl := len(c.free) - 1; cl >= 0 && c.stats.Cached > bytes; cl-- {
		for len(c.free[cl]) > 0 && c.stats.Cached > bytes {
			drop = append(drop, c.popLocked(cl))
		}
	}
	c.mu.Unlock()
	releaseAll(drop)
	return old
}

// MemoryStats reports the CPU backend's cached storage.
func (*Backend) MemoryStats() MemoryStats {
	c := &memCache
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Limit = c.limitLocked()
	return s
}

// ResetPeak starts PeakInUse again from the bytes live storages hold now,
// so that a caller can read the peak of one piece of work (a tiled decode
// against a whole one).
func (*Backend) ResetPeak() {
	c := &memCache
	c.mu.Lock()
	c.stats.PeakInUse = c.stats.InUse
	c.mu.Unlock()
}

// MemoryInUse is the bytes live storages hold (what a trace's memory
// counter shows).
func (b *Backend) MemoryInUse() int64 { return b.MemoryStats().InUse }

// EmptyCache lets every free block go, so the backend holds only the memory
// of live storages. It starts no collection: tensors dropped but not yet
// collected keep theirs until one runs.
func (*Backend) EmptyCache() error {
	emptyCache()
	return nil
}

// emptyCache is EmptyCache, for the allocator's own retry (checkFresh).
func emptyCache() {
	c := &memCache
	c.mu.Lock()
	var drop []*block
	for cl := range c.free {
		for len(c.free[cl]) > 0 {
			drop = append(drop, c.popLocked(cl))
		}
	}
	c.mu.Unlock()
	releaseAll(drop)
}

// MarkShared records that storage's memory was handed to code outside the
// process's control (a zero-copy DLPack export): it is freed when the
// storage goes, never reused for another tensor. Other storage is ignored.
func MarkShared(s core.Storage) {
	if b, ok := s.(*buffer); ok {
		if blk := b.blk.Load(); blk != nil {
			blk.shared.Store(true)
		}
	}
}

func releaseAll(bs []*block) {
	for _, b := range bs {
		b.release()
	}
}

// popLocked removes the top block of class cl to let it go.
func (c *blockCache) popLocked(cl int) *block {
	l := c.free[cl]
	b := l[len(l)-1]
	l[len(l)-1] = nil
	c.free[cl] = l[:len(l)-1]
	c.stats.Cached -= int64(len(b.mem))
	c.stats.Dropped++
	return b
}

// take returns a free block of class cl with the given kind of memory, or
// nil.
func (c *blockCache) take(cl int, foreign bool) *block {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.free[cl]
	if len(l) == 0 || l[len(l)-1].foreign != foreign {
		c.stats.Misses++
		return nil
	}
	b := l[len(l)-1]
	l[len(l)-1] = nil
	c.free[cl] = l[:len(l)-1]
	size := int64(len(b.mem))
	c.stats.Cached -= size
	c.stats.Hits++
	c.stats.Reused += size
	c.useLocked(size)
	return b
}

func (c *blockCache) useLocked(size int64) {
	c.stats.InUse += size
	c.stats.PeakInUse = max(c.stats.PeakInUse, c.stats.InUse)
}

// put takes a block back from a storage that is gone.
func (c *blockCache) put(b *block) {
	size := int64(len(b.mem))
	c.mu.Lock()
	c.stats.InUse -= size
	c.stats.Returned++
	keep := !b.shared.Load() && b.foreign == (hostAlloc != nil) && c.stats.Cached+size <= c.limitLocked()
	if keep {
		b.epoch = c.epoch
		c.free[b.class] = append(c.free[b.class], b)
		c.stats.Cached += size
	} else {
		c.stats.Dropped++
	}
	c.mu.Unlock()
	if !keep {
		b.release()
	}
}

// returnBlock is the cleanup of a pooled storage.
func returnBlock(b *block) { memCache.put(b) }

// cachedBuffer returns storage of n bytes from the cache; ok is false when
// the cache is off or n is too small for it.
func cachedBuffer(n int) (buf *buffer, ok bool, err error) {
	c := &memCache
	if n < cacheMinBytes {
		return nil, false, nil
	}
	c.mu.Lock()
	limit := c.limitLocked()
	c.mu.Unlock()
	if limit == 0 {
		return nil, false, nil
	}
	cl, size := sizeClass(n)
	foreign := hostAlloc != nil
	blk, dirty := c.take(cl, foreign), true
	if blk == nil {
		if blk, dirty, err = newBlock(cl, size); err != nil {
			return nil, true, err
		}
		c.mu.Lock()
		c.stats.Allocated += int64(size)
		c.useLocked(int64(size))
		c.mu.Unlock()
	}
	if poisonCache {
		fillPoison(blk.mem)
		dirty = true
	}
	b := &buffer{buf: blk.mem[:n:n], foreign: blk.foreign, owner: blk.owner}
	b.blk.Store(blk)
	b.dirty.Store(dirty)
	b.cleanup = runtime.AddCleanup(b, returnBlock, blk)
	c.pace(size)
	return b, true, nil
}

// newBlock allocates a block of class cl; dirty says it is not zeroed.
func newBlock(cl, size int) (*block, bool, error) {
	if hostAlloc == nil {
		if err := checkFresh(size); err != nil {
			return nil, false, err
		}
		return &block{mem: alignedBytes(size), class: cl}, false, nil
	}
	m, err := hostAlloc(size)
	if err != nil {
		return nil, false, err
	}
	return &block{mem: m.Mem[:size:size], class: cl, foreign: true, free: m.Free, owner: m.Owner}, true, nil
}

// pace counts size bytes handed out and starts a collection once enough
// have been since the last one (see the top of the file); unpace takes
// back the bytes of a block released explicitly, which the collector need
// not find (never below zero: the block may predate the count).
func (c *blockCache) unpace(size int) {
	for {
		n := c.since.Load()
		if c.since.CompareAndSwap(n, max(0, n-int64(size))) {
			return
		}
	}
}

func (c *blockCache) pace(size int) {
	trigger := c.trigger.Load()
	if trigger == 0 {
		trigger = gcMinTrigger
	}
	if c.since.Add(int64(size)) < trigger || !c.running.CompareAndSwap(false, true) {
		return
	}
	if c.seen.Collected() { // another pacer collected meanwhile: that one served
		c.since.Store(0)
		c.running.Store(false)
		return
	}
	go c.collect()
}

func (c *blockCache) collect() {
	c.since.Store(0)
	runtime.GC()
	c.seen.Note()
	c.mu.Lock()
	c.stats.Collections++
	c.epoch++
	drop := c.staleLocked()
	c.trigger.Store(max(gcMinTrigger, c.stats.InUse))
	c.mu.Unlock()
	releaseAll(drop)
	c.running.Store(false)
}

// staleLocked removes the blocks cached before the last two collections:
// no allocation wanted them for that long. Lists are stacks, so they sit at
// the bottom.
func (c *blockCache) staleLocked() []*block {
	var drop []*block
	for cl, l := range c.free {
		k := 0
		for k < len(l) && c.epoch-l[k].epoch > 2 {
			k++
		}
		if k == 0 {
			continue
		}
		drop = append(drop, l[:k]...)
		for _, b := range l[:k] {
			c.stats.Cached -= int64(len(b.mem))
		}
		c.stats.Dropped += int64(k)
		n := copy(l, l[k:])
		clear(l[n:])
		c.free[cl] = l[:n]
	}
	return drop
}

// poisonCache makes every cached storage start as garbage marked dirty,
// for the tests that prove no kernel reads an output it did not write.
var poisonCache bool

func fillPoison(b []byte) {
	for i := range b {
		b[i] = 0xff // NaN in every float dtype, -1 in every integer one
	}
}

// fillsOutputs names the ops whose CPU kernels write every element of each
// output core allocated for them, so a recycled block is handed to them
// without being cleared. TestOpsMatchReferenceOnRecycledMemory runs the
// shared suite with every cached block full of NaN bytes, which any element
// such a kernel skips would carry into its result. Other kernels, plugins'
// and ops that allocate their own outputs read cleared memory as before.
var fillsOutputs = setOf(
	// elementwise (ew_plan.go and the float64 paths write every element)
	"add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum", "atan2",
	"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "where",
	"neg", "abs", "sign", "square", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "reciprocal",
	"sin", "cos", "tan", "tanh", "erf", "sigmoid", "relu", "gelu", "_gelu_backward",
	"silu", "floor", "ceil", "round", "clamp", "nan_to_num", "logical_not", "isnan", "isinf",
	"contiguous", "cast",
	// products and convolutions (a product with beta 0 stores; col2im clears first)
	"matmul", "conv2d", "conv1d", "conv_transpose2d", "_conv_transpose2d_input_grad", "_conv2d_weight_grad",
	// pooling
	"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
	"_max_pool2d_backward", "_avg_pool2d_backward", "_adaptive_avg_pool2d_backward",
	// the rows and reductions of a training step
	"softmax", "log_softmax", "_softmax_backward", "_log_softmax_backward",
	"layer_norm", "_layer_norm_backward", "sum", "mean", "_slice_grad", "_pointwise_loss_backward",
	// a diffusion UNet's forward: every row, group and pixel is written
	"group_norm", "scaled_dot_product_attention", "interpolate",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// claimOutputs wraps a kernel of fillsOutputs: its outputs' recycled
// blocks are not cleared first. An output whose storage is also an input's
// is left alone (the kernel reads it).
func claimOutputs(k core.Kernel) core.Kernel {
	return func(c *core.KernelCall) error {
		for _, o := range c.Outputs {
			b, ok := o.Storage().(*buffer)
			if !ok || !b.dirty.Load() || sharesStorage(o, c.Inputs) {
				continue
			}
			b.claim()
		}
		return k(c)
	}
}

func sharesStorage(t *core.Tensor, ins []*core.Tensor) bool {
	for _, in := range ins {
		if in != nil && in.Storage() == t.Storage() {
			return true
		}
	}
	return false
}
