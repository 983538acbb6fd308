package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// freshCache empties the cache and sets its limit for one test.
// Earlier tests' dead storages are collected and returned first, and the
// counters start at zero, so a test counts only its own storages.
func freshCache(t *testing.T, limit int64) {
	t.Helper()
	drainCollected()
	require.NoError(t, theBackend.EmptyCache())
	old := SetCacheLimit(limit)
	memCache.mu.Lock()
	memCache.stats = MemoryStats{InUse: memCache.stats.InUse, PeakInUse: memCache.stats.InUse}
	memCache.mu.Unlock()
	t.Cleanup(func() {
		SetCacheLimit(old)
		_ = theBackend.EmptyCache()
	})
}

// drainCollected collects until no more dead storage comes back (cleanups
// run on their own goroutine, after the collection that found them).
func drainCollected() {
	last, still := int64(-1), 0
	for range 200 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		n := theBackend.MemoryStats().Returned
		if n == last {
			if still++; still == 3 {
				return
			}
		} else {
			still = 0
		}
		last = n
	}
}

func addrOf(s core.Storage) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(s.(*buffer).buf)))
}

func alloc(t *testing.T, bytes int) *buffer {
	t.Helper()
	s, err := theBackend.Alloc(core.U8, bytes)
	require.NoError(t, err)
	return s.(*buffer)
}

func TestSizeClassesBoundTheSlack(t *testing.T) {
	prev := -1
	for n := 1; n < 1<<22; n += 1 + n/97 {
		cl, size := sizeClass(n)
		require.GreaterOrEqual(t, size, n)
		if n >= 8 {
			require.LessOrEqual(t, float64(size), 1.25*float64(n)+1, "n %d", n)
		}
		require.GreaterOrEqual(t, cl, prev, "classes grow with n")
		c2, s2 := sizeClass(size)
		require.Equal(t, [2]int{cl, size}, [2]int{c2, s2}, "a class's size is in the class")
		prev = cl
	}
	_, size := sizeClass(1 << 20)
	assert.Equal(t, 1<<20, size)
}

func TestReleasedStorageIsReusedAndReadsAsZeros(t *testing.T) {
	freshCache(t, 1<<30)
	a := alloc(t, 5000)
	for i := range a.Host() {
		a.Host()[i] = 7
	}
	at := addrOf(a)
	a.Release()
	s := theBackend.MemoryStats()
	assert.EqualValues(t, 1, s.Returned)
	assert.Positive(t, s.Cached)

	b := alloc(t, 4900) // the same class
	assert.Equal(t, at, addrOf(b), "the released block is handed out again")
	assert.True(t, b.dirty.Load())
	assert.Equal(t, make([]byte, 4900), b.Host(), "and reads as zeros")
	s = theBackend.MemoryStats()
	assert.EqualValues(t, 1, s.Hits)
	assert.Zero(t, s.Cached)
	_, size := sizeClass(5000)
	assert.EqualValues(t, size, s.InUse)
	b.Release()
	assert.Zero(t, theBackend.MemoryStats().InUse)
	b.Release() // twice is harmless
	assert.EqualValues(t, 2, theBackend.MemoryStats().Returned)
}

