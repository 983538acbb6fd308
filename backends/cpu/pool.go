package cpu

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/webtensor/webtensor/core/config"
)

// One worker pool serves every kernel of the backend, as PyTorch's intra-op
// pool does: NumThreads goroutines at most work on one op, the caller
// being one of them. A goroutine per chunk (what parallelFor did before)
// cost about 1 µs per chunk to start, which set the smallest op worth
// splitting; parked helpers wake in a fraction of that.
//
// The caller always takes chunks itself and helpers only join: a kernel
// that calls parallelFor from inside a chunk (a convolution's products)
// finds the helpers busy and runs its chunks alone instead of waiting for
// them, so nesting can neither deadlock nor oversubscribe the cores.

// threadsSet is the count SetNumThreads chose; 0 follows GOMAXPROCS.
var threadsSet atomic.Int32

var threadsFromEnv sync.Once

// SetNumThreads sets how many threads the CPU backend's kernels use, like
// torch.set_num_threads: 1 runs every op on the calling goroutine, n <= 0
// restores the default (GOMAXPROCS, which follows the process's CPU
// quota). It overrides WEBTENSOR_NUM_THREADS and takes effect from the
// next op.
func SetNumThreads(n int) {
	threadsFromEnv.Do(func() {}) // the call wins over the variable, even if it comes first
	threadsSet.Store(int32(max(n, 0)))
}

// NumThreads is the number of threads an op may use.
func NumThreads() int {
	threadsFromEnv.Do(readThreadsEnv)
	if n := threadsSet.Load(); n > 0 {
		return int(n)
	}
	return runtime.GOMAXPROCS(0)
}

// readThreadsEnv applies WEBTENSOR_NUM_THREADS once. A value that is not a
// positive integer is ignored rather than fatal: the library has no error
// to return at this point, and the default is always safe.
func readThreadsEnv() {
	s := strings.TrimSpace(config.String("WEBTENSOR_NUM_THREADS"))
	if s == "" {
		return
	}
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		threadsSet.Store(int32(n))
	}
}

// parallelMin is the work (n*cost) below which parallelFor runs inline:
// about 30 µs of an add, enough that waking a helper (a few µs) and the
// second core's share of memory bandwidth pay for themselves.
const parallelMin = 1 << 15

// poolJob is one parallelFor call: chunks are claimed in order from next,
// by the caller and by whichever helpers arrive while some are left.
type poolJob struct {
	fn     func(lo, hi int)
	n      int
	chunk  int
	chunks int64
	next   atomic.Int64
	refs   atomic.Int32 // the caller and each offer sent; the last one out recycles the job
	done   sync.WaitGroup
	left   atomic.Int64 // chunks not finished yet: what a spinning caller watches
	mu     sync.Mutex
	failed any // the first panic of a chunk, re-raised on the caller's goroutine
}

// release drops one reference; the last recycles the job, so a helper
// that takes an offer after the op ended still finds it intact.
func (j *poolJob) release() {
	if j.refs.Add(-1) == 0 {
		j.fn = nil
		jobPool.Put(j)
	}
}

// run claims and runs chunks until none is left.
func (j *poolJob) run() {
	for {
		c := j.next.Add(1) - 1
		if c >= j.chunks {
			return
		}
		j.runChunk(int(c))
	}
}

func (j *poolJob) runChunk(c int) {
	// Done before left: a caller that saw left reach 0 finds the
	// WaitGroup at 0 too and does not park.
	defer j.left.Add(-1)
	defer j.done.Done()
	// A panic in a helper would kill the process; carry it back to the
	// caller's goroutine, where core turns it into an error.
	defer func() {
		if r := recover(); r != nil {
			j.mu.Lock()
			if j.failed == nil {
				j.failed = r
			}
			j.mu.Unlock()
		}
	}()
	lo := c * j.chunk
	j.fn(lo, min(lo+j.chunk, j.n))
}

// workPool hands jobs to parked helpers. The channel holds at most one
// offer per helper; an offer nobody takes in time is found finished and
// dropped.
type workPool struct {
	mu      sync.Mutex
	helpers int
	offers  chan *poolJob
}

var pool = workPool{offers: make(chan *poolJob, 256)}

