package cpu

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/config"
)

// A Go allocation larger than the machine's memory is a fatal runtime error,
// not a recoverable panic, so the CPU backend refuses it up front with an
// error that names the size. The limit is the physical memory where the
// platform tells us (Linux), else 1 TiB; WEBTENSOR_CPU_MAX_BYTES overrides it.

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
		if total := memTotal(); total > 0 {
			limit = total
		}
	})
	return limit
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
