package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withThreads runs fn with the pool set to n threads.
func withThreads(n int, fn func()) {
	saved := threadsSet.Load()
	SetNumThreads(n)
	defer threadsSet.Store(saved)
	fn()
}

// cover runs parallelFor and counts the visits of every index.
func cover(t *testing.T, n, cost int) []int32 {
	t.Helper()
	seen := make([]int32, n)
	parallelFor(n, cost, func(lo, hi int) {
		require.LessOrEqual(t, 0, lo)
		require.LessOrEqual(t, hi, n)
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&seen[i], 1)
		}
	})
	return seen
}

func TestParallelForVisitsEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		withThreads(threads, func() {
			for _, n := range []int{0, 1, 2, 7, 100, parallelMin + 1, 1 << 20} {
				for _, cost := range []int{1, 64} {
					for i, c := range cover(t, n, cost) {
						require.Equal(t, int32(1), c, "threads %d n %d cost %d index %d", threads, n, cost, i)
					}
				}
			}
		})
	}
}

// Small work runs inline, in one call: splitting it would cost more than
// it saves.
func TestSmallWorkStaysOnTheCaller(t *testing.T) {
	withThreads(4, func() {
		calls := 0
		parallelFor(parallelMin-1, 1, func(lo, hi int) {
			calls++
			assert.Equal(t, 0, lo)
			assert.Equal(t, parallelMin-1, hi)
		})
		assert.Equal(t, 1, calls)
	})
}

// Chunk bounds depend on n and the thread count only, so that results
// that depend on them (partial sums) are reproducible.
func TestChunksAreDeterministic(t *testing.T) {
	withThreads(3, func() {
		bounds := func() [][2]int {
			var mu sync.Mutex
			var got [][2]int
			parallelFor(1000, parallelMin, func(lo, hi int) {
				mu.Lock()
				got = append(got, [2]int{lo, hi})
				mu.Unlock()
			})
			return got
		}
		assert.ElementsMatch(t, [][2]int{{0, 334}, {334, 668}, {668, 1000}}, bounds())
		assert.ElementsMatch(t, bounds(), bounds())
	})
}

// parallelForTasks hands out one index per call, each exactly once, and a
// thread that is held up takes fewer of them: while the first task claimed
// stalls its thread, the other thread claims every task that is left (one
// chunk per thread would have left three of them behind the stall).
func TestParallelForTasksBalancesSlowThreads(t *testing.T) {
	withThreads(2, func() {
		const n = 8
		var mu sync.Mutex
		seen := make([]int, n)
		duringStall := 0
		var stalled, stallOver atomic.Bool
		parallelForTasks(n, parallelMin, func(lo, hi int) {
			require.Equal(t, lo+1, hi, "a task is one index")
			if stalled.CompareAndSwap(false, true) {
				time.Sleep(200 * time.Millisecond)
				stallOver.Store(true)
			} else if !stallOver.Load() {
				mu.Lock()
				duringStall++
				mu.Unlock()
			}
			mu.Lock()
			seen[lo]++
			mu.Unlock()
		})
		for i, c := range seen {
			assert.Equal(t, 1, c, "task %d", i)
		}
		assert.Equal(t, n-1, duringStall, "tasks run by the other thread during the stall")
	})
}

// A parallelFor inside a chunk finds the helpers busy and runs its own
// chunks; it must neither deadlock nor miss an index.
func TestNestedParallelFor(t *testing.T) {
	withThreads(4, func() {
		var total atomic.Int64
		parallelFor(16, parallelMin, func(lo, hi int) {
			for range hi - lo {
				parallelFor(1000, parallelMin, func(lo, hi int) { total.Add(int64(hi - lo)) })
			}
		})
		assert.Equal(t, int64(16*1000), total.Load())
	})
}

// Many goroutines running ops at once share the pool.
func TestConcurrentParallelFor(t *testing.T) {
	withThreads(3, func() {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					for i, c := range cover(t, 5000+g, parallelMin) {
						if c != 1 {
							t.Errorf("index %d visited %d times", i, c)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
	})
}

// A panic in a chunk, on a helper or the caller, reaches the caller.
func TestParallelForPanicReachesTheCaller(t *testing.T) {
	withThreads(2, func() {
		for _, bad := range []int{0, 999} {
			assert.PanicsWithValue(t, "boom", func() {
				parallelFor(1000, parallelMin, func(lo, hi int) {
					if lo <= bad && bad < hi {
						panic("boom")
					}
				})
			})
		}
		assert.Equal(t, int32(1), cover(t, 1000, parallelMin)[500], "the pool still works")
	})
}

func TestNumThreads(t *testing.T) {
	withThreads(0, func() {
		assert.Equal(t, runtime.GOMAXPROCS(0), NumThreads(), "default")
		SetNumThreads(3)
		assert.Equal(t, 3, NumThreads())
		SetNumThreads(-1)
		assert.Equal(t, runtime.GOMAXPROCS(0), NumThreads(), "n <= 0 restores the default")
	})
}

func TestNumThreadsFromTheEnvironment(t *testing.T) {
	saved := threadsSet.Load()
	defer threadsSet.Store(saved)
	for value, want := range map[string]int32{"5": 5, " 2 ": 2, "0": 0, "-3": 0, "many": 0, "": 0} {
		threadsSet.Store(0)
		t.Setenv("WEBTENSOR_NUM_THREADS", value)
		readThreadsEnv()
		assert.Equal(t, want, threadsSet.Load(), "WEBTENSOR_NUM_THREADS=%q", value)
	}
}