// ensure starts helpers until there are n of them. Helpers never stop:
// a parked goroutine costs a few KB and nothing else.
func (p *workPool) ensure(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; p.helpers < min(n, cap(p.offers)); p.helpers++ {
		go func() {
			for {
				j := p.take()
				j.run()
				j.release()
			}
		}()
	}
}

var (
	helpersStarted atomic.Int32
	jobPool        = sync.Pool{New: func() any { return new(poolJob) }}
)

// parallelFor splits [0, n) into one chunk per thread when the work (n
// times cost, the work per index in adds) is large enough to pay for it,
// and runs fn on each chunk; otherwise it calls fn(0, n). Chunk bounds
// depend only on n and NumThreads, never on timing.
func parallelFor(n, cost int, fn func(lo, hi int)) {
	parallelChunks(n, 0, cost, fn)
}

// parallelForTasks is parallelFor with every index its own chunk, claimed
// by whichever thread is free: for a few tasks of a large op (a product's
// row blocks), more of them than threads, so that a core the machine's
// other tenants slow down takes fewer of them instead of holding the op
// at its end. Which thread runs a task depends on timing; what a task
// computes does not.
func parallelForTasks(n, cost int, fn func(lo, hi int)) {
	parallelChunks(n, 1, cost, fn)
}

// parallelChunks runs fn over [0, n) in chunks of chunk indices (0: one
// chunk per thread).
func parallelChunks(n, chunk, cost int, fn func(lo, hi int)) {
	threads := NumThreads()
	if threads <= 1 || n < 2 || n*cost < parallelMin {
		fn(0, n)
		return
	}
	workers := min(threads, n)
	if chunk <= 0 {
		chunk = (n + workers - 1) / workers
	}
	if int(helpersStarted.Load()) < workers-1 {
		pool.ensure(workers - 1)
		helpersStarted.Store(int32(pool.helpers))
	}
	j := jobPool.Get().(*poolJob)
	j.fn, j.n = fn, n
	j.chunk = chunk
	j.chunks = int64((n + j.chunk - 1) / j.chunk)
	j.next.Store(0)
	j.failed = nil
	j.done.Add(int(j.chunks))
	j.left.Store(j.chunks)
	j.refs.Store(1)
	for range min(j.chunks, int64(workers)) - 1 {
		j.refs.Add(1)
		select {
		case pool.offers <- j:
		default: // every helper already has an offer: the caller does more
			j.refs.Add(-1)
		}
	}
	j.run()
	if j.left.Load() > 0 {
		spinUntil(false, func() bool { return j.left.Load() == 0 })
	}
	j.done.Wait()
	failed := j.failed
	j.release()
	if failed != nil {
		panic(failed)
	}
}

// poolSpin is how long a helper that finished a job, or a caller whose
// helpers still work, polls before it parks. A parked goroutine's thread
// sleeps in the kernel, and on a virtual machine waking it means waking a
// halted vCPU: 80 µs on average on the 2-vCPU machine these benchmarks
// run on, measured as the helper's start delay in a 1024 product's
// sections, and longer than many ops' share of the second core (a MiniLM
// encode's sections ran mostly on the caller alone, 1.03 cores busy on
// average at 2 threads). OpenMP's workers, which PyTorch's intra-op pool
// uses, spin for the same reason; back-to-back ops then find their
// helpers awake, and an idle pool parks after this long.
const poolSpin = 200 * time.Microsecond

// spinUntil polls done for up to poolSpin and reports whether it became
// true. A helper (yield) lets other goroutines on its processor run
// between rounds; a caller does not: its goroutine may be locked to its
// thread (every call from C through the ABI is), and runtime.Gosched on a
// locked thread hands the processor to another thread and back, two
// futex wake-ups (a relu over 100k floats from Python took 99 us with it,
// 48 without).
func spinUntil(yield bool, done func() bool) bool {
	deadline := time.Now().Add(poolSpin)
	for {
		for range 32 {
			if done() {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		if yield {
			runtime.Gosched()
		}
	}
}

// take is the next job offered to a helper: polled for a while after the
// last one, then waited for.
func (p *workPool) take() *poolJob {
	var j *poolJob
	if spinUntil(true, func() bool {
		select {
		case j = <-p.offers:
			return true
		default:
			return false
		}
	}) {
		return j
	}
	return <-p.offers
}