// A storage nobody holds comes back when the collector finds it.
func TestCollectedStorageIsReused(t *testing.T) {
	freshCache(t, 1<<30)
	func() { _ = alloc(t, 1<<16) }()
	waitFor(t, func() bool { return theBackend.MemoryStats().Returned == 1 })
	b := alloc(t, 1<<16)
	assert.EqualValues(t, 1, theBackend.MemoryStats().Hits)
	runtime.KeepAlive(b)
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for range 200 {
		runtime.GC()
		if ok() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the storage was not returned")
}

// A kernel that writes its whole output takes a recycled block as it is;
// any other reads cleared memory.
func TestKernelsClaimOnlyOutputsTheyFill(t *testing.T) {
	freshCache(t, 1<<30)
	x := core.Full(core.Shape{4096}, 2, core.F32)
	poisonCache = true
	defer func() { poisonCache = false }()
	y := core.Call1("add", nil, x, x)
	require.NoError(t, y.Err())
	b := y.Storage().(*buffer)
	assert.False(t, b.dirty.Load())
	v, err := y.Float64s()
	require.NoError(t, err)
	assert.Equal(t, 4.0, v[0])
	assert.Equal(t, 4.0, v[4095])

	// scatter_add accumulates into its output: not in fillsOutputs.
	assert.False(t, fillsOutputs["scatter_add"])
	z := core.Call1("zeros", core.Attrs{"shape": []int{4096}, "dtype": core.F32})
	require.NoError(t, z.Err())
	v, err = z.Float64s()
	require.NoError(t, err)
	assert.Equal(t, make([]float64, 4096), v)
}

func TestFillsOutputsNamesRegisteredOps(t *testing.T) {
	for name := range fillsOutputs {
		assert.NotNil(t, core.LookupKernel("cpu", name), name)
	}
}

// Memory whose address left the process is freed, never reused; so is
// borrowed memory, which the cache never owned.
func TestSharedAndBorrowedMemoryIsNeverRecycled(t *testing.T) {
	freshCache(t, 1<<30)
	a := alloc(t, 8192)
	at := addrOf(a)
	MarkShared(a)
	a.Release()
	s := theBackend.MemoryStats()
	assert.Zero(t, s.Cached)
	assert.EqualValues(t, 1, s.Dropped)
	b := alloc(t, 8192)
	assert.NotEqual(t, at, addrOf(b))
	b.Release()

	released := 0
	mem := make([]byte, 8192)
	w := WrapHost(mem, func() { released++ })
	w.Release()
	assert.Equal(t, 1, released)
	c := alloc(t, 8192)
	assert.NotEqual(t, uintptr(unsafe.Pointer(&mem[0])), addrOf(c))
	assert.EqualValues(t, 2, theBackend.MemoryStats().Returned, "the wrapped memory never entered the cache")
}

// fakeHost is a host allocator that counts its blocks.
type fakeHost struct {
	mu            sync.Mutex
	allocs, frees int
	live          map[uintptr]bool
}

func (f *fakeHost) alloc(n int) (HostMemory, error) {
	mem := alignedBytes(n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	for i := range mem {
		mem[i] = 0xab // C memory is not zeroed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocs++
	f.live[p] = true
	return HostMemory{Mem: mem, Free: func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.live[p] {
			panic("freed twice")
		}
		delete(f.live, p)
		f.frees++
	}}, nil
}

func TestHostAllocatorBlocksAreCachedAndFreedOnce(t *testing.T) {
	f := &fakeHost{live: map[uintptr]bool{}}
	SetHostAllocator(f.alloc)
	defer SetHostAllocator(nil)
	freshCache(t, 1<<30)

	a := alloc(t, 3000)
	assert.True(t, a.foreign)
	assert.Equal(t, make([]byte, 3000), a.Host(), "fresh host memory reads as zeros")
	a.Release()
	b := alloc(t, 3000)
	assert.Equal(t, 1, f.allocs, "reused")
	MarkShared(b)
	b.Release()
	assert.Equal(t, 1, f.frees, "shared: freed at once")

	c, d := alloc(t, 3000), alloc(t, 70000)
	c.Release()
	d.Release()
	assert.Equal(t, 3, f.allocs)
	assert.Equal(t, 1, f.frees)
	require.NoError(t, theBackend.EmptyCache())
	assert.Equal(t, 3, f.frees, "EmptyCache frees every cached block")
	assert.Empty(t, f.live)
	assert.Zero(t, theBackend.MemoryStats().Cached)
}

func TestCacheLimit(t *testing.T) {
	freshCache(t, 10000)
	a, b := alloc(t, 6000), alloc(t, 6000)
	a.Release()
	b.Release()
	s := theBackend.MemoryStats()
	_, size := sizeClass(6000)
	assert.EqualValues(t, size, s.Cached, "the second block is over the limit")
	assert.EqualValues(t, 1, s.Dropped)
	assert.EqualValues(t, 10000, s.Limit)

	SetCacheLimit(100)
	assert.Zero(t, theBackend.MemoryStats().Cached, "lowering the limit drops what is over it")

	SetCacheLimit(0)
	c := alloc(t, 6000)
	assert.Nil(t, c.blk.Load(), "limit 0: no cache at all")
	assert.Equal(t, make([]byte, 6000), c.Host())
}

// Blocks no allocation wanted for two collections go.
func TestStaleBlocksAreDropped(t *testing.T) {
	freshCache(t, 1<<30)
	alloc(t, 1<<15).Release()
	for range 3 {
		require.NotZero(t, theBackend.MemoryStats().Cached)
		memCache.running.Store(true)
		memCache.collect()
	}
	assert.Zero(t, theBackend.MemoryStats().Cached)
}

// Many goroutines allocating, releasing, dropping and computing: results
// stay right and the counts add up (run with -race).
func TestCacheUnderConcurrentUse(t *testing.T) {
	freshCache(t, 1<<30)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				n := 256 + 64*((g*50+i)%37)
				x := core.Full(core.Shape{n}, float64(g), core.F32)
				y := core.Call1("mul", nil, x, x)
				v, err := y.Float64s()
				if err != nil {
					errs <- err
					return
				}
				for _, e := range v {
					if e != float64(g*g) {
						errs <- fmt.Errorf("goroutine %d: got %v, want %d", g, e, g*g)
						return
					}
				}
				if i%2 == 0 {
					y.Release()
				}
				x.Release()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := theBackend.MemoryStats()
	assert.Positive(t, s.Hits)
	assert.GreaterOrEqual(t, s.InUse, int64(0))
	assert.LessOrEqual(t, s.Cached, s.Allocated)
}
