package cpu

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
)

// A Go allocation larger than the machine's memory is a fatal runtime error,
// not a recoverable panic, so the CPU backend refuses it up front with an
// error that names the size. The limit is the least of what the machine and
// the process may hold where the platform tells us: the physical memory
// (Linux's MemTotal), the cgroup's memory limit (a container's: memory.max,
// or v1's memory.limit_in_bytes) and the address-space rlimit (ulimit -v);
// else 1 TiB. WEBTENSOR_CPU_MAX_BYTES overrides it. A large allocation the
// Go heap must make afresh (checkFresh) is held to what the limit leaves
// beside the heap in use, not to the limit alone.

var (
	limitOnce sync.Once
	limit     int64
)

func maxAllocBytes() int64 {
	limitOnce.Do(func() {
		limit = 1 << 40
		if v, err := strconv.ParseInt(config.String("WEBTENSOR_CPU_MAX_BYTES"), 10, 64); err == nil && v > 0 {
			limit = v
			return
		}
		known := int64(0)
		for _, l := range []int64{memTotal(), cgroupLimit(), addressSpaceLimit()} {
			if l > 0 && (known == 0 || l < known) {
				known = l
			}
		}
		if known > 0 {
			limit = known
		}
	})
	return limit
}

// cgroupLimit is the memory limit of this process's cgroup (0: none or
// unknown), read from the files /proc/self/cgroup points at.
func cgroupLimit() int64 {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var least int64
	for _, p := range cgroupLimitFiles(string(raw)) {
		if b, err := os.ReadFile(p); err == nil {
			if v := parseMemoryLimit(string(b)); v > 0 && (least == 0 || v < least) {
				least = v
			}
		}
	}
	return least
}

// cgroupLimitFiles are the limit files of the groups a /proc/self/cgroup
// lists: v2's memory.max ("0::/path"), v1's memory.limit_in_bytes
// ("N:memory:/path"), and the mount's root for either (a container's
// namespace hides the path above it).
func cgroupLimitFiles(procSelfCgroup string) []string {
	var files []string
	for _, line := range strings.Split(procSelfCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := strings.TrimSuffix(parts[2], "/")
		switch {
		case parts[0] == "0" && parts[1] == "":
			files = append(files, "/sys/fs/cgroup"+path+"/memory.max", "/sys/fs/cgroup/memory.max")
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			files = append(files, "/sys/fs/cgroup/memory"+path+"/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
		}
	}
	return files
}

// parseMemoryLimit reads a cgroup limit file: "max" (none), or bytes, where
// v1 writes a number near 2^63 for none.
func parseMemoryLimit(s string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v <= 0 || v >= 1<<62 {
		return 0
	}
	return v
}

// memTotal reads MemTotal from /proc/meminfo (0 when unavailable).
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

func checkAlloc(bytes int) error {
	if int64(bytes) > maxAllocBytes() {
		return fmt.Errorf("cpu: cannot allocate %d bytes: more than the %d bytes of memory available (set WEBTENSOR_CPU_MAX_BYTES to change the limit)", bytes, maxAllocBytes())
	}
	return nil
}

// checkFresh refuses a Go heap allocation of size bytes (at least
// tempCheckMin: smaller ones cannot matter) that would take the heap past
// the limit. Before refusing, it gives back the cache's free blocks and
// collects once, as PyTorch's caching allocator frees its cache and
// retries before it reports running out of memory: dead tensors and idle
// blocks should not make an allocation fail.
func checkFresh(size int) error {
	if size < tempCheckMin {
		return nil
	}
	limit := maxAllocBytes()
	if int64(size) <= limit-heapInUse() {
		return nil
	}
	emptyCache()
	runtime.GC()
	if inUse := heapInUse(); int64(size) > limit-inUse {
		return fmt.Errorf("cpu: cannot allocate %d bytes: %d bytes of the %d-byte limit are in use "+
			"(free tensors you no longer need, or set WEBTENSOR_CPU_MAX_BYTES to change the limit)", size, inUse, limit)
	}
	return nil
}

// A kernel's temporaries (a float64 copy of an operand, an index map) are
// checked as well: a temporary can be larger than the tensors it serves (a
// broadcast view holds few bytes; its float64 copy eight per element), and
// an allocation the machine cannot back aborts the process. Kernels build
// temporaries deep inside helpers that return no error, so a refusal
// panics with a *tempError that the kernel wrapper (guardTemps) turns back
// into the kernel's error; any other panic goes on as before.

// tempCheckMin is the size below which a temporary is not checked: reading
// the heap statistics costs microseconds, small temporaries cannot matter.
const tempCheckMin = 64 << 20

type tempError struct {
	bytes, inUse, limit int64
	n                   int
	elem                string
}

func (e *tempError) Error() string {
	return fmt.Sprintf("cpu: a temporary of %d %s elements (%d bytes) does not fit: %d bytes of the %d-byte limit are in use (set WEBTENSOR_CPU_MAX_BYTES to change the limit)",
		e.n, e.elem, e.bytes, e.inUse, e.limit)
}

// checkTemp refuses a temporary of n elements of size bytes each when it
// would take the Go heap past the limit.
func checkTemp(n, size int, elem string) {
	bytes := int64(n) * int64(size)
	if bytes < tempCheckMin {
		return
	}
	limit, inUse := maxAllocBytes(), heapInUse()
	if bytes > limit-inUse {
		panic(&tempError{bytes: bytes, inUse: inUse, limit: limit, n: n, elem: elem})
	}
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

// heapInUse is the memory held by live Go objects (tensors in C memory,
// from the C ABI's allocator, are not counted).
func heapInUse() int64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(heapSample[0].Value.Uint64())
}

// tempF64 is a zeroed float64 temporary of n elements, checked.
func tempF64(n int) []float64 {
	checkTemp(n, 8, "float64")
	return make([]float64, n)
}

// tempF32 is a zeroed float32 temporary of n elements, checked.
func tempF32(n int) []float32 {
	checkTemp(n, 4, "float32")
	return make([]float32, n)
}

// tempI64 is a zeroed int64 temporary of n elements, checked.
func tempI64(n int) []int64 {
	checkTemp(n, 8, "int64")
	return make([]int64, n)
}

// tempInts is a zeroed int temporary of n elements, checked.
func tempInts(n int) []int {
	checkTemp(n, 8, "index")
	return make([]int, n)
}

// guardTemps makes a kernel return a refused temporary as its error.
func guardTemps(k core.Kernel) core.Kernel {
	return func(c *core.KernelCall) (err error) {
		defer func() {
			if r := recover(); r != nil {
				te, ok := r.(*tempError)
				if !ok {
					panic(r)
				}
				err = te
			}
		}()
		return k(c)
	}
}
